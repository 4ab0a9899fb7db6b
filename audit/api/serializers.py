from __future__ import annotations

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer
from core.api.serializers import StrictSerializer


class AuditLogQuerySerializer(StrictSerializer, PageQuerySerializer):
    action = serializers.CharField(
        max_length=64,
        required=False,
        help_text="One action (`api_key.created`), or a family ending in a dot (`member.`)",
    )
    since = serializers.DateTimeField(required=False, help_text="Entries at or after this time")
    until = serializers.DateTimeField(required=False, help_text="Entries before this time")


class AuditActorSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["person", "apiKey", "system"])
    id = serializers.CharField(required=False)
    email = serializers.CharField(required=False)
    name = serializers.CharField(required=False)
    prefix = serializers.CharField(required=False)


class AuditEntrySerializer(serializers.Serializer):
    """Schema of an audit entry; audit.selectors.audit_entry_json builds the body."""

    id = serializers.UUIDField()
    action = serializers.CharField()
    at = serializers.DateTimeField()
    actor = AuditActorSerializer()
    ip = serializers.CharField(allow_null=True)
    changes = serializers.DictField()
