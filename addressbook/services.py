"""Writes for the address book."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from django.utils import timezone
from django.utils.translation import gettext_noop

from addressbook.models import AddressBookEntry, AddressDirection
from addressbook.selectors import receiver_lock_active
from audit import services as audit
from core.problems import Conflict, Problem, worded
from payments.addresses import validate_address
from payments.formatting import network_name
from payments.registry import require_network_enabled


class DuplicateEntry(Conflict):
    default_code = "duplicate_address"


def _checked(network: str, address: str | None) -> str:
    require_network_enabled(network)
    if not address:
        raise Problem(
            worded(gettext_noop("Give the address, or %(wallet_field)s."), wallet_field="receivingWalletId"),
            code="required",
            field="address",
        )
    return validate_address(network, address, field="address")


def _wallet_checked(*, user, wallet_id, network: str, direction: str) -> Any:
    """The account's own receiving wallet, on the entry's network, for a Receiving entry. The
    wallet model is reached through the entry's relation: wallets/ sits above the address book,
    which imports nothing of it. (The book is not split by mode; the draft door checks the
    wallet's mode when a draft names it.)"""
    wallets: Any = AddressBookEntry._meta.get_field("receiving_wallet").related_model
    try:
        wallet: Any = wallets._default_manager.get(pk=wallet_id, user=user)
    except (ObjectDoesNotExist, ValueError, TypeError):
        raise Problem(
            worded(gettext_noop("No receiving wallet of this account has this id.")),
            code="unknown_wallet",
            field="receivingWalletId",
        ) from None
    if wallet.network != network:
        raise Problem(
            worded(
                gettext_noop("The receiving wallet is on %(wallet_network)s, not %(network)s."),
                wallet_network=network_name(wallet.network),
                network=network_name(network),
            ),
            code="network_mismatch",
            field="receivingWalletId",
        )
    if direction != AddressDirection.RECEIVING:
        raise Problem(
            worded(gettext_noop("A receiving wallet is a Receiving entry.")),
            code="not_a_receiving_address",
            field="direction",
        )
    return wallet


def _duplicate(entry_network: str) -> DuplicateEntry:
    return DuplicateEntry(
        worded(
            gettext_noop("This address is already in the address book for %(network)s."),
            network=network_name(entry_network),
        ),
        field="address",
    )


def _check_default(direction: str, is_default: bool) -> None:
    if is_default and direction != AddressDirection.RECEIVING:
        raise Problem(
            worded(gettext_noop("Only a Receiving address can be the default receiving address.")),
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
    address: str | None,
    direction: str,
    label: str = "",
    verified: bool = False,
    is_default: bool = False,
    receiving_wallet_id=None,
) -> AddressBookEntry:
    wallet = None
    if receiving_wallet_id is not None:
        wallet = _wallet_checked(user=user, wallet_id=receiving_wallet_id, network=network, direction=direction)
        address = wallet.first_address
    address = _checked(network, address)
    _check_default(direction, is_default)
    entry = AddressBookEntry(
        receiving_wallet=wallet,
        usable_from=_usable_from(user),
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
            audit.record(organization=user, action="address_book.added", changes=_entry_changes(entry))
    except IntegrityError:
        raise _duplicate(network) from None
    return entry


def address_book_entry_update(
    *,
    entry: AddressBookEntry,
    network: str,
    address: str | None,
    direction: str,
    label: str = "",
    verified: bool = False,
    is_default: bool = False,
    receiving_wallet_id=None,
) -> AddressBookEntry:
    """Replace every field of an entry (PUT)."""
    wallet = None
    if receiving_wallet_id is not None:
        wallet = _wallet_checked(user=entry.user, wallet_id=receiving_wallet_id, network=network, direction=direction)
        address = wallet.first_address
    address = _checked(network, address)
    _check_default(direction, is_default)
    try:
        with transaction.atomic():
            locked = AddressBookEntry.objects.select_for_update().get(pk=entry.pk)
            if (locked.network, locked.address, locked.direction) != (network, address, direction):
                locked.usable_from = _usable_from(locked.user)  # a changed receiver waits like a new one
            locked.network, locked.address, locked.direction = network, address, direction
            locked.label, locked.verified, locked.is_default = label, verified, is_default
            locked.receiving_wallet = wallet
            if is_default:
                _clear_other_defaults(locked)
            locked.save()
            audit.record(organization=locked.user_id, action="address_book.changed", changes=_entry_changes(locked))
    except IntegrityError:
        raise _duplicate(network) from None
    return locked


def _entry_changes(entry: AddressBookEntry) -> dict:
    return {
        "entry": entry.pk,
        "network": entry.network,
        "address": entry.address,
        "direction": entry.direction,
        "isDefault": entry.is_default,
    }


def _usable_from(user) -> datetime | None:
    """Under the receiving-address lock a new (or changed) entry waits RECEIVER_LOCK_DELAY_HOURS
    before keys and agents may pay it; without the lock it is usable at once (None)."""
    if not receiver_lock_active(user):
        return None
    return timezone.now() + timedelta(hours=settings.RECEIVER_LOCK_DELAY_HOURS)


def entry_change_waits(*, entry: AddressBookEntry | None, user, network: str, address: str, direction: str) -> bool:
    """Whether creating (entry None) or replacing an entry with these fields needs the lock's
    step-up and waiting time: the lock is on and the receiver is new or changed."""
    if not receiver_lock_active(user):
        return False
    if entry is None:
        return True
    return (entry.network, entry.address, entry.direction) != (network, _checked(network, address), direction)


def address_book_entry_usable_now(*, entry: AddressBookEntry) -> AddressBookEntry:
    """The owner cuts an entry's waiting time short (the dashboard, after step-up)."""
    with transaction.atomic():
        AddressBookEntry.objects.filter(pk=entry.pk).update(usable_from=None, updated_at=timezone.now())
        audit.record(organization=entry.user_id, action="address_book.usable_now", changes=_entry_changes(entry))
    entry.usable_from = None
    return entry


def address_book_entry_delete(*, entry: AddressBookEntry) -> None:
    try:
        with transaction.atomic():
            audit.record(organization=entry.user_id, action="address_book.removed", changes=_entry_changes(entry))
            entry.delete()
    except ProtectedError as exc:
        names = sorted({str(obj) for obj in exc.protected_objects})
        raise Conflict(
            worded(gettext_noop("A recurring template pays this entry; delete or change the template first.")),
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
