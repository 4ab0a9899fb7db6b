from __future__ import annotations

from rest_framework import serializers

from core.api.pagination import PageQuerySerializer
from core.api.serializers import StrictChoiceField, StrictSerializer
from wallets.descriptors import BITCOIN_NETWORKS, ScriptType


class ReceivingWalletCreateRequestSerializer(StrictSerializer):
    network = StrictChoiceField(choices=[(n, n) for n in BITCOIN_NETWORKS])
    descriptor = serializers.CharField(
        max_length=1000,
        trim_whitespace=False,
        help_text="A public output descriptor, wpkh(...), tr(...) or sh(wpkh(...)) with one extended public key "
        "(key origin [fingerprint/path] optional) ending in /0/* or /<0;1>/*, BIP380 checksum optional (checked "
        "when given); or a bare xpub/tpub (with scriptType), ypub/upub or zpub/vpub. Private keys are refused.",
    )
    scriptType = StrictChoiceField(
        choices=[(t, t) for t in ScriptType.choices],
        allow_null=True,
        required=False,
        help_text="For a bare xpub/tpub: how its addresses are made (wpkh, tr, sh-wpkh)",
    )
    label = serializers.CharField(max_length=200, allow_null=True, allow_blank=True, required=False)  # type: ignore[assignment]  # a field named "label": the stubs read it as Field.label


class ReceivingWalletListQuerySerializer(StrictSerializer, PageQuerySerializer):
    includeArchived = serializers.BooleanField(required=False, default=False, help_text="Archived ones too.")


class WalletAddressSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    address = serializers.CharField()


class ReceivingWalletSerializer(serializers.Serializer):
    """Schema of a receiving wallet; wallets.api.edge.wallet_json builds the body."""

    id = serializers.UUIDField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named "label": the stubs read it as Field.label
    network = serializers.CharField()
    descriptor = serializers.CharField(help_text="The receive branch (…/0/*) with its checksum")
    scriptType = serializers.CharField()
    fingerprint = serializers.CharField(help_text="The master key's fingerprint from the key origin, or empty")
    derivationPath = serializers.CharField(help_text="The account key's path from the key origin, or empty")
    firstAddresses = WalletAddressSerializer(
        many=True, help_text="Its first 5 receive addresses: compare them with your wallet app's"
    )
    nextIndex = serializers.IntegerField(help_text="The index the next draft's address gets")
    unusedAddresses = serializers.IntegerField(
        help_text="Addresses handed out after the last paid one and not paid: new drafts are refused "
        "(409 gap_limit_reached) once this reaches gapLimit"
    )
    gapLimit = serializers.IntegerField()
    archived = serializers.BooleanField()
    archivedAt = serializers.DateTimeField(allow_null=True)
    livemode = serializers.BooleanField()
    createdAt = serializers.DateTimeField()
