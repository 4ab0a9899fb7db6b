"""Request and response shapes of the refunds API."""

from __future__ import annotations

from rest_framework import serializers

from config.api.pagination import PageQuerySerializer
from config.api.serializers import StrictSerializer
from payments.enums import Currency, DraftStatus, Network
from refunds.models import RefundStatus
from refunds.services import MAX_EXPIRY_HOURS


class CreateRefundSerializer(StrictSerializer):
    draftId = serializers.UUIDField(help_text="The Confirmed draft whose payment is given back")
    currency = serializers.ChoiceField(
        choices=Currency.choices, required=False, allow_null=True, help_text="Default: the paid asset's"
    )
    network = serializers.ChoiceField(
        choices=Network.choices, required=False, allow_null=True, help_text="Default: the paid draft's"
    )
    full = serializers.BooleanField(
        required=False, default=False, help_text="Refund what is left of the payment (instead of an amount)"
    )
    amountSats = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, help_text="Exact amount in base units of the refund's asset"
    )
    fiatCurrency = serializers.CharField(max_length=8, required=False, allow_null=True)
    fiatAmount = serializers.DecimalField(
        max_digits=20,
        decimal_places=8,
        coerce_to_string=False,
        required=False,
        allow_null=True,
        help_text="Fiat-priced: converted into the asset at the rate locked when the merchant approves",
    )
    reason = serializers.CharField(max_length=500, required=False, allow_null=True, allow_blank=True)
    customerEmail = serializers.EmailField(
        max_length=254, required=False, allow_null=True, help_text="Sent the claim link when given"
    )
    expiryHours = serializers.IntegerField(
        min_value=1, max_value=MAX_EXPIRY_HOURS, required=False, allow_null=True, help_text="Claim window (14 days)"
    )


class RefundListQuerySerializer(StrictSerializer, PageQuerySerializer):
    status = serializers.ChoiceField(choices=RefundStatus.choices, required=False)
    draftId = serializers.UUIDField(required=False)


class RefundClaimSerializer(StrictSerializer):
    refundAddress = serializers.CharField(max_length=128, help_text="Where the customer wants the refund sent")


# --- Response shapes (schema) ---------------------------------------------------------


class RefundPayoutSerializer(serializers.Serializer):
    draftId = serializers.UUIDField(help_text="The outgoing draft (origin Refund) the merchant pays")
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    receiverAddress = serializers.CharField()
    amountSats = serializers.IntegerField()
    amount = serializers.CharField()
    paymentUri = serializers.CharField(help_text="Single-output payment URI for the merchant's own wallet")
    txTemplateUrl = serializers.CharField(allow_null=True, help_text="Bitcoin: the unsigned transaction template")
    txId = serializers.CharField(allow_null=True)
    confirmations = serializers.IntegerField()
    expiresAt = serializers.DateTimeField()


class RefundResponseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    draftId = serializers.UUIDField()
    status = serializers.ChoiceField(choices=RefundStatus.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    network = serializers.ChoiceField(choices=Network.choices)
    amountSats = serializers.IntegerField(allow_null=True, help_text="Null while a fiat price awaits approval")
    amount = serializers.CharField(allow_null=True)
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    shareBaseUnits = serializers.IntegerField(help_text="Its value in base units of the paid asset")
    reason = serializers.CharField(allow_null=True)
    customerEmail = serializers.CharField(allow_null=True)
    refundAddress = serializers.CharField(allow_null=True)
    claimUrl = serializers.URLField(help_text="{BASE_URL}/refund/{token}: the page the customer claims it on")
    payout = RefundPayoutSerializer(allow_null=True)
    expiresAt = serializers.DateTimeField()
    claimedAt = serializers.DateTimeField(allow_null=True)
    approvedAt = serializers.DateTimeField(allow_null=True)
    paidAt = serializers.DateTimeField(allow_null=True)
    closedAt = serializers.DateTimeField(allow_null=True)
    createdAt = serializers.DateTimeField()


class RefundClaimResponseSerializer(serializers.Serializer):
    merchantName = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=RefundStatus.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    network = serializers.ChoiceField(choices=Network.choices)
    amount = serializers.CharField(allow_null=True)
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    refundAddress = serializers.CharField(allow_null=True)
    txId = serializers.CharField(allow_null=True)
    expiresAt = serializers.DateTimeField()
