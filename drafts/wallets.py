"""Drafts paid at a receiving wallet's fresh addresses: one address per draft, never reused.

A draft that names a receiving wallet (`receivingWalletId`) is planned like any other, with the
wallet's next address standing in for the receiver; then, under the wallet's row lock, it takes
the wallet's next index, is written (drafts.creation.draft_create) and the index moves on, in
one transaction: concurrent creations wait for the lock and get distinct addresses, and a
creation that writes nothing (a refused Idempotency-Key, an error) takes no index.

The address identifies the payment, so the amount is billed as asked (no uniqueness nudge,
drafts.amounts) and the watcher matches any transfer to it by address (chainwatch.matching).

The gap: addresses handed out after the last one paid, never paid themselves. A wallet app
looks a fixed number of addresses past its last used one (Electrum and Sparrow: 20); a payment
beyond that is on chain but not shown to the merchant until they widen their wallet's gap. So
once a wallet has RECEIVING_WALLET_GAP_LIMIT addresses outstanding, a new draft is refused with
409 `gap_limit_reached` naming the wallet, rather than hand out an address the merchant's
wallet would not watch or reuse one (docs/bitcoin-wallets.md).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import overload
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from accounts.models import User
from core.problems import Conflict, Problem
from drafts.creation import draft_create, draft_plan_for
from drafts.idempotency import KeyClaim, KeyTaken
from drafts.models import Draft
from drafts.planning import DraftPlan
from drafts.requests import DraftRequest, Origin
from wallets.descriptors import derive_address
from wallets.models import ReceivingWallet
from wallets.services import receiving_wallet_get

FIELD = "receivingWalletId"


class GapLimitReached(Conflict):
    default_code = "gap_limit_reached"


class WalletArchived(Conflict):
    default_code = "wallet_archived"


def gap_limit() -> int:
    return settings.RECEIVING_WALLET_GAP_LIMIT


def last_paid_index(wallet_id: UUID | str) -> int | None:
    """The highest index of the wallet whose draft has been paid (a payment seen), or None."""
    paid = Draft.objects.filter(receiving_wallet_id=wallet_id, paid_tx_id__isnull=False)
    last: int | None = paid.aggregate(last=Max("derivation_index"))["last"]
    return last


def unused_addresses(wallet: ReceivingWallet) -> int:
    """Addresses handed out after the last paid one (all of them if none is paid yet)."""
    last = last_paid_index(wallet.id)
    return wallet.next_index - (last + 1 if last is not None else 0)


def _usable(wallet: ReceivingWallet, network: str) -> None:
    if wallet.network != network:
        raise Problem(
            f"The receiving wallet is on {wallet.network}, not {network}.", code="network_mismatch", field=FIELD
        )
    if wallet.archived_at is not None:
        raise WalletArchived(
            f"The receiving wallet {wallet.id} is archived: it hands out no more addresses.",
            field=FIELD,
            extra={"walletId": str(wallet.id)},
        )


def _gap_check(wallet: ReceivingWallet) -> None:
    outstanding, limit = unused_addresses(wallet), gap_limit()
    if outstanding >= limit:
        raise GapLimitReached(
            f"The receiving wallet {wallet.id} has {outstanding} addresses handed out and not paid since its last "
            f"paid one (gap limit {limit}): a wallet app would not watch the next one. Let an open draft be paid or "
            "use another wallet; docs/bitcoin-wallets.md.",
            field=FIELD,
            extra={"walletId": str(wallet.id), "unusedAddresses": outstanding, "gapLimit": limit},
        )


def wallet_standin(*, user: User, request: DraftRequest) -> DraftRequest:
    """The request with the wallet's next address standing in for the receiver, to plan (and
    check) it before the lock: the account's own wallet, on the request's network, not
    archived, under its gap limit."""
    if request.receiver_address:
        raise Problem("Give receiverAddress or receivingWalletId, not both.", code="ambiguous", field=FIELD)
    if request.payment_method == "Lightning" or request.bolt11 or request.lightning_address:
        raise Problem(
            "A receiving wallet receives on chain: a Lightning draft pays its invoice instead.",
            code="conflicting_method",
            field=FIELD,
        )
    wallet = receiving_wallet_get(user=user, wallet_id=request.receiving_wallet_id, field=FIELD)
    _usable(wallet, request.network)
    _gap_check(wallet)  # before the rates are fetched; checked again under the lock
    standin = derive_address(wallet.descriptor, network=wallet.network, index=wallet.next_index)
    return replace(request, receiver_address=standin)


@overload
def wallet_draft_write(
    *, user: User, plan: DraftPlan, wallet_id: UUID | str, origin: Origin, now: datetime, key: None = None
) -> Draft: ...


@overload
def wallet_draft_write(
    *, user: User, plan: DraftPlan, wallet_id: UUID | str, origin: Origin, now: datetime, key: KeyClaim
) -> Draft | KeyTaken: ...


def wallet_draft_write(
    *, user: User, plan: DraftPlan, wallet_id: UUID | str, origin: Origin, now: datetime, key: KeyClaim | None = None
) -> Draft | KeyTaken:
    """Write a draft planned with `wallet_standin` at the wallet's next address: under the
    wallet's row lock (in the caller's transaction if any: a recurring template's run), the
    next index is taken, the draft written and the index moved on only if it was."""
    with transaction.atomic():
        locked = ReceivingWallet.objects.select_for_update().get(pk=wallet_id)
        _usable(locked, plan.asset.network)
        _gap_check(locked)
        index = locked.next_index
        address = derive_address(locked.descriptor, network=locked.network, index=index)
        if address == settings.PLATFORM_FEE_ADDRESSES.get(locked.network):
            raise Problem(
                "The wallet's next address is the operator's fee address.", code="invalid_address", field=FIELD
            )
        plan = replace(plan, receiver_address=address, receiving_wallet_id=locked.id, derivation_index=index)
        made = draft_create(user=user, plan=plan, origin=origin, now=now, key=key)
        if isinstance(made, Draft):
            ReceivingWallet.objects.filter(pk=locked.pk).update(next_index=index + 1, updated_at=now)
    return made


def wallet_draft_create(
    *, user: User, request: DraftRequest, origin: Origin, now: datetime, key: KeyClaim | None = None
) -> Draft | KeyTaken:
    """Create a draft paid at the wallet's next address (see the module's docstring)."""
    # Planned (rates, checks; network I/O) before the lock, with the next address standing in.
    standin = wallet_standin(user=user, request=request)
    plan = draft_plan_for(request=standin, origin=origin, now=now, user=user)
    assert request.receiving_wallet_id is not None  # a wallet's draft: the request names it
    return wallet_draft_write(
        user=user, plan=plan, wallet_id=request.receiving_wallet_id, origin=origin, now=now, key=key
    )
