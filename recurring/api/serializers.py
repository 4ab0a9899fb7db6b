from __future__ import annotations

from rest_framework import serializers

from core.api.serializers import StrictChoiceField, StrictSerializer
from drafts.api.serializers import CreateDraftRequestSerializer
from recurring.models import RecurrenceInterval


class CreateRecurringTemplateRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=200, allow_null=True, allow_blank=True, required=False)
    interval = StrictChoiceField(choices=RecurrenceInterval.choices)
    firstRunAt = serializers.DateTimeField(
        allow_null=True, required=False, help_text="First run (default: now); later runs keep its wall-clock time"
    )
    timezone = serializers.CharField(
        max_length=64, allow_null=True, required=False, help_text="IANA time zone of the schedule (default UTC)"
    )
    draft = CreateDraftRequestSerializer(help_text="The draft each run creates (addressBookId may name an entry)")


class RefusalSerializer(serializers.Serializer):
    code = serializers.CharField()
    status = serializers.IntegerField()
    detail = serializers.CharField()
    runAt = serializers.DateTimeField()
    at = serializers.DateTimeField()


class RecurringTemplateSerializer(serializers.Serializer):
    """Schema of recurring.presenters.recurring_template_json."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    interval = serializers.ChoiceField(choices=RecurrenceInterval.choices)
    timezone = serializers.CharField()
    firstRunAt = serializers.DateTimeField()
    nextRunAt = serializers.DateTimeField(allow_null=True, help_text="Null while paused")
    lastRunAt = serializers.DateTimeField(allow_null=True)
    paused = serializers.BooleanField()
    draft = CreateDraftRequestSerializer()
    lastDraftId = serializers.UUIDField(allow_null=True)
    lastRefusal = RefusalSerializer(allow_null=True, help_text="The last run that made no draft, and why")
    refusedRuns = serializers.IntegerField()
    skippedRuns = serializers.IntegerField(help_text="Runs missed beyond the catch-up window")
    createdAt = serializers.DateTimeField()
    livemode = serializers.BooleanField(help_text="False for a test-mode object (made with a test key).")
