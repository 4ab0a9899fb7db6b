"""Reads for the address book, the one place an entry stands in for an address, and the one
check of the receiving-address lock."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from addressbook.models import AddressBookEntry, AddressDirection
from core.problems import NotFound, PermissionDenied, Problem, worded
from payments.addresses import validate_address
from payments.formatting import network_name


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
        raise Problem(
            worded(gettext_noop("No address-book entry of this account has this id.")),
            code="unknown_entry",
            field=field,
        ) from None
    if entry.network != network:
        raise Problem(
            worded(
                gettext_noop("The address-book entry is on %(entry_network)s, not %(network)s."),
                entry_network=network_name(entry.network),
                network=network_name(network),
            ),
            code="network_mismatch",
            field=field,
        )
    if entry.direction != AddressDirection.RECEIVING:
        raise Problem(
            worded(gettext_noop("The address-book entry is a Sending address; name a Receiving entry to be paid at.")),
            code="not_a_receiving_address",
            field=field,
        )
    if entry.receiving_wallet_id is not None:  # its address 0 must not be paid over and over
        raise Problem(
            worded(
                gettext_noop(
                    "The address-book entry is a receiving wallet: name it as %(wallet_field)s (%(wallet)s), and "
                    "each draft gets its next address."
                ),
                wallet_field="receivingWalletId",
                wallet=str(entry.receiving_wallet_id),
            ),
            code="entry_is_a_wallet",
            field=field,
            extra={"receivingWalletId": str(entry.receiving_wallet_id)},
        )
    return entry.address


def default_receiver(*, user, network: str) -> str | None:
    """The account's default receiving address on `network`, or None (also when the default is a
    receiving wallet: `default_receiving_wallet` gives it)."""
    return (
        AddressBookEntry.objects.filter(user=user, network=network, is_default=True, receiving_wallet__isnull=True)
        .values_list("address", flat=True)
        .first()
    )


def default_receiving_wallet(*, user, network: str) -> UUID | None:
    """The id of the receiving wallet the account's default entry on `network` names, or None: a
    draft, template run or pay-link option naming no receiver then names the wallet (its next address)."""
    wallet_id: UUID | None = (
        AddressBookEntry.objects.filter(user=user, network=network, is_default=True, receiving_wallet__isnull=False)
        .values_list("receiving_wallet_id", flat=True)
        .first()
    )
    return wallet_id


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
            worded(
                gettext_noop(
                    "Name the receiving address, or set a default receiving address for %(network)s in the "
                    "address book."
                ),
                network=network_name(network),
            ),
            code="required",
            field=field,
        )
    return default


# --- The receiving-address lock (accounts.receiver_lock holds the setting) -------------------


class ReceiverNotAllowed(PermissionDenied):
    default_code = "receiver_not_allowed"


def receiver_lock_active(user, now: datetime | None = None) -> bool:
    """Whether the account's receiving-address lock binds now: on, and not past a pending
    turn-off. Reads the account row's own fields only (loaded with the API key): no query."""
    if not getattr(user, "receiver_lock", False):
        return False
    off_at = user.receiver_lock_off_at
    return off_at is None or off_at > (now or timezone.now())


def draft_body_receiver(data: dict, prefix: str = "") -> dict:
    """What a draft body pays, as the receiving-address lock checks it: the network, the
    address (a Lightning address too) and the field to name. A bolt11 invoice pays whoever made
    it and is in no address book: under the lock a key cannot give one."""
    if data.get("bolt11"):
        return {"network": data["network"], "address": None, "field": f"{prefix}bolt11"}
    if data.get("lightningAddress"):
        return {"network": data["network"], "address": data["lightningAddress"], "field": f"{prefix}lightningAddress"}
    field = "addressBookId" if data.get("addressBookId") is not None else "receiverAddress"
    return {"network": data["network"], "address": data.get("receiverAddress"), "field": f"{prefix}{field}"}


def receiver_lock_check(
    *, user, by_key: bool, network: str, address: str | None, field: str, now: datetime | None = None
) -> None:
    """The check each creation door (drafts, pay links, recurring templates) makes with the
    receiver it will pay: under the lock, an API key or MCP may name only a Receiving entry of
    the address book past its waiting time (`usable_from`); anything else is 403
    receiver_not_allowed naming `field`. A person's session is not limited (docs/accounts.md)."""
    if not by_key or not receiver_lock_active(user, now):
        return
    now = now or timezone.now()
    entry = None
    if address:
        try:
            normalized = validate_address(network, address, field=field)
        except Problem:
            normalized = address
        entry = (
            AddressBookEntry.objects.filter(
                user=user, network=network, address=normalized, direction=AddressDirection.RECEIVING
            )
            .only("usable_from")
            .first()
        )
    if entry is not None and (entry.usable_from is None or entry.usable_from <= now):
        return
    if entry is not None:
        raise ReceiverNotAllowed(
            worded(
                gettext_noop(
                    "The receiving-address lock is on and this address-book entry is still in its waiting time; "
                    "API keys and agents may use it from %(usable_from)s (the owner can confirm it earlier from the "
                    "dashboard)."
                ),
                usable_from="usableFrom",
            ),
            field=field,
            extra={"usableFrom": entry.usable_from.isoformat().replace("+00:00", "Z") if entry.usable_from else None},
        )
    raise ReceiverNotAllowed(
        worded(
            gettext_noop(
                "The receiving-address lock is on: API keys and agents may have payments sent only to Receiving "
                "addresses of the address book. Add this address from the dashboard (it is usable after a waiting "
                "time)."
            )
        ),
        field=field,
    )
