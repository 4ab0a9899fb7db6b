from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from rest_framework import serializers

from core.api.pagination import paged_envelope_serializer
from core.api.serializers import StrictBooleanField, StrictIntegerField, StrictSerializer
from outbound import MAX_URL_LENGTH
from webhooks.models import EventType

MAX_OVERLAP_HOURS = 24 * 7


class EventTypesField(serializers.ListField):
    child = serializers.CharField()

    def to_internal_value(self, data):
        names = super().to_internal_value(data)
        unknown = sorted({name for name in names if name not in EventType.values})
        if unknown:
            raise serializers.ValidationError(
                f"Unknown event types: {', '.join(unknown)}. Known: {', '.join(EventType.values)}.",
                code="invalid_event_type",
            )
        return names


class CreateWebhookRequestSerializer(StrictSerializer):
    url = serializers.CharField(max_length=MAX_URL_LENGTH, trim_whitespace=False)
    events = EventTypesField(required=False, allow_null=True, allow_empty=True, max_length=len(EventType.values) * 2)


class UpdateWebhookRequestSerializer(StrictSerializer):
    url = serializers.CharField(
        max_length=MAX_URL_LENGTH,
        trim_whitespace=False,
        required=False,
        help_text="A new HTTPS URL, checked like a new registration",
    )
    active = StrictBooleanField(required=False)
    events = EventTypesField(required=False, allow_null=True, allow_empty=True, max_length=len(EventType.values) * 2)


class WebhookSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    url = serializers.CharField()
    events = serializers.SerializerMethodField()
    active = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
    livemode = serializers.BooleanField(
        help_text="False for a test-mode endpoint: it gets only events of test objects."
    )
    previousSecretExpiresAt = serializers.SerializerMethodField(
        help_text="While a rotated-out secret still signs deliveries (beside the new one): until when; else null"
    )

    def get_previousSecretExpiresAt(self, webhook) -> datetime | None:
        if webhook.previous_secret_in_force(timezone.now()) is None:
            return None
        return serializers.DateTimeField().to_representation(webhook.previous_secret_expires_at)

    def get_events(self, webhook) -> list[str] | None:
        return list(webhook.events) or None


WebhookPageSerializer = paged_envelope_serializer("WebhookPage", WebhookSerializer)


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(help_text="Signing secret (whsec_...). Shown only in this response.")


class RotateWebhookSecretRequestSerializer(StrictSerializer):
    overlapHours = StrictIntegerField(
        min_value=0,
        max_value=MAX_OVERLAP_HOURS,
        required=False,
        allow_null=True,
        help_text="How long the replaced secret keeps signing beside the new one; 0 retires it now. "
        "Default: the WEBHOOKS_SECRET_OVERLAP_HOURS setting (24)",
    )


class DeliveryAttemptSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    state = serializers.CharField()
    at = serializers.DateTimeField(source="started_at", allow_null=True)
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)
    error = serializers.CharField(allow_blank=True)


class DeliverySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    webhookId = serializers.UUIDField(source="webhook_id")
    eventId = serializers.UUIDField(source="event_id")
    event = serializers.CharField(source="event.type")
    status = serializers.CharField()
    attempts = serializers.IntegerField(source="attempt_count")
    nextAttemptAt = serializers.DateTimeField(source="next_attempt_at", allow_null=True)
    deliveredAt = serializers.DateTimeField(source="delivered_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    attemptLog = DeliveryAttemptSerializer(source="attempts.all", many=True)


DeliveryPageSerializer = paged_envelope_serializer("DeliveryPage", DeliverySerializer)
