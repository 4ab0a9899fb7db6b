from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import viewsets
from rest_framework.response import Response

from addressbook.api.edge import (
    address_book_create_outcome,
    address_book_delete_json,
    address_book_entry_save,
    address_book_page_json,
    entry_fields,
)
from addressbook.api.serializers import (
    AddressBookEntrySerializer,
    AddressBookListQuerySerializer,
    AddressBookUpsertRequestSerializer,
)
from addressbook.selectors import address_book_entry_get
from core.api.pagination import paged_envelope_serializer
from core.api.responses import IDEMPOTENCY_HEADER, idempotency_key_of, outcome_response
from core.routing import UUID_PATTERN


class AddressBookViewSet(viewsets.ViewSet):
    lookup_value_regex = UUID_PATTERN

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
        parameters=[IDEMPOTENCY_HEADER],
        responses={200: AddressBookEntrySerializer},
    )
    def create(self, request):
        outcome = address_book_create_outcome(
            user=request.user, body=request.data, idempotency_key=idempotency_key_of(request), request=request
        )
        return outcome_response(outcome, url_name="address-book-detail")

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
        fields = entry_fields(request.data)
        entry = address_book_entry_save(user=request.user, fields=fields, request=request, entry=entry)
        return Response(AddressBookEntrySerializer(entry).data)

    @extend_schema(
        summary="Remove an address-book entry; answers with the removed entry",
        responses={200: AddressBookEntrySerializer},
    )
    def destroy(self, request, pk=None):
        return Response(address_book_delete_json(user=request.user, entry_id=pk))
