from __future__ import annotations

from rest_framework import serializers

from addressbook.models import AddressDirection
from core.api.pagination import PageQuerySerializer
from core.api.serializers import StrictBooleanField, StrictChoiceField, StrictSerializer
from payments.enums import Network


class AddressBookUpsertRequestSerializer(StrictSerializer):
    label = serializers.CharField(max_length=200, allow_null=True, allow_blank=True, required=False)  # type: ignore[assignment]  # a field named "label": the stubs read it as Field.label
    address = serializers.CharField(
        max_length=128,
        trim_whitespace=False,
        required=False,
        allow_null=True,
        help_text="Required unless receivingWalletId is given",
    )
    receivingWalletId = serializers.UUIDField(
        required=False,
        allow_null=True,
        help_text="A Receiving entry for the account's receiving wallet instead of one address: as the default, "
        "each draft and pay-link option naming no receiver gets the wallet's next address",
    )
    network = StrictChoiceField(choices=Network.choices)
    verified = StrictBooleanField(required=False, default=False)
    direction = StrictChoiceField(choices=AddressDirection.choices)
    isDefault = StrictBooleanField(
        required=False,
        default=False,
        help_text="Make this Receiving entry the default receiving address of its network: drafts and "
        "pay-link options that name no receiverAddress (nor addressBookId) are paid here",
    )

    def validate(self, attrs):
        if attrs.get("receivingWalletId") is not None and attrs.get("address") is not None:
            raise serializers.ValidationError(
                {
                    "receivingWalletId": [
                        serializers.ErrorDetail("Give address or receivingWalletId, not both.", "ambiguous")
                    ]
                }
            )
        if attrs.get("receivingWalletId") is None and attrs.get("address") is None:
            raise serializers.ValidationError(
                {"address": [serializers.ErrorDetail("This field is required.", "required")]}
            )
        return attrs


class AddressBookListQuerySerializer(StrictSerializer, PageQuerySerializer):
    network = serializers.ChoiceField(choices=Network.choices, required=False)
    direction = serializers.ChoiceField(choices=AddressDirection.choices, required=False)


class AddressBookEntrySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    label = serializers.CharField()  # type: ignore[assignment]  # a field named "label": the stubs read it as Field.label
    address = serializers.CharField()
    network = serializers.ChoiceField(choices=Network.choices)
    direction = serializers.ChoiceField(choices=AddressDirection.choices)
    verified = serializers.BooleanField()
    isDefault = serializers.BooleanField(source="is_default")
    receivingWalletId = serializers.UUIDField(
        source="receiving_wallet_id",
        allow_null=True,
        help_text="The receiving wallet this entry stands for (address: its address 0), or null",
    )
    usableFrom = serializers.DateTimeField(
        source="usable_from",
        allow_null=True,
        help_text="Added under the receiving-address lock: API keys and agents may pay it from this time on "
        "(null: at once)",
    )
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
