"""Writes for the address book."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from addressbook.models import AddressBookEntry
from core.problems import Conflict
from payments.addresses import validate_address
from payments.registry import require_network_enabled


class DuplicateEntry(Conflict):
    default_code = "duplicate_address"


def _checked(network: str, address: str) -> str:
    require_network_enabled(network)
    return validate_address(network, address, field="address")


def _duplicate(entry_network: str) -> DuplicateEntry:
    return DuplicateEntry(
        f"This address is already in the address book for {entry_network}.",
        field="address",
    )


def address_book_entry_create(
    *, user, network: str, address: str, direction: str, label: str = "", verified: bool = False
) -> AddressBookEntry:
    address = _checked(network, address)
    entry = AddressBookEntry(
        user=user, network=network, address=address, direction=direction, label=label, verified=verified
    )
    try:
        with transaction.atomic():
            entry.save(force_insert=True)
    except IntegrityError:
        raise _duplicate(network) from None
    return entry


def address_book_entry_update(
    *, entry: AddressBookEntry, network: str, address: str, direction: str, label: str = "", verified: bool = False
) -> AddressBookEntry:
    """Replace every field of an entry (PUT)."""
    address = _checked(network, address)
    try:
        with transaction.atomic():
            locked = AddressBookEntry.objects.select_for_update().get(pk=entry.pk)
            locked.network, locked.address, locked.direction = network, address, direction
            locked.label, locked.verified = label, verified
            locked.save()
    except IntegrityError:
        raise _duplicate(network) from None
    return locked


def address_book_entry_delete(*, entry: AddressBookEntry) -> None:
    try:
        entry.delete()
    except ProtectedError as exc:
        names = sorted({str(obj) for obj in exc.protected_objects})
        raise Conflict(
            "A recurring template pays this entry; delete or change the template first.",
            code="entry_in_use",
            extra={"usedBy": names[:10]},
        ) from None
