from __future__ import annotations

from rest_framework import serializers

from core.api.serializers import StrictChoiceField, StrictSerializer
from drafts.enums import DraftStatus
from payments.enums import Currency, Network


class CreateDemoDraftRequestSerializer(StrictSerializer):
    network = StrictChoiceField(choices=Network.choices)
    currency = StrictChoiceField(choices=Currency.choices)


class DemoNetworkInfoSerializer(serializers.Serializer):
    network = serializers.ChoiceField(choices=Network.choices)
    currencies = serializers.ListField(child=serializers.ChoiceField(choices=Currency.choices), allow_null=True)


class DemoConfigResponseSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    expiryMinutes = serializers.IntegerField()
    networks = DemoNetworkInfoSerializer(many=True, allow_null=True)
    simulatedPayments = serializers.BooleanField(
        help_text="Demo drafts are paid and confirmed by a simulator (no chain involved)"
    )


class DemoDraftResponseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    network = serializers.ChoiceField(choices=Network.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    receiverAddress = serializers.CharField(allow_null=True)
    amountBaseUnits = serializers.IntegerField()
    amountFormatted = serializers.CharField(allow_null=True)
    tokenAddress = serializers.CharField(allow_null=True)
    paymentUri = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    paidTxId = serializers.CharField(allow_null=True)
    confirmations = serializers.IntegerField()
    requiredConfirmations = serializers.IntegerField()
    expiresAt = serializers.DateTimeField()
    createdAt = serializers.DateTimeField()
