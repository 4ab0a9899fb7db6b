from __future__ import annotations

from rest_framework import serializers

from addressbook.models import AddressDirection
from core.api.pagination import PageQuerySerializer
from core.api.serializers import StrictBooleanField, StrictChoiceField, StrictSerializer
from payments.enums import Network


class AddressBookUpsertRequestSerializer(StrictSerializer):
    label = serializers.CharField(max_length=200, allow_null=True, allow_blank=True, required=False)
    address = serializers.CharField(max_length=128, trim_whitespace=False)
    network = StrictChoiceField(choices=Network.choices)
    verified = StrictBooleanField(required=False, default=False)
    direction = StrictChoiceField(choices=AddressDirection.choices)
    isDefault = StrictBooleanField(
        required=False,
        default=False,
        help_text="Make this Receiving entry the default receiving address of its network: drafts and "
        "pay-link options that name no receiverAddress (nor addressBookId) are paid here",
    )


class AddressBookListQuerySerializer(StrictSerializer, PageQuerySerializer):
    network = serializers.ChoiceField(choices=Network.choices, required=False)
    direction = serializers.ChoiceField(choices=AddressDirection.choices, required=False)


class AddressBookEntrySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    label = serializers.CharField()
    address = serializers.CharField()
    network = serializers.ChoiceField(choices=Network.choices)
    direction = serializers.ChoiceField(choices=AddressDirection.choices)
    verified = serializers.BooleanField()
    isDefault = serializers.BooleanField(source="is_default")
    usableFrom = serializers.DateTimeField(
        source="usable_from",
        allow_null=True,
        help_text="Added under the receiving-address lock: API keys and agents may pay it from this time on "
        "(null: at once)",
    )
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
