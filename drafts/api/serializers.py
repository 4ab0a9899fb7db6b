"""Request and response shapes of the drafts API (names as in the interface spec)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.pagination import PageQuerySerializer, paged_envelope_serializer
from core.api.serializers import (
    CurrencyCodeField,
    PlainTextField,
    StrictBooleanField,
    StrictChoiceField,
    StrictDecimalField,
    StrictIntegerField,
    StrictSerializer,
)
from drafts.enums import DraftStatus
from drafts.settlement import SETTLEMENT_CURRENCIES
from payments.enums import Currency, FeePlacement, Method, Network

INT64_MAX = 2**63 - 1
MAX_EXPIRY_HOURS = 720
MAX_REQUIRED_CONFIRMATIONS = 100


class CreateDraftRequestSerializer(StrictSerializer):
    receiverAddress = serializers.CharField(
        max_length=320,
        allow_null=True,
        required=False,
        trim_whitespace=False,
        help_text="Omitted (and no addressBookId, not Lightning): the account's default receiving address "
        "on the network",
    )
    network = StrictChoiceField(choices=Network.choices, required=False)
    paymentMethod = StrictChoiceField(choices=Method.choices, allow_null=True, required=False)
    amountSats = StrictIntegerField(min_value=1, max_value=INT64_MAX, allow_null=True, required=False)
    fiatCurrency = CurrencyCodeField(allow_null=True, required=False)
    fiatAmount = StrictDecimalField(
        max_digits=20, decimal_places=8, min_value=0, allow_null=True, required=False, coerce_to_string=False
    )
    senderAddress = serializers.CharField(max_length=128, allow_null=True, required=False, trim_whitespace=False)
    bolt11 = serializers.CharField(max_length=4096, allow_null=True, required=False)
    lightningAddress = serializers.CharField(max_length=320, allow_null=True, required=False)
    memo = PlainTextField(max_length=500, allow_null=True, allow_blank=True, required=False)
    expiryHours = StrictIntegerField(min_value=1, max_value=MAX_EXPIRY_HOURS, allow_null=True, required=False)
    requiredConfirmations = StrictIntegerField(
        min_value=1, max_value=MAX_REQUIRED_CONFIRMATIONS, allow_null=True, required=False
    )
    currency = StrictChoiceField(choices=Currency.choices, allow_null=True, required=False)
    singleOutput = StrictBooleanField(allow_null=True, required=False)
    addressBookId = serializers.UUIDField(
        allow_null=True,
        required=False,
        help_text="A Receiving address-book entry on the same network, instead of receiverAddress",
    )
    receivingWalletId = serializers.UUIDField(
        allow_null=True,
        required=False,
        help_text="A receiving wallet on the same (Bitcoin) network, instead of receiverAddress: the draft is "
        "paid at the wallet's next unused address, never reused, and its amount is billed as asked",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors: dict[str, list[Any]] = {}
        if attrs.get("addressBookId") is not None and attrs.get("receiverAddress") is not None:
            errors["addressBookId"] = [
                serializers.ErrorDetail("Give receiverAddress or addressBookId, not both.", code="ambiguous")
            ]
        if attrs.get("receivingWalletId") is not None and (
            attrs.get("receiverAddress") is not None or attrs.get("addressBookId") is not None
        ):
            errors["receivingWalletId"] = [
                serializers.ErrorDetail(
                    "Give receivingWalletId, or receiverAddress or addressBookId, not both.", code="ambiguous"
                )
            ]
        if not attrs.get("network"):
            errors["network"] = [serializers.ErrorDetail("Name the network.", code="required")]
        if attrs.get("fiatAmount") is not None and attrs["fiatAmount"] <= 0:
            errors["fiatAmount"] = [serializers.ErrorDetail("fiatAmount must be positive.", code="min_value")]
        has_fiat = attrs.get("fiatCurrency") is not None or attrs.get("fiatAmount") is not None
        if has_fiat and (attrs.get("fiatCurrency") is None or attrs.get("fiatAmount") is None):
            missing = "fiatAmount" if attrs.get("fiatAmount") is None else "fiatCurrency"
            errors[missing] = [serializers.ErrorDetail("fiatCurrency and fiatAmount go together.", code="required")]
        elif has_fiat and attrs.get("amountSats") is not None:
            errors["amountSats"] = [
                serializers.ErrorDetail("Give amountSats or fiatCurrency with fiatAmount, not both.", code="ambiguous")
            ]
        is_lightning = attrs.get("paymentMethod") == Method.LIGHTNING or attrs.get("bolt11")
        if not has_fiat and attrs.get("amountSats") is None and not is_lightning:
            errors["amountSats"] = [
                serializers.ErrorDetail("Give amountSats or fiatCurrency with fiatAmount.", code="required")
            ]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class FeeQuoteRequestSerializer(CreateDraftRequestSerializer):
    """An amount, currency and network (and optionally the method) to price; nothing is created."""

    receiverAddress = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    receivingWalletId = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    senderAddress = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    bolt11 = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    lightningAddress = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    memo = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    expiryHours = None  # type: ignore[assignment]  # None removes the inherited field (DRF)
    requiredConfirmations = None  # type: ignore[assignment]  # None removes the inherited field (DRF)


@extend_schema_field(CreateDraftRequestSerializer)
class DraftBodyField(serializers.DictField):
    """A CreateDraftRequest, validated later on its own so one bad item sinks only itself."""


class BatchDraftItemSerializer(StrictSerializer):
    draft = DraftBodyField()
    idempotencyKey = serializers.CharField(max_length=255, allow_null=True, required=False)


@extend_schema_field(BatchDraftItemSerializer(many=True))  # the field itself adds "null"
class BatchItemsField(serializers.ListField):
    """BatchDraftItem objects, each validated on its own (a bad item is a per-item result)."""

    child = serializers.DictField()


class BatchCreateDraftsRequestSerializer(StrictSerializer):
    items = BatchItemsField(allow_null=True, required=True)

    def validate_items(self, value: Any) -> Any:
        if not value:  # null or empty
            raise serializers.ValidationError("Send between 1 and 25 items.", code="min_length")
        if len(value) > 25:
            raise serializers.ValidationError("Send at most 25 items per call.", code="max_length")
        return value


class DraftListQuerySerializer(StrictSerializer, PageQuerySerializer):
    status = serializers.ChoiceField(choices=DraftStatus.choices, required=False)
    network = serializers.ChoiceField(choices=Network.choices, required=False)
    method = serializers.ChoiceField(choices=Method.choices, required=False)
    currency = serializers.ChoiceField(choices=Currency.choices, required=False)
    q = serializers.CharField(max_length=200, required=False)
    # "from" is a Python keyword: declared below.
    to = serializers.DateTimeField(required=False)


DraftListQuerySerializer._declared_fields["from"] = serializers.DateTimeField(required=False)


# --- Response shapes (schema) ---------------------------------------------------------


class QuoteSourcePriceSerializer(serializers.Serializer[Any]):
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    rate = serializers.CharField(required=False, help_text="The source's price (decimal string)")
    asOf = serializers.DateTimeField(required=False, allow_null=True)
    used = serializers.BooleanField()
    dropped = serializers.ChoiceField(
        choices=["outlier", "stale", "disagree"], required=False, help_text="Why the combination left it out"
    )


class QuoteLegSerializer(serializers.Serializer[Any]):
    asset = serializers.CharField(required=False, help_text="The crypto leg: USD per 1 unit")
    currency = serializers.CharField(required=False, help_text="The fiat leg: units per 1 USD")
    rate = serializers.CharField(help_text="The combined rate (decimal string)")
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    agreeing = serializers.IntegerField(help_text="How many sources agreed on it")
    sources = QuoteSourcePriceSerializer(many=True)


class QuoteSourcesSerializer(serializers.Serializer[Any]):
    live = serializers.BooleanField()
    crypto = QuoteLegSerializer()
    fx = QuoteLegSerializer()


class QuoteInfoSerializer(serializers.Serializer[Any]):
    rate = serializers.FloatField(help_text="Fiat per 1 whole unit of the asset")
    fiatCurrency = serializers.CharField()
    asset = serializers.CharField()
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    live = serializers.BooleanField(
        help_text="False when the rate came from the bundled, dated table (allowed by RATES_BUNDLED_ALLOWED)"
    )
    sources = QuoteSourcesSerializer(
        allow_null=True, help_text="Kept for audit: each source's price behind each leg and the combined rate"
    )
    lockedAt = serializers.DateTimeField()
    expiresAt = serializers.DateTimeField()
    nudgeBaseUnits = serializers.IntegerField(
        help_text="Base units added to make the amount unique among open drafts to the same address"
    )


class PlatformFeeInfoSerializer(serializers.Serializer[Any]):
    percent = serializers.FloatField()
    feeUsd = serializers.FloatField()
    feeFiat = serializers.FloatField(allow_null=True)
    fiatCurrency = serializers.CharField(allow_null=True)
    feeBaseUnits = serializers.IntegerField()
    feeAmount = serializers.CharField()
    currency = serializers.CharField()
    placement = serializers.ChoiceField(choices=FeePlacement.choices)
    accrued = serializers.BooleanField()
    waived = serializers.BooleanField()


class SekValueInfoSerializer(serializers.Serializer[Any]):
    amount = serializers.FloatField()
    rate = serializers.FloatField()
    source = serializers.CharField()  # type: ignore[assignment]  # a field named "source": the stubs read it as Field.source
    at = serializers.DateTimeField()


class FeeOutputInfoSerializer(serializers.Serializer[Any]):
    address = serializers.CharField()
    amountSats = serializers.IntegerField()
    purpose = serializers.ChoiceField(choices=["PlatformFee"])


class AmountMismatchInfoSerializer(serializers.Serializer[Any]):
    txId = serializers.CharField(allow_null=True)
    expectedBaseUnits = serializers.IntegerField()
    receivedBaseUnits = serializers.IntegerField()
    differenceBaseUnits = serializers.IntegerField()
    receivedFormatted = serializers.CharField(allow_null=True)
    differenceFormatted = serializers.CharField(allow_null=True)
    confirmations = serializers.IntegerField()
    detectedAt = serializers.DateTimeField()
    acceptedAt = serializers.DateTimeField(allow_null=True)


class DraftResponseSerializer(serializers.Serializer[Any]):
    """Schema of a draft; drafts.presenters.draft_json builds the actual body."""

    id = serializers.UUIDField()
    receiverAddress = serializers.CharField(allow_null=True)
    senderAddress = serializers.CharField(allow_null=True)
    network = StrictChoiceField(choices=Network.choices)
    amountSats = serializers.IntegerField(help_text="Receiver amount in base units of the sent asset")
    amountBtc = serializers.CharField(allow_null=True, help_text="The amount in BTC, for BTC drafts")
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    quote = QuoteInfoSerializer()
    platformFeeSats = serializers.IntegerField()
    platformFeeAddress = serializers.CharField(allow_null=True)
    platformFee = PlatformFeeInfoSerializer()
    paymentMethod = serializers.ChoiceField(choices=Method.choices)
    bolt11 = serializers.CharField(allow_null=True)
    memo = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    paidTxId = serializers.CharField(allow_null=True)
    requiredConfirmations = serializers.IntegerField()
    expiresAt = serializers.DateTimeField()
    createdAt = serializers.DateTimeField()
    updatedAt = serializers.DateTimeField()
    sek = SekValueInfoSerializer()
    feeOutputs = FeeOutputInfoSerializer(many=True, allow_null=True)
    currency = serializers.ChoiceField(choices=Currency.choices)
    tokenAddress = serializers.CharField(allow_null=True)
    feeAccrued = serializers.BooleanField()
    isFeeSettlement = serializers.BooleanField()
    paymentUri = serializers.CharField(allow_null=True)
    amountMismatch = AmountMismatchInfoSerializer(
        required=False, help_text="Present once a transfer with a different amount arrived (status AmountMismatch)"
    )
    lightningAddress = serializers.CharField(allow_null=True)
    # Beyond the fields the spec shows:
    amount = serializers.CharField(help_text="amountSats as a decimal string in whole asset units")
    confirmations = serializers.IntegerField(help_text="Keeps counting after Confirmed until final (finalizedAt)")
    receivedAmountSats = serializers.IntegerField(allow_null=True)
    paidTxIds = serializers.ListField(child=serializers.CharField(), help_text="Each paying transaction once")
    finalizedAt = serializers.DateTimeField(
        allow_null=True, help_text="When the Confirmed payment reached its network's finality depth; watched until then"
    )
    paymentReverted = serializers.BooleanField(
        help_text="True when the payment left the chain (a reorg) after the draft was Seen or Confirmed and the "
        "draft is not paid again"
    )
    paymentRevertedAt = serializers.DateTimeField(allow_null=True)
    revertedTxIds = serializers.ListField(child=serializers.CharField())
    paidLate = serializers.BooleanField()
    paymentHash = serializers.CharField(allow_null=True)
    solanaReference = serializers.CharField(allow_null=True)
    transactionRequestUrl = serializers.CharField(
        allow_null=True, help_text="Solana drafts: the Solana Pay transaction request (solana:https://...)"
    )
    paymentRequestId = serializers.UUIDField(allow_null=True)
    orderId = serializers.CharField(allow_null=True)
    livemode = serializers.BooleanField(help_text="False for a test-mode object (made with a test key).")

    receivingWalletId = serializers.UUIDField(
        allow_null=True, help_text="The receiving wallet whose fresh address receiverAddress is, if any"
    )
    addressIndex = serializers.IntegerField(
        allow_null=True, help_text="receiverAddress's index on the receiving wallet's receive branch (…/0/index)"
    )


DraftListResponseSerializer = paged_envelope_serializer("DraftListResponse", DraftResponseSerializer)


class DraftStatusResponseSerializer(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=DraftStatus.choices)
    txId = serializers.CharField(allow_null=True)
    txIds = serializers.ListField(
        child=serializers.CharField(), help_text="Every transaction paying the draft (several for a split payment)"
    )
    receivedAmountSats = serializers.IntegerField(allow_null=True)
    confirmations = serializers.IntegerField()
    requiredConfirmations = serializers.IntegerField()
    updatedAt = serializers.DateTimeField()


class BatchDraftResultSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField(help_text="Position of the item in the request")
    draft = DraftResponseSerializer(required=False, help_text="The created draft; absent when the item failed")
    error = serializers.CharField(allow_null=True, help_text="`code: detail (fields)` when the item failed, else null")


class TxOutputSerializer(serializers.Serializer[Any]):
    address = serializers.CharField()
    amountSats = serializers.IntegerField()
    amountBtc = serializers.CharField()
    purpose = serializers.ChoiceField(choices=["Receiver", "PlatformFee"])


class TxTemplateResponseSerializer(serializers.Serializer[Any]):
    draftId = serializers.UUIDField()
    network = serializers.CharField()
    outputs = TxOutputSerializer(many=True)
    bitcoinCli = serializers.CharField()
    payToManyCsv = serializers.CharField(
        help_text="`address,amount` lines, no header, amounts in BTC with 8 decimals: Electrum's Pay to many"
    )
    payToManyUnit = serializers.ChoiceField(choices=["BTC"], help_text="The unit of the CSV amounts")
    psbt = serializers.CharField(
        allow_null=True,
        help_text="BIP174 PSBT version 0, base64: the outputs in order and no inputs (BDK, bitcoinjs-lib read it)",
    )
    psbtV2 = serializers.CharField(
        allow_null=True,
        help_text="The same outputs as a BIP370 PSBT version 2, inputs and outputs modifiable",
    )


class DraftFeesResponseSerializer(serializers.Serializer[Any]):
    draftId = serializers.UUIDField()
    platformFee = PlatformFeeInfoSerializer()
    platformFeeSats = serializers.IntegerField()
    platformFeeAddress = serializers.CharField(allow_null=True)
    feeOutputs = FeeOutputInfoSerializer(many=True, allow_null=True)
    feeAccrued = serializers.BooleanField()
    totalToSendSats = serializers.IntegerField(help_text="Receiver amount plus any fee output, in base units")


# --- Accrued fees and their settlement (a settlement is a kind of draft) ---------------


class AccruedFeesResponseSerializer(serializers.Serializer[Any]):
    outstandingUsd = serializers.FloatField()
    draftCount = serializers.IntegerField()
    oldestAccruedAt = serializers.DateTimeField(allow_null=True)
    maxOutstandingUsd = serializers.FloatField()
    maxAgeDays = serializers.IntegerField()
    blocked = serializers.BooleanField()
    activeSettlementDraftId = serializers.UUIDField(allow_null=True)


class SettleAccruedFeesRequestSerializer(StrictSerializer):
    currency = StrictChoiceField(choices=SETTLEMENT_CURRENCIES)
    network = StrictChoiceField(choices=Network.choices)


class FeeQuoteResponseSerializer(serializers.Serializer[Any]):
    network = serializers.ChoiceField(choices=Network.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    paymentMethod = serializers.ChoiceField(choices=Method.choices)
    amountSats = serializers.IntegerField(help_text="The amount in base units of the asset")
    amount = serializers.CharField(help_text="The amount in whole units of the asset")
    fiatCurrency = serializers.CharField(allow_null=True)
    fiatAmount = serializers.FloatField(allow_null=True)
    quote = QuoteInfoSerializer()
    platformFee = PlatformFeeInfoSerializer(help_text="placement: where the fee of such a draft would go")
