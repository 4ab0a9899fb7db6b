"""Writes for the address book."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from addressbook.models import AddressBookEntry, AddressDirection
from core.problems import Conflict, Problem
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


def _check_default(direction: str, is_default: bool) -> None:
    if is_default and direction != AddressDirection.RECEIVING:
        raise Problem(
            "Only a Receiving address can be the default receiving address.",
            code="not_a_receiving_address",
            field="isDefault",
        )


def _clear_other_defaults(entry: AddressBookEntry) -> None:
    AddressBookEntry.objects.filter(user_id=entry.user_id, network=entry.network, is_default=True).exclude(
        pk=entry.pk
    ).update(is_default=False)


def address_book_entry_create(
    *,
    user,
    network: str,
    address: str,
    direction: str,
    label: str = "",
    verified: bool = False,
    is_default: bool = False,
) -> AddressBookEntry:
    address = _checked(network, address)
    _check_default(direction, is_default)
    entry = AddressBookEntry(
        user=user,
        network=network,
        address=address,
        direction=direction,
        label=label,
        verified=verified,
        is_default=is_default,
    )
    try:
        with transaction.atomic():
            if is_default:
                _clear_other_defaults(entry)
            entry.save(force_insert=True)
    except IntegrityError:
        raise _duplicate(network) from None
    return entry


def address_book_entry_update(
    *,
    entry: AddressBookEntry,
    network: str,
    address: str,
    direction: str,
    label: str = "",
    verified: bool = False,
    is_default: bool = False,
) -> AddressBookEntry:
    """Replace every field of an entry (PUT)."""
    address = _checked(network, address)
    _check_default(direction, is_default)
    try:
        with transaction.atomic():
            locked = AddressBookEntry.objects.select_for_update().get(pk=entry.pk)
            locked.network, locked.address, locked.direction = network, address, direction
            locked.label, locked.verified, locked.is_default = label, verified, is_default
            if is_default:
                _clear_other_defaults(locked)
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


def address_book_default_set(*, entry: AddressBookEntry) -> AddressBookEntry:
    """Make a Receiving entry the account's default receiving address on its network (the
    previous default of that network stops being one). The address is checked again: the
    network's rules or the operator's settings may have changed since it was saved."""
    _check_default(entry.direction, True)
    _checked(entry.network, entry.address)
    with transaction.atomic():
        locked = AddressBookEntry.objects.select_for_update().get(pk=entry.pk)
        _clear_other_defaults(locked)
        locked.is_default = True
        locked.save(update_fields=["is_default", "updated_at"])
    return locked


def address_book_default_clear(*, entry: AddressBookEntry) -> AddressBookEntry:
    AddressBookEntry.objects.filter(pk=entry.pk).update(is_default=False)
    entry.is_default = False
    return entry
