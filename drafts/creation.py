"""Creating a draft, top-down, each step with an explicit result:

1. plan (`draft_plan_for`, drafts.planning): what the request asks, priced: rates, a
   Lightning-address invoice (network I/O, outside any transaction; nothing is written);
2. build (`draft_build`): the draft as it will be stored, unsaved, from the plan and the
   amount and fee placement picked for it (reads and writes nothing);
3. write (`draft_write`): the draft with its draft.created event, and an Idempotency-Key's
   answer when given, by the database's write of rows together (core.sql.writes, one
   statement on PostgreSQL): the draft, KEY_TAKEN (the key held an answer: nothing written)
   or Refused (a check the write carried found a row: nothing written).

`draft_create` runs tries of pick-build-write until one is neither AMOUNT_TAKEN (a concurrent
draft took the same amount: the try is undone, the amount picked again) nor Refused (the
next try reads what the write carried, and picks). docs/architecture.md, "Worked example",
walks a REST creation from the URL to the INSERT.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, overload
from uuid import UUID

from django.conf import settings
from django.db import connections, router, transaction
from django.utils import timezone
from prometheus_client import Counter

from accounts.models import User
from accounts.modes import livemode_of, network_check
from core import metrics
from core.ids import time_ordered_uuid
from core.sql.rows import RowInserter, Select, rows_together, writes_in_one_statement
from core.sql.state import in_transaction
from core.sql.values import unsaved
from core.sql.writes import Conflicted, Refused, Written, rows_write
from drafts.amounts import (
    AMOUNT_TAKEN,
    MAX_AMOUNT_PICKS,
    AmountTaken,
    amount_guard,
    free_amount,
    held_amounts_read,
    no_free_amount,
    open_amounts_read,
)
from drafts.events import draft_event_data
from drafts.idempotency import KEY_TAKEN, KeyClaim, KeyTaken
from drafts.models import Draft
from drafts.planning import DraftPlan, draft_plan
from drafts.requests import DraftRequest, Origin
from fees import ledger
from fees.calculator import is_dust
from fees.services import dust_waiver_claim, dust_waivers_left
from payments.enums import FeePlacement, Method
from payments.registry import Asset, format_amount
from payments.uris import bip21_uri, eip681_uri, new_solana_reference, solana_pay_uri
from webhooks.fanout import DELIVERIES
from webhooks.models import EventType
from webhooks.services import event_announced, event_row, event_unsaved


def fee_placement_estimate(*, plan: DraftPlan, user: User | None = None) -> str:
    """Where a draft's fee would go, claiming nothing (a dust fee: waived while the daily allowance
    lasts; given the account, only if its allowance for today is not spent)."""
    placement = _fee_placement(user=None, plan=plan, draft_id=None)[0]
    live = user is not None and livemode_of(user)  # test mode never spends the live allowance
    if placement == FeePlacement.WAIVED and live and _claims_dust_waiver(plan):
        return FeePlacement.WAIVED if dust_waivers_left(user=user) > 0 else FeePlacement.ACCRUED
    return placement


def _fee_placement(*, user: User | None, plan: DraftPlan, draft_id: UUID | None) -> tuple[str, str | None]:
    """Where the fee goes: an output of the payer's transaction, the accrued balance, or waived.

    Without a draft (an estimate) a dust fee is not claimed against the daily waiver allowance.
    """
    if plan.fee is None:
        return FeePlacement.WAIVED, None
    if plan.method != Method.MULTI_OUTPUT:
        return FeePlacement.ACCRUED, None
    if _claims_dust_waiver(plan):
        if draft_id is None or not livemode_of(user):  # test mode never spends the live allowance
            return FeePlacement.WAIVED, None
        waived = dust_waiver_claim(user=user, draft_id=draft_id, fee_base_units=plan.fee.fee_base_units)
        return (FeePlacement.WAIVED if waived else FeePlacement.ACCRUED), None
    fee_address = settings.PLATFORM_FEE_ADDRESSES.get(plan.asset.network)
    if not fee_address:
        return FeePlacement.ACCRUED, None  # no operator address for this network: the fee accrues instead
    return FeePlacement.OUTPUT, fee_address


def _claims_dust_waiver(plan: DraftPlan) -> bool:
    """A MultiOutput dust fee: creating the draft also claims the day's waiver allowance."""
    return (
        plan.fee is not None
        and plan.method == Method.MULTI_OUTPUT
        and is_dust(asset=plan.asset, fee_base_units=plan.fee.fee_base_units)
    )


def payment_uri(draft: Draft, plan: DraftPlan) -> str:
    return payment_uri_for(draft, plan.asset, draft.amount_base_units)


