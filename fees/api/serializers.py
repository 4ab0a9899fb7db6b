from __future__ import annotations

from rest_framework import serializers

from config.api.serializers import StrictSerializer
from fees.services import SETTLEMENT_CURRENCIES
from payments.enums import Network


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


class AccruedFeesResponseSerializer(serializers.Serializer):
    outstandingUsd = serializers.FloatField()
    draftCount = serializers.IntegerField()
    oldestAccruedAt = serializers.DateTimeField(allow_null=True)
    maxOutstandingUsd = serializers.FloatField()
    maxAgeDays = serializers.IntegerField()
    blocked = serializers.BooleanField()
    activeSettlementDraftId = serializers.UUIDField(allow_null=True)


class SettleAccruedFeesRequestSerializer(StrictSerializer):
    currency = serializers.ChoiceField(choices=SETTLEMENT_CURRENCIES)
    network = serializers.ChoiceField(choices=Network.choices)
