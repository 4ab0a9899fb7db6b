from __future__ import annotations

from rest_framework import serializers

from core.api.serializers import StrictBooleanField, StrictSerializer


class NotificationPreferenceSerializer(serializers.Serializer):
    emailEnabled = serializers.BooleanField(source="email_enabled")


class UpdateNotificationPreferenceRequestSerializer(StrictSerializer):
    emailEnabled = StrictBooleanField()
