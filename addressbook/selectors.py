"""Reads for the address book, and the one place an entry stands in for an address."""

from __future__ import annotations

from uuid import UUID

from django.db.models import QuerySet

from addressbook.models import AddressBookEntry, AddressDirection
from core.problems import NotFound, Problem


def address_book_list(*, user, network: str | None = None, direction: str | None = None) -> QuerySet:
    entries = AddressBookEntry.objects.filter(user=user).order_by("-created_at", "-id")
    if network:
        entries = entries.filter(network=network)
    if direction:
        entries = entries.filter(direction=direction)
    return entries


def address_book_entry_get(*, user, entry_id: UUID | str) -> AddressBookEntry:
    """The account's entry; another account's entry is as unknown as a missing one (404)."""
    try:
        return AddressBookEntry.objects.get(user=user, pk=entry_id)
    except (AddressBookEntry.DoesNotExist, ValueError):
        raise NotFound("No such address-book entry.") from None


def address_book_receiver(*, user, entry_id: UUID | str, network: str, field: str = "addressBookId") -> str:
    """The address a draft (or a template, a pay-link option) pays when it names an entry
    instead of an address: the account's own Receiving entry on the same network."""
    try:
        entry = AddressBookEntry.objects.get(user=user, pk=entry_id)
    except (AddressBookEntry.DoesNotExist, ValueError):
        raise Problem("No address-book entry of this account has this id.", code="unknown_entry", field=field) from None
    if entry.network != network:
        raise Problem(
            f"The address-book entry is on {entry.network}, not {network}.", code="network_mismatch", field=field
        )
    if entry.direction != AddressDirection.RECEIVING:
        raise Problem(
            "The address-book entry is a Sending address; name a Receiving entry to be paid at.",
            code="not_a_receiving_address",
            field=field,
        )
    return entry.address


def default_receiver(*, user, network: str) -> str | None:
    """The account's default receiving address on `network`, or None."""
    return (
        AddressBookEntry.objects.filter(user=user, network=network, is_default=True)
        .values_list("address", flat=True)
        .first()
    )


def receiving_addresses(*, user) -> list[AddressBookEntry]:
    """The account's Receiving entries, defaults first: what address fields offer."""
    return list(
        AddressBookEntry.objects.filter(user=user, direction=AddressDirection.RECEIVING).order_by(
            "network", "-is_default", "label", "address"
        )
    )


def receiver_or_default(*, user, network: str, receiver: str | None, field: str = "receiverAddress") -> str:
    """The address given, else the account's default on the network; neither is a Problem naming `field`."""
    if receiver:
        return receiver
    default = default_receiver(user=user, network=network)
    if default is None:
        raise Problem(
            f"Name the receiving address, or set a default receiving address for {network} in the address book.",
            code="required",
            field=field,
        )
    return default
