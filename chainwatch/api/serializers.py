"""Request and response shapes of /api/v1/transfers (unmatched transfers)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer, paged_envelope_serializer
from core.api.serializers import StrictBooleanField, StrictSerializer
from payments.enums import Currency, Network


class TransferListQuerySerializer(StrictSerializer, PageQuerySerializer):
    matched = serializers.BooleanField(
        required=False, allow_null=True, default=None, help_text="false: still unmatched; true: later paid a draft"
    )


class UnmatchedTransferSerializer(serializers.Serializer[Any]):
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
    onChain = serializers.BooleanField(
        help_text="false while a reorg has taken it off the chain, until it is mined again (a mempool is not the chain)"
    )
    final = serializers.BooleanField(
        help_text="true once the transfer can no longer leave the chain (the network's finality); "
        "refund or attach it only then"
    )
    revertedAt = serializers.DateTimeField(
        allow_null=True, help_text="set while a reorg has taken the transfer off the chain before it was final"
    )
    candidateDraftIds = serializers.ListField(
        child=serializers.UUIDField(), help_text="Your drafts at this address and asset around the time of the transfer"
    )
    reason = serializers.ChoiceField(
        choices=["sentBeforeDraft"],
        allow_null=True,
        help_text="sentBeforeDraft: made (mempool entry or block time) before any candidate draft was created",
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
