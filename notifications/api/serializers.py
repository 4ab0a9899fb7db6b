from __future__ import annotations

from rest_framework import serializers

from core.api.serializers import StrictBooleanField, StrictSerializer


class NotificationPreferenceSerializer(serializers.Serializer):
    emailEnabled = serializers.BooleanField(source="email_enabled")
    attentionDigest = serializers.BooleanField(
        source="attention_digest", help_text="The daily email of what needs attention (needs emailEnabled too)"
    )


class UpdateNotificationPreferenceRequestSerializer(StrictSerializer):
    emailEnabled = StrictBooleanField(required=False)
    attentionDigest = StrictBooleanField(required=False)
