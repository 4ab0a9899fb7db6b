"""The bodies of the address-book operations the MCP tools share with the REST views
(addressbook.api.views): each takes the account and the parsed input and answers the REST body."""

from __future__ import annotations

from django.utils import timezone

from accounts.security_links import change_notice
from accounts.sessions import client_of
from accounts.stepup import step_up_require
from addressbook import services
from addressbook.api.serializers import (
    AddressBookEntrySerializer,
    AddressBookListQuerySerializer,
    AddressBookUpsertRequestSerializer,
)
from addressbook.models import AddressBookEntry
from addressbook.selectors import address_book_entry_get, address_book_list
from core.api.pagination import page_of
from core.wire import json_datetime
from drafts.idempotency import Outcome, create_once


def entry_fields(body) -> dict:
    """The validated fields of a POST or PUT body."""
    body = AddressBookUpsertRequestSerializer(data=body)
    body.is_valid(raise_exception=True)
    data = body.validated_data
    return {
        "network": data["network"],
        "address": data.get("address"),
        "direction": data["direction"],
        "label": data.get("label") or "",
        "verified": data["verified"],
        "is_default": data["isDefault"],
        "receiving_wallet_id": data.get("receivingWalletId"),
    }


def address_book_page_json(*, user, query: dict) -> dict:
    """GET /address-book: one page, newest first, optionally of one network or direction."""
    params = AddressBookListQuerySerializer(data=query)
    params.is_valid(raise_exception=True)
    wanted = params.validated_data
    entries = address_book_list(user=user, network=wanted.get("network"), direction=wanted.get("direction"))
    page = page_of(entries, wanted, within=address_book_list(user=user, network=None, direction=None))
    return page.envelope(AddressBookEntrySerializer(page.items, many=True).data)


def address_book_entry_save(
    *, user, fields: dict, request=None, entry: AddressBookEntry | None = None
) -> AddressBookEntry:
    """Add an entry (`entry` None) or replace one, under the receiving-address lock's rule
    (accounts.receiver_lock): while it is on, a new or changed receiver needs step-up (so never
    an API key or MCP: `request` None or keyed), waits RECEIVER_LOCK_DELAY_HOURS and is emailed
    to the owner. REST, MCP and the dashboard all save through here."""
    waits = services.entry_change_waits(
        entry=entry, user=user, network=fields["network"], address=fields["address"], direction=fields["direction"]
    )
    if waits:
        step_up_require(request)
    if entry is None:
        saved = services.address_book_entry_create(user=user, **fields)
    else:
        saved = services.address_book_entry_update(entry=entry, **fields)
    if waits:
        change_notice(
            user=user,
            notice="address_added",
            client=client_of(request),
            address=saved.address,
            network=saved.network,
            usable_from=json_datetime(saved.usable_from or timezone.now()),
        )
    return saved


def address_book_entry_usable_now(*, request, entry: AddressBookEntry) -> AddressBookEntry:
    """The owner cuts an entry's waiting time short (the dashboard): step-up, and an email."""
    step_up_require(request)
    entry = services.address_book_entry_usable_now(entry=entry)
    change_notice(
        user=entry.user,
        notice="receiver_lock_address_now",
        client=client_of(request),
        address=entry.address,
        network=entry.network,
    )
    return entry


def address_book_create_json(*, user, body, request=None) -> dict:
    """POST /address-book: the new entry (the address checked with its network's rules)."""
    entry = address_book_entry_save(user=user, fields=entry_fields(body), request=request)
    return AddressBookEntrySerializer(entry).data


def address_book_create_outcome(
    *, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key", request=None
) -> Outcome:
    """POST /address-book once per Idempotency-Key."""
    return create_once(
        user=user,
        key=idempotency_key,
        operation="addressBookEntry",
        body=body,
        make=lambda: address_book_create_json(user=user, body=body, request=request),
        key_field=key_field,
    )


def address_book_delete_json(*, user, entry_id) -> dict:
    """DELETE /address-book/{id}: the removed entry."""
    entry = address_book_entry_get(user=user, entry_id=entry_id)
    body = AddressBookEntrySerializer(entry).data
    services.address_book_entry_delete(entry=entry)
    return body