def payment_uri_for(draft: Draft, asset: Asset, amount_base_units: int) -> str:
    """The draft's payment URI (BIP21, EIP-681, Solana Pay, or its Lightning invoice) for
    `amount_base_units`: the whole amount, or the rest of a short payment (paylinks.views)."""
    label = settings.PAYMENT_URI_LABEL or None
    if draft.method == Method.LIGHTNING:
        return f"lightning:{draft.bolt11}"
    address = draft.receiver_address
    assert address is not None  # an on-chain draft is paid to its receiving address
    if asset.family == "bitcoin":
        return bip21_uri(address=address, amount_sats=amount_base_units, label=label, message=draft.memo)
    if asset.family == "solana":
        assert draft.solana_reference is not None  # every Solana draft has its reference key
        return solana_pay_uri(
            recipient=address,
            amount=format_amount(amount_base_units, asset),
            spl_token=asset.token_address if asset.kind == "token" else None,
            reference=draft.solana_reference,
            label=label,
            message=draft.memo,
        )
    assert asset.chain_id is not None  # the EVM family: every network has its chain id
    return eip681_uri(
        chain_id=asset.chain_id,
        recipient=address,
        amount_base_units=amount_base_units,
        token_address=asset.token_address if asset.kind == "token" else None,
    )


@overload
def draft_create_from_request(
    *,
    user: User,
    request: DraftRequest,
    origin: Origin | None = None,
    now: datetime | None = None,
    key: None = None,
) -> Draft: ...


@overload
def draft_create_from_request(
    *,
    user: User,
    request: DraftRequest,
    origin: Origin | None = None,
    now: datetime | None = None,
    key: KeyClaim,
) -> Draft | KeyTaken: ...


def draft_create_from_request(
    *,
    user: User,
    request: DraftRequest,
    origin: Origin | None = None,
    now: datetime | None = None,
    key: KeyClaim | None = None,
) -> Draft | KeyTaken:
    """The one door to create a draft, for every surface (REST, MCP, checkout, templates, demo).

    Plans first (rates, Lightning-address invoices: network I/O outside any transaction), then
    writes the draft and its draft.created event (and the key's answer) at once: the draft, or
    KEY_TAKEN when `key` already held an answer (nothing written).
    """
    origin = origin or Origin.api()
    now = now or timezone.now()
    if request.receiving_wallet_id is not None:  # a fresh address, allocated under the wallet's lock
        from drafts.wallets import wallet_draft_create

        return wallet_draft_create(user=user, request=request, origin=origin, now=now, key=key)
    plan = draft_plan_for(request=request, origin=origin, now=now, user=user)
    return draft_create(user=user, plan=plan, origin=origin, now=now, key=key)


def draft_plan_for(*, request: DraftRequest, origin: Origin, now: datetime, user: User | None = None) -> DraftPlan:
    """Plan a draft of this origin: rates, Lightning-address invoices (network I/O, so outside
    any transaction; nothing is written). Given the account, a test-mode caller is held to test
    networks. A caller that must lock a row of its own before writing plans with this, then
    calls `draft_create` under its lock."""
    if user is not None:
        network_check(user, request.network)
    return draft_plan(
        request=request, now=now, is_fee_settlement=origin.is_fee_settlement, charges_fee=origin.charges_fee
    )


@overload
def draft_create(
    *, user: User, plan: DraftPlan, origin: Origin, now: datetime | None = None, key: None = None
) -> Draft: ...


@overload
def draft_create(
    *, user: User, plan: DraftPlan, origin: Origin, now: datetime | None = None, key: KeyClaim
) -> Draft | KeyTaken: ...


