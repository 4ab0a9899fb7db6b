from __future__ import annotations

from rest_framework import serializers

from config.api.serializers import StrictSerializer
from suggestions.models import MAX_TEXT_LENGTH


class SuggestionRequestSerializer(StrictSerializer):
    text = serializers.CharField(max_length=MAX_TEXT_LENGTH)
    email = serializers.EmailField(max_length=320, allow_null=True, allow_blank=True, required=False)


class SuggestionResponseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    received = serializers.BooleanField()
    createdAt = serializers.DateTimeField(source="created_at")
