"""The shape of GET /api/v1/attention."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from attention.selectors import ACTIONS, KINDS


class AttentionItemSerializer(serializers.Serializer[Any]):
    kind = serializers.ChoiceField(choices=list(KINDS))
    objectType = serializers.ChoiceField(choices=["draft", "transfer", "refund", "webhook", "apiKey"])
    id = serializers.UUIDField(help_text="The object's id (a transfer: the unmatched transfer's)")
    at = serializers.DateTimeField(help_text="Since when it waits; a key: when it expires")
    amount = serializers.CharField(allow_null=True, help_text="Whole asset units")
    currency = serializers.CharField(allow_null=True)
    network = serializers.CharField(allow_null=True)
    label = serializers.CharField(allow_null=True, help_text="A webhook's URL, a key's name")
    actions = serializers.ListField(
        child=serializers.ChoiceField(choices=sorted({a for actions in ACTIONS.values() for a in actions}))
    )


class AttentionCountsSerializer(serializers.Serializer[Any]):
    def get_fields(self) -> dict[str, serializers.Field]:
        return {kind: serializers.IntegerField() for kind in KINDS}


class AttentionSerializer(serializers.Serializer[Any]):
    items = AttentionItemSerializer(many=True)
    counts = AttentionCountsSerializer()
    total = serializers.IntegerField()
