from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from addressbook import services
from addressbook.api.serializers import (
    AddressBookEntrySerializer,
    AddressBookListQuerySerializer,
    AddressBookUpsertRequestSerializer,
)
from addressbook.selectors import address_book_entry_get, address_book_list
from core.api.pagination import page_of, paged_envelope_serializer
from core.routing import UUID_PATTERN


def _fields(request) -> dict:
    body = AddressBookUpsertRequestSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    return {
        "network": data["network"],
        "address": data["address"],
        "direction": data["direction"],
        "label": data.get("label") or "",
        "verified": data["verified"],
        "is_default": data["isDefault"],
    }


class AddressBookViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN
    required_scopes = {
        "list": "addressbook:manage",
        "create": "addressbook:manage",
        "retrieve": "addressbook:manage",
        "update": "addressbook:manage",
        "destroy": "addressbook:manage",
    }

    @extend_schema(
        summary="List the address book, newest first",
        parameters=[AddressBookListQuerySerializer],
        responses=paged_envelope_serializer("AddressBookList", AddressBookEntrySerializer),
    )
    def list(self, request):
        query = AddressBookListQuerySerializer(data=request.query_params.dict())
        query.is_valid(raise_exception=True)
        params = query.validated_data
        entries = address_book_list(user=request.user, network=params.get("network"), direction=params.get("direction"))
        page = page_of(entries, page=params["page"], page_size=params["pageSize"])
        return Response(page.envelope(AddressBookEntrySerializer(page.items, many=True).data))

    @extend_schema(
        summary="Add an address (checked with the network's address rules)",
        request=AddressBookUpsertRequestSerializer,
        responses={200: AddressBookEntrySerializer},
    )
    def create(self, request):
        entry = services.address_book_entry_create(user=request.user, **_fields(request))
        return Response(AddressBookEntrySerializer(entry).data)

    @extend_schema(summary="Read an address-book entry", responses=AddressBookEntrySerializer)
    def retrieve(self, request, pk=None):
        return Response(AddressBookEntrySerializer(address_book_entry_get(user=request.user, entry_id=pk)).data)

    @extend_schema(
        summary="Replace an address-book entry",
        request=AddressBookUpsertRequestSerializer,
        responses={200: AddressBookEntrySerializer},
    )
    def update(self, request, pk=None):
        entry = address_book_entry_get(user=request.user, entry_id=pk)
        entry = services.address_book_entry_update(entry=entry, **_fields(request))
        return Response(AddressBookEntrySerializer(entry).data)

    @extend_schema(
        summary="Remove an address-book entry; answers with the removed entry",
        responses={200: AddressBookEntrySerializer},
    )
    def destroy(self, request, pk=None):
        entry = address_book_entry_get(user=request.user, entry_id=pk)
        body = AddressBookEntrySerializer(entry).data
        services.address_book_entry_delete(entry=entry)
        return Response(body)
