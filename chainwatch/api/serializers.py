"""Request and response shapes of /api/v1/transfers (unmatched transfers)."""

from __future__ import annotations

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer, paged_envelope_serializer
from core.api.serializers import StrictBooleanField, StrictSerializer
from payments.enums import Currency, Network


class TransferListQuerySerializer(StrictSerializer, PageQuerySerializer):
    matched = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="false: still unmatched; true: later paid a draft"
    )


class UnmatchedTransferSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    network = serializers.ChoiceField(choices=Network.choices)
    currency = serializers.ChoiceField(choices=Currency.choices)
    tokenAddress = serializers.CharField(allow_null=True)
    receiverAddress = serializers.CharField()
    txId = serializers.CharField()
    outputIndex = serializers.IntegerField(allow_null=True, help_text="Bitcoin output or EVM log index")
    amountSats = serializers.IntegerField(help_text="Base units of the asset")
    amount = serializers.CharField(help_text="Decimal amount in whole asset units")
    blockHeight = serializers.IntegerField(allow_null=True)
    onChain = serializers.BooleanField(help_text="false once a reorg removed it")
    candidateDraftIds = serializers.ListField(
        child=serializers.UUIDField(), help_text="Your drafts at this address and asset around the time of the transfer"
    )
    matched = serializers.BooleanField()
    matchedDraftId = serializers.UUIDField(allow_null=True)
    firstSeenAt = serializers.DateTimeField()
    reportedAt = serializers.DateTimeField()


TransferListResponseSerializer = paged_envelope_serializer("UnmatchedTransferList", UnmatchedTransferSerializer)


class AttachTransferRequestSerializer(StrictSerializer):
    draftId = serializers.UUIDField()
    acceptAmount = StrictBooleanField(
        required=False,
        default=False,
        help_text="Needed when the transfer differs from the billed amount by more than 10%",
    )
