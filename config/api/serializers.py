"""Base serializers for request bodies."""

from __future__ import annotations

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Rejects unknown properties, as the spec's schemas say (additionalProperties false)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {name: [serializers.ErrorDetail("Unknown field.", code="unknown_field")] for name in unknown}
                )
        return super().to_internal_value(data)
