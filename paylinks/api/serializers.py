"""Request and response shapes of the payment-request and checkout APIs."""

from __future__ import annotations

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer
from core.api.serializers import (
    CurrencyCodeField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from drafts.enums import DraftStatus
from paylinks.models import PaymentRequestStatus
from paylinks.options import PAY_LINK_CURRENCIES
from payments.enums import Currency, Method, Network

MAX_EXPIRY_HOURS = 720


class PaymentRequestOptionSerializer(StrictSerializer):
    # The currencies a pay link takes (paylinks.services): the schema's enum is what is accepted.
    currency = StrictChoiceField(choices=[(str(c), str(c)) for c in PAY_LINK_CURRENCIES])
    network = StrictChoiceField(choices=Network.choices)
    receiverAddress = serializers.CharField(
        max_length=320,
        trim_whitespace=False,
        allow_null=True,
        required=False,
        help_text="Omitted (and no addressBookId): the account's default receiving address on the network",
    )
    addressBookId = serializers.UUIDField(
        allow_null=True,
        required=False,
        help_text="A Receiving address-book entry on the same network, instead of receiverAddress",
    )
    receivingWalletId = serializers.UUIDField(
        allow_null=True,
        required=False,
        help_text="BTC: a receiving wallet instead of receiverAddress; a new address per draft",
    )

    def validate(self, attrs):
        has_address = attrs.get("receiverAddress") is not None
        has_entry = attrs.get("addressBookId") is not None
        if has_address and has_entry:
            raise serializers.ValidationError(
                {
                    "addressBookId": [
                        serializers.ErrorDetail("Give receiverAddress or addressBookId, not both.", "ambiguous")
                    ]
                }
            )
        if attrs.get("receivingWalletId") is not None and (has_address or has_entry):
            raise serializers.ValidationError(
                {
                    "receivingWalletId": [
                        serializers.ErrorDetail(
                            "Give receivingWalletId, or receiverAddress or addressBookId, not both.", "ambiguous"
                        )
                    ]
                }
            )
        return attrs  # neither: the account's default receiving address on the network


class CreatePaymentRequestSerializer(StrictSerializer):
    fiatCurrency = CurrencyCodeField()
    fiatAmount = StrictDecimalField(max_digits=20, decimal_places=8, coerce_to_string=False)
    # many=True hands max_length to the list serializer, which the stubs do not say
    options = PaymentRequestOptionSerializer(many=True, allow_empty=False, max_length=20)  # type: ignore[call-arg]
    orderId = serializers.CharField(max_length=200, allow_null=True, allow_blank=True, required=False)
    memo = serializers.CharField(max_length=500, allow_null=True, allow_blank=True, required=False)
    expiryHours = StrictIntegerField(min_value=1, max_value=MAX_EXPIRY_HOURS, allow_null=True, required=False)
    returnUrl = serializers.CharField(
        max_length=2000,
        allow_null=True,
        allow_blank=True,
        required=False,
        trim_whitespace=False,
        help_text='https:// URL of the shop; the pay page links "Back to <merchant>" there once paid or cancelled',
    )


class PaymentRequestListQuerySerializer(StrictSerializer, PageQuerySerializer):
    status = serializers.ChoiceField(choices=PaymentRequestStatus.choices, required=False)
    orderId = serializers.CharField(max_length=200, required=False)


class CheckoutSelectSerializer(StrictSerializer):
    currency = StrictChoiceField(choices=Currency.choices)
    network = StrictChoiceField(choices=Network.choices)
    method = StrictChoiceField(choices=Method.choices, allow_null=True, required=False)


class CheckoutReceiptSerializer(StrictSerializer):
    email = serializers.EmailField(max_length=254)


# --- Response shapes (schema) ---------------------------------------------------------


class PaymentRequestOptionResponseSerializer(serializers.Serializer):
    currency = serializers.ChoiceField(choices=Currency.choices)
    network = serializers.ChoiceField(choices=Network.choices)
    receiverAddress = serializers.CharField(
        allow_null=True, help_text="null for a receiving wallet's option: each draft gets its next address"
    )
    receivingWalletId = serializers.UUIDField(
        required=False, help_text="Only on a receiving wallet's option: the wallet whose next address each draft gets"
    )


class PaymentRequestResponseSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    token = serializers.CharField(help_text="The pay link's secret (256 bits, URL-safe)")
    payUrl = serializers.URLField(help_text="{BASE_URL}/pay/{token}: the hosted page to send the payer to")
    fiatCurrency = serializers.CharField()
    fiatAmount = serializers.FloatField()
    options = PaymentRequestOptionResponseSerializer(many=True)
    orderId = serializers.CharField(allow_null=True)
    memo = serializers.CharField(allow_null=True)
    returnUrl = serializers.URLField(allow_null=True)
    status = serializers.ChoiceField(choices=PaymentRequestStatus.choices)
    expiresAt = serializers.DateTimeField()
    createdAt = serializers.DateTimeField()
    draftId = serializers.UUIDField(allow_null=True, help_text="The draft of the payer's current (or paying) choice")
    livemode = serializers.BooleanField(help_text="False for a test-mode object (made with a test key).")


class CheckoutOptionSerializer(serializers.Serializer):
    currency = serializers.ChoiceField(choices=Currency.choices)
    network = serializers.ChoiceField(choices=Network.choices)
    method = serializers.ChoiceField(choices=Method.choices)
    label = serializers.CharField()  # type: ignore[assignment]  # a field named "label": the stubs read it as Field.label


class CheckoutSelectionSerializer(serializers.Serializer):
    draftId = serializers.UUIDField()
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    network = serializers.ChoiceField(choices=Network.choices)
    method = serializers.ChoiceField(choices=Method.choices)
    receiverAddress = serializers.CharField(allow_null=True)
    amount = serializers.CharField(help_text="Exact amount in whole units of the asset")
    amountSats = serializers.IntegerField(help_text="The same amount in base units")
    tokenAddress = serializers.CharField(allow_null=True)
    bolt11 = serializers.CharField(allow_null=True)
    paymentUri = serializers.CharField(allow_null=True)
    qrSvg = serializers.CharField(allow_null=True, help_text="The payment URI as a QR code: data:image/svg+xml")
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    rate = serializers.FloatField(allow_null=True, help_text="Locked rate: fiat per whole unit of the asset")
    quoteExpiresAt = serializers.DateTimeField(allow_null=True)
    expiresAt = serializers.DateTimeField()
    confirmations = serializers.IntegerField()
    requiredConfirmations = serializers.IntegerField()
    paidTxId = serializers.CharField(allow_null=True)
    paidLate = serializers.BooleanField()
    receivedAmount = serializers.CharField(allow_null=True, help_text="What arrived, when it differs from amount")


class CheckoutResponseSerializer(serializers.Serializer):
    merchantName = serializers.CharField(allow_null=True)
    merchantLogoUrl = serializers.URLField(allow_null=True)
    supportEmail = serializers.EmailField(allow_null=True)
    supportUrl = serializers.URLField(allow_null=True)
    returnUrl = serializers.URLField(allow_null=True, help_text="Where to send the payer once paid or cancelled")
    fiatCurrency = serializers.CharField()
    fiatAmount = serializers.FloatField()
    memo = serializers.CharField(allow_null=True)
    orderId = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=PaymentRequestStatus.choices)
    expiresAt = serializers.DateTimeField()
    options = CheckoutOptionSerializer(many=True)
    selection = CheckoutSelectionSerializer(allow_null=True)
    livemode = serializers.BooleanField(help_text="False for a test-mode pay link: no real funds move.")


class CheckoutStatusSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=PaymentRequestStatus.choices)
    draftId = serializers.UUIDField(allow_null=True)
    draftStatus = serializers.ChoiceField(choices=DraftStatus.choices, allow_null=True)
    confirmations = serializers.IntegerField()
    requiredConfirmations = serializers.IntegerField(allow_null=True)
    paidTxId = serializers.CharField(allow_null=True)