def draft_create(
    *, user: User, plan: DraftPlan, origin: Origin, now: datetime | None = None, key: KeyClaim | None = None
) -> Draft | KeyTaken:
    """Write a planned draft and its draft.created event (and its deliveries, and the key's
    answer) at once: the draft, or KEY_TAKEN (nothing written).

    Tries of pick-build-write, each under `amount_guard`: a try whose amount a concurrent draft
    took first is undone (AMOUNT_TAKEN) and the amount picked again. The first try, where the
    write is one statement, takes the amount as asked and carries in its write the checks a
    try would otherwise read for first (`_checks_carried`: the fee cap, the amount billed or
    held by another draft); refused by them (nothing written), the next try reads and picks.
    Outside a transaction on PostgreSQL the whole creation is one statement; inside the
    caller's (a pay link, a refund, a template locked first), a savepoint per try."""
    now = now or timezone.now()
    accrues = plan.method != Method.MULTI_OUTPUT and plan.fee is not None and livemode_of(user)  # never in test mode
    one_statement = not _claims_dust_waiver(plan)  # claiming a dust waiver is a write of its own
    carried = _checks_carried(user=user, plan=plan, origin=origin, now=now, accrues=accrues)
    for attempt in range(MAX_AMOUNT_PICKS + (1 if carried else 0)):
        as_asked = attempt == 0 and bool(carried)
        written: Draft | KeyTaken | Refused | AmountTaken = AMOUNT_TAKEN  # unless the try's write ends
        with amount_guard(plan, user=user, one_statement=one_statement):
            amount, nudge = (
                (plan.amount_base_units, 0)
                if as_asked
                else _amount_picked(user=user, plan=plan, now=now, accrues=accrues)
            )
            draft = _draft_for(user=user, plan=plan, origin=origin, now=now, amount=amount, nudge=nudge)
            written = draft_write(
                draft, user=user, announce=origin.announce, key=key, unless=carried if as_asked else ()
            )
        if isinstance(written, Draft):
            count_on_commit(metrics.drafts_created, written)
            return written
        if isinstance(written, KeyTaken):
            return written
        # Refused (what the write carried found a row) or AmountTaken: read, then pick again
    raise no_free_amount("amountSats")


def _checks_carried(
    *, user: User, plan: DraftPlan, origin: Origin, now: datetime, accrues: bool
) -> list[tuple[Select, Sequence[Any]]]:
    """What the first try's write carries, refused in its own statement when one finds a row:
    the fee cap (`fees.ledger.blocked_reads`), an open draft already billing the amount as asked
    (fiat-priced) or a closed one still holding it (matched by amount:
    `drafts.amounts.held_amounts_read`). Empty when the write cannot carry them (not announced,
    not one statement, or the try claims a dust waiver first) or nothing needs reading."""
    if not origin.announce or not writes_in_one_statement(transaction.get_connection()) or _claims_dust_waiver(plan):
        return []
    checks: list[tuple[Select, Sequence[Any]]] = list(ledger.blocked_reads(user)) if accrues else []
    # An open draft bills the amount as asked, or a closed one still holds it.
    for held in (open_amounts_read(plan, nudges=0), held_amounts_read(plan, user=user, now=now, nudges=0)):
        if held is not None:
            checks.append(held)
    return checks


def _amount_picked(*, user: User, plan: DraftPlan, now: datetime, accrues: bool) -> tuple[int, int]:
    """Read what the amount and the fee depend on, and pick the amount (and its nudge).

    The fee cap (a blocked account: 402) and a fiat-priced draft's open and held amounts are
    read in one round trip. Never optimistic: an exact draft's first try carried its checks in
    the write (refused, or it could not carry them), and the unique index does not cover the
    amounts closed drafts hold."""
    fee_cap = ledger.outstanding_read(user) if accrues else None
    amounts = open_amounts_read(plan)  # with it, the amounts closed drafts hold (fiat-priced only)
    held = held_amounts_read(plan, user=user, now=now) if amounts is not None else None
    reads = [read for read in (fee_cap, amounts, held) if read is not None]
    found = rows_together(*reads) if reads else []
    if accrues:
        ledger.ensure_not_blocked(user, totals=found.pop(0))
    taken = {amount for rows in found for (amount,) in rows} if found else None
    return free_amount(plan, user=user, optimistic=False, taken=taken, now=now)


def _draft_for(*, user: User, plan: DraftPlan, origin: Origin, now: datetime, amount: int, nudge: int) -> Draft:
    """The draft of one try, unsaved: its fee placed (a dust fee may claim the day's waiver,
    a write in the try's transaction) and built."""
    draft_id = time_ordered_uuid()  # core/ids.py: the key the drafts' primary key index takes last
    placement, fee_address = _fee_placement(user=user, plan=plan, draft_id=draft_id)  # may claim a dust waiver
    return draft_build(
        user=user,
        plan=plan,
        origin=origin,
        now=now,
        draft_id=draft_id,
        amount=amount,
        nudge=nudge,
        placement=placement,
        fee_address=fee_address,
    )


def count_on_commit(counter: Counter, draft: Draft) -> None:
    """An in-process counter, moved once the draft's transaction (if any) has committed."""
    if in_transaction():
        transaction.on_commit(lambda: metrics.draft_counted(counter, draft))
    else:
        metrics.draft_counted(counter, draft)


