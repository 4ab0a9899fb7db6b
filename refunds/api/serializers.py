"""Request and response shapes of the refunds API."""

from __future__ import annotations

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer
from core.api.serializers import StrictSerializer
from drafts.enums import DraftStatus
from payments.enums import Currency, Network
from refunds.models import RefundStatus
from refunds.services import MAX_EXPIRY_HOURS


class CreateRefundSerializer(StrictSerializer):
    draftId = serializers.UUIDField(help_text="The Confirmed draft whose payment is given back")
    # Plain strings: the registry checks the pair and names the field (listing every value here
    # would only repeat the supported (currency, network) matrix).
    currency = serializers.CharField(max_length=10, required=False, allow_null=True, help_text="Default: the paid one")
    network = serializers.CharField(max_length=20, required=False, allow_null=True, help_text="Default: the paid one")
    full = serializers.BooleanField(required=False, default=False, help_text="All that is left of the payment")
    amountSats = serializers.IntegerField(
        min_value=1, required=False, allow_null=True, help_text="Exact, in base units of the refund's asset"
    )
    fiatCurrency = serializers.CharField(max_length=8, required=False, allow_null=True)
    fiatAmount = serializers.DecimalField(
        max_digits=20,
        decimal_places=8,
        coerce_to_string=False,
        required=False,
        allow_null=True,
        help_text="Fiat-priced: converted at the rate of approval",
    )
    reason = serializers.CharField(
        max_length=500, required=False, allow_null=True, allow_blank=True, help_text="Shown to the customer"
    )
    customerEmail = serializers.EmailField(
        max_length=254, required=False, allow_null=True, help_text="Sent the claim link when given"
    )
    expiryHours = serializers.IntegerField(
        min_value=1, max_value=MAX_EXPIRY_HOURS, required=False, allow_null=True, help_text="Claim window (14 days)"
    )


class RefundListQuerySerializer(StrictSerializer, PageQuerySerializer):
    status = serializers.ChoiceField(choices=RefundStatus.choices, required=False)
    draftId = serializers.UUIDField(required=False, help_text="Only the refunds of this draft")


class RefundClaimSerializer(StrictSerializer):
    refundAddress = serializers.CharField(max_length=128, help_text="Where the customer wants the refund sent")


# --- Response shapes (schema) ---------------------------------------------------------


class RefundPayoutSerializer(serializers.Serializer):
    draftId = serializers.UUIDField()
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    paymentUri = serializers.CharField()
    txTemplateUrl = serializers.CharField(allow_null=True)
    txId = serializers.CharField(allow_null=True)


class RefundResponseSerializer(serializers.Serializer):
    """A refund. `payout` (once Approved) is the draft the merchant pays from their own wallet
    (to refundAddress, amountSats; GET /drafts/{draftId} has the rest);
    `amountSats` is null while a fiat price awaits approval; `shareBaseUnits` is the refund's
    value in base units of the paid asset."""

    id = serializers.UUIDField()
    draftId = serializers.UUIDField()
    livemode = serializers.BooleanField(help_text="False for a test-mode refund (of a test-mode draft).")
    status = serializers.ChoiceField(choices=RefundStatus.choices)
    currency = serializers.CharField()
    network = serializers.CharField()
    amountSats = serializers.IntegerField(allow_null=True)
    amount = serializers.CharField(allow_null=True)
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    shareBaseUnits = serializers.IntegerField()
    reason = serializers.CharField(allow_null=True)
    customerEmail = serializers.CharField(allow_null=True)
    refundAddress = serializers.CharField(allow_null=True)
    claimUrl = serializers.URLField()
    payout = RefundPayoutSerializer(allow_null=True)
    expiresAt = serializers.DateTimeField()
    claimedAt = serializers.DateTimeField(allow_null=True)
    approvedAt = serializers.DateTimeField(allow_null=True)
    paidAt = serializers.DateTimeField(allow_null=True)
    createdAt = serializers.DateTimeField()


class RefundClaimResponseSerializer(serializers.Serializer):
    merchantName = serializers.CharField(allow_null=True)
    livemode = serializers.BooleanField(help_text="False for a test refund: no real funds move.")
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
