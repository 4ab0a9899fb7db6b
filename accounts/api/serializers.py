from __future__ import annotations

from django.utils import timezone
from rest_framework import serializers

from accounts.scopes import ALL_SCOPES
from config.api.serializers import StrictSerializer


class CreateApiKeyRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=100, allow_null=True, allow_blank=True, required=False)
    scopes = serializers.ListField(
        child=serializers.ChoiceField(choices=ALL_SCOPES), allow_null=True, required=False, allow_empty=False
    )
    expiresAt = serializers.DateTimeField(allow_null=True, required=False)

    def validate_expiresAt(self, value):
        if value is not None and value <= timezone.now():
            raise serializers.ValidationError("expiresAt must be in the future.", code="in_the_past")
        return value

    def validate_scopes(self, value):
        if value is None:
            raise serializers.ValidationError("Name at least one scope.", code="required")
        return value

    def validate(self, attrs):
        if not attrs.get("scopes"):
            raise serializers.ValidationError(
                {"scopes": [serializers.ErrorDetail("Name at least one scope.", "required")]}
            )
        return attrs


class ApiKeySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    scopes = serializers.ListField(child=serializers.CharField())
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")


class ApiKeyCreatedSerializer(ApiKeySerializer):
    key = serializers.CharField(help_text="The API key itself. Shown only in this response.")


class MeSerializer(serializers.Serializer):
    id = serializers.UUIDField(help_text="The account id")
    email = serializers.EmailField()
    authenticatedWith = serializers.ChoiceField(choices=["session", "apiKey"])
    scopes = serializers.ListField(child=serializers.CharField(), help_text="The scopes this request may use")
