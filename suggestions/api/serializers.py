from __future__ import annotations

from rest_framework import serializers

from core.api.serializers import PlainTextField, StrictSerializer
from suggestions.models import MAX_TEXT_LENGTH


class SuggestionRequestSerializer(StrictSerializer):
    text = PlainTextField(max_length=MAX_TEXT_LENGTH, multiline=True)
    email = serializers.EmailField(max_length=320, allow_null=True, allow_blank=True, required=False)


class SuggestionResponseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    received = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