def draft_build(
    *,
    user: User,
    plan: DraftPlan,
    origin: Origin,
    now: datetime,
    draft_id: UUID | str,
    amount: int,
    nudge: int,
    placement: str,
    fee_address: str | None,
) -> Draft:
    """The draft as it will be stored, unsaved: from the plan, the amount picked (and its
    nudge) and the fee's placement. Reads and writes nothing."""
    asset = plan.asset
    draft = unsaved(
        Draft,
        id=draft_id,
        user=user,
        network=asset.network,
        currency=asset.currency,
        method=plan.method,
        token_address=asset.token_address if asset.kind == "token" else None,
        receiver_address=plan.receiver_address,
        sender_address=plan.sender_address,
        lightning_address=plan.lightning_address,
        memo=plan.memo,
        amount_base_units=amount,
        fiat_currency=plan.fiat_currency,
        fiat_amount=plan.fiat_amount,
        rate=plan.quote.rate,
        usd_rate=plan.usd_rate,
        rate_source=plan.quote.source,
        quote_sources=plan.quote.sources,
        quote_locked_at=plan.quote.locked_at,
        quote_expires_at=plan.quote.expires_at,
        quote_nudge_base_units=nudge,
        sek=plan.sek,
        bolt11=plan.bolt11,
        payment_hash=plan.payment_hash,
        invoice_expires_at=plan.invoice_expires_at,
        lnurl_verify_url=plan.lnurl_verify_url,
        required_confirmations=plan.required_confirmations,
        expires_at=plan.expires_at,
        created_at=now,
        updated_at=now,  # a new draft's: so an answer built before the INSERT shows what it stores
        is_fee_settlement=plan.is_fee_settlement,
        solana_reference=new_solana_reference() if asset.family == "solana" else None,
        origin=origin.kind,
        payment_request_id=origin.payment_request_id,
        order_id=origin.order_id,
        template_id=origin.template_id,
        livemode=livemode_of(user),
        fee_placement=placement,
        platform_fee_address=fee_address,
        receiving_wallet_id=plan.receiving_wallet_id,
        derivation_index=plan.derivation_index,
    )
    if plan.fee is not None:
        draft.fee_usd, draft.fee_base_units = plan.fee.fee_usd, plan.fee.fee_base_units
        draft.platform_fee = plan.fee.as_json(placement)
    else:
        draft.platform_fee = _no_fee_json(plan)
    draft.payment_uri = payment_uri(draft, plan)
    return draft


_DRAFT_INSERT = RowInserter(Draft)  # every creation: the 40-column INSERT is built once


def draft_write(
    draft: Draft,
    *,
    user: User,
    announce: bool,
    key: KeyClaim | None,
    unless: Sequence[tuple[Select, Sequence[Any]]] = (),
) -> Draft | KeyTaken | Refused:
    """Write a built draft: the key's answer first (when given), then the draft, then its
    draft.created event and deliveries (unless not `announce`d), by the database's write of
    rows together (core.sql.writes: one statement on PostgreSQL). The draft; KEY_TAKEN: the
    key already held an answer and nothing was written; or (announced drafts only) Refused:
    one of the `unless` reads found a row and nothing was written. (An amount another draft
    took meanwhile raises the unique index's IntegrityError: `amount_guard` around the try
    turns it into AMOUNT_TAKEN.)"""
    key_row = key.row(draft) if key is not None else None
    rows = [*([key_row] if key_row is not None else []), (_DRAFT_INSERT, draft)]
    if not announce:
        if unless:
            raise ValueError("a draft written without its event cannot carry `unless`")
        for inserter, instance in rows:
            if not inserter.insert(instance):
                return KEY_TAKEN  # only the key's row is refusable
        return draft
    event = event_unsaved(
        user=user,
        type=EventType.DRAFT_CREATED,
        data=draft_event_data(draft, occurred_at=draft.created_at),
        draft_id=draft.id,
        livemode=draft.livemode,
    )
    connection = connections[router.db_for_write(DELIVERIES.model)]
    written = rows_write(connection)(connection, [*rows, event_row(event)], DELIVERIES, event, unless=unless)
    if isinstance(written, Written):
        event_announced(event, written.found)
        return draft
    return KEY_TAKEN if isinstance(written, Conflicted) else written  # the key's row is the only refusable one


def _no_fee_json(plan: DraftPlan) -> dict[str, Any]:
    return {
        "percent": 0,
        "feeUsd": 0,
        "feeFiat": 0,
        "fiatCurrency": plan.quote.fiat_currency,
        "feeBaseUnits": 0,
        "feeAmount": "0",
        "currency": plan.asset.currency,
        "placement": FeePlacement.WAIVED,
        "accrued": False,
        "waived": True,
    }
