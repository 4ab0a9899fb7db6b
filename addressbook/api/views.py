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
from config.api.pagination import page_of, paged_envelope_serializer
from config.routing import UUID_PATTERN


def _fields(body) -> dict:
    body = AddressBookUpsertRequestSerializer(data=body)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    return {
        "network": data["network"],
        "address": data["address"],
        "direction": data["direction"],
        "label": data.get("label") or "",
        "verified": data["verified"],
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
        return Response(address_book_page_json(user=request.user, query=request.query_params.dict()))

    @extend_schema(
        summary="Add an address (checked with the network's address rules)",
        request=AddressBookUpsertRequestSerializer,
        responses={200: AddressBookEntrySerializer},
    )
    def create(self, request):
        return Response(address_book_create_json(user=request.user, body=request.data))

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
        entry = services.address_book_entry_update(entry=entry, **_fields(request.data))
        return Response(AddressBookEntrySerializer(entry).data)

    @extend_schema(
        summary="Remove an address-book entry; answers with the removed entry",
        responses={200: AddressBookEntrySerializer},
    )
    def destroy(self, request, pk=None):
        return Response(address_book_delete_json(user=request.user, entry_id=pk))


# Shared by REST and MCP: each takes the account and the parsed input and answers the REST body.


def address_book_page_json(*, user, query: dict) -> dict:
    """GET /address-book: one page, newest first, optionally of one network or direction."""
    params = AddressBookListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    wanted = params.validated_data
    entries = address_book_list(user=user, network=wanted.get("network"), direction=wanted.get("direction"))
    page = page_of(entries, page=wanted["page"], page_size=wanted["pageSize"])
    return page.envelope(AddressBookEntrySerializer(page.items, many=True).data)


def address_book_create_json(*, user, body) -> dict:
    """POST /address-book: the new entry (the address checked with its network's rules)."""
    return AddressBookEntrySerializer(services.address_book_entry_create(user=user, **_fields(body))).data


def address_book_delete_json(*, user, entry_id) -> dict:
    """DELETE /address-book/{id}: the removed entry."""
    entry = address_book_entry_get(user=user, entry_id=entry_id)
    body = AddressBookEntrySerializer(entry).data
    services.address_book_entry_delete(entry=entry)
    return body
