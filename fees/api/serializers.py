from __future__ import annotations

from rest_framework import serializers


class FeeTierSerializer(serializers.Serializer):
    upToUsd = serializers.FloatField(allow_null=True, help_text="Upper bound in USD; null for the open-ended tier")
    percent = serializers.FloatField()


class FeeScheduleSerializer(serializers.Serializer):
    tiers = FeeTierSerializer(many=True)
    minFeeUsd = serializers.FloatField()
    maxFeeUsd = serializers.FloatField()
    dustLimitSats = serializers.IntegerField()
    pricedIn = serializers.CharField()
    note = serializers.CharField()
