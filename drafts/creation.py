"""Creating a draft, top-down, each step with an explicit result:

1. plan (`draft_plan_for`, drafts.planning): what the request asks, priced: rates, a
   Lightning-address invoice (network I/O, outside any transaction; nothing is written);
2. build (`draft_build`): the draft as it will be stored, unsaved, from the plan and the
   amount and fee placement picked for it (reads and writes nothing);
3. write (`draft_write`): the draft with its draft.created event, and an Idempotency-Key's
   answer when given, in one statement where the database allows: the draft, or KEY_TAKEN
   (the key held an answer: nothing written).

`draft_create` runs tries of pick-build-write until one is not AMOUNT_TAKEN (a concurrent
draft took the same amount: the try is undone, the amount picked again).
"""

from __future__ import annotations

from datetime import datetime
from functools import partial
from uuid import UUID, uuid4

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.modes import livemode_of, network_check
from core import metrics
from core.sql.rows import RowInserter, WriteRefused, rows_together, writes_in_one_statement
from core.sql.state import in_transaction, unwritten
from core.sql.values import unsaved
from drafts.amounts import (
    MAX_AMOUNT_PICKS,
    AmountTaken,
    free_amount,
    held_amounts_read,
    no_free_amount,
    open_amounts_read,
    unless_amount_taken,
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
from payments.registry import format_amount
from payments.uris import bip21_uri, eip681_uri, new_solana_reference, solana_pay_uri
from webhooks.models import EventType
from webhooks.services import event_record


def fee_placement_estimate(*, plan: DraftPlan, user=None) -> str:
    """Where a draft's fee would go, claiming nothing (a dust fee: waived while the daily allowance
    lasts; given the account, only if its allowance for today is not spent)."""
    placement = _fee_placement(user=None, plan=plan, draft_id=None)[0]
    live = user is not None and livemode_of(user)  # test mode never spends the live allowance
    if placement == FeePlacement.WAIVED and live and _claims_dust_waiver(plan):
        return FeePlacement.WAIVED if dust_waivers_left(user=user) > 0 else FeePlacement.ACCRUED
    return placement


def _fee_placement(*, user, plan: DraftPlan, draft_id: UUID | None) -> tuple[str, str | None]:
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
    asset = plan.asset
    label = settings.PAYMENT_URI_LABEL or None
    if draft.method == Method.LIGHTNING:
        return f"lightning:{draft.bolt11}"
    if asset.family == "bitcoin":
        return bip21_uri(
            address=draft.receiver_address, amount_sats=draft.amount_base_units, label=label, message=draft.memo
        )
    if asset.family == "solana":
        return solana_pay_uri(
            recipient=draft.receiver_address,
            amount=format_amount(draft.amount_base_units, asset),
            spl_token=asset.token_address if asset.kind == "token" else None,
            reference=draft.solana_reference,
            label=label,
            message=draft.memo,
        )
    return eip681_uri(
        chain_id=asset.chain_id,
        recipient=draft.receiver_address,
        amount_base_units=draft.amount_base_units,
        token_address=asset.token_address if asset.kind == "token" else None,
    )


def draft_create_from_request(
    *,
    user,
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


def draft_plan_for(*, request: DraftRequest, origin: Origin, now: datetime, user=None) -> DraftPlan:
    """Plan a draft of this origin: rates, Lightning-address invoices (network I/O, so outside
    any transaction; nothing is written). Given the account, a test-mode caller is held to test
    networks. A caller that must lock a row of its own before writing plans with this, then
    calls `draft_create` under its lock."""
    if user is not None:
        network_check(user, request.network)
    return draft_plan(
        request=request, now=now, is_fee_settlement=origin.is_fee_settlement, charges_fee=origin.charges_fee
    )


def draft_create(
    *, user, plan: DraftPlan, origin: Origin, now: datetime | None = None, key: KeyClaim | None = None
) -> Draft | KeyTaken:
    """Write a planned draft and its draft.created event (and its deliveries, and the key's
    answer) at once: the draft, or KEY_TAKEN (nothing written). A try whose amount a concurrent
    draft took first is undone and the amount picked again. Outside a transaction on
    PostgreSQL the whole creation is one statement (webhooks.services.event_record); inside
    the caller's (a pay link, a refund, a template locked first), a savepoint per try."""
    now = now or timezone.now()
    one_try = partial(_one_try, user=user, plan=plan, origin=origin, now=now, key=key)
    one_statement = not _claims_dust_waiver(plan)  # claiming a dust waiver is a write of its own
    for attempt in range(MAX_AMOUNT_PICKS):
        written = unless_amount_taken(
            plan, user=user, write=partial(one_try, first_try=attempt == 0), one_statement=one_statement
        )
        if isinstance(written, Draft):
            count_on_commit(metrics.drafts_created, written)
        if not isinstance(written, AmountTaken):
            return written
    raise no_free_amount("amountSats")


def _one_try(*, user, plan: DraftPlan, origin: Origin, now: datetime, key: KeyClaim | None, first_try: bool):
    """Read what the amount and the fee depend on, pick them, build the draft and write it.

    The first try of an exact draft takes the amount as asked unless its account's closed
    drafts still hold it (a clash with an open one the unique index catches); later tries look
    up the open amounts first. The fee cap and a
    fiat-priced draft's open amounts are read in one round trip. On the first try, where the
    write is one statement, that read is folded into it instead: the draft is written at the
    amount as asked unless the account is blocked or an open draft holds that amount, and only
    then are they read (`_write_as_asked`)."""
    accrues = plan.method != Method.MULTI_OUTPUT and plan.fee is not None and livemode_of(user)  # never in test mode
    if first_try:
        written = _write_as_asked(user=user, plan=plan, origin=origin, now=now, key=key, accrues=accrues)
        if written is not None:
            return written
    fee_cap = ledger.outstanding_read(user) if accrues else None
    amounts = open_amounts_read(plan)  # with it, the amounts closed drafts hold (fiat-priced only)
    held = held_amounts_read(plan, user=user, now=now) if amounts is not None else None
    reads = [read for read in (fee_cap, amounts, held) if read is not None]
    found = rows_together(*reads) if reads else []
    if accrues:
        ledger.ensure_not_blocked(user, totals=found.pop(0))
    taken = {amount for rows in found for (amount,) in rows} if found else None
    # Never optimistic: an exact draft's first try carried its checks in the write (refused, or
    # it could not carry them), and the unique index does not cover the amounts closed drafts hold.
    amount, nudge = free_amount(plan, user=user, optimistic=False, taken=taken, now=now)
    return _build_and_write(user=user, plan=plan, origin=origin, now=now, key=key, amount=amount, nudge=nudge)


def _write_as_asked(*, user, plan: DraftPlan, origin: Origin, now: datetime, key: KeyClaim | None, accrues: bool):
    """The first try's write at the amount as asked, refused in its own statement when the
    account is blocked by its fee cap, (fiat-priced) an open draft already bills that amount or
    (matched by amount) a closed draft still holds it (`drafts.amounts.held_amounts_read`):
    what `_one_try` would otherwise read before writing. None when refused (nothing written;
    the caller reads and picks) or when this write cannot carry the check (no such check is
    needed, the write is not one statement, or the try claims a dust waiver first)."""
    if not origin.announce or not writes_in_one_statement(transaction.get_connection()) or _claims_dust_waiver(plan):
        return None
    checks = ledger.blocked_reads(user) if accrues else []
    # An open draft bills the amount as asked, or a closed one still holds it.
    for held in (open_amounts_read(plan, nudges=0), held_amounts_read(plan, user=user, now=now, nudges=0)):
        if held is not None:
            checks.append(held)
    if not checks:  # nothing to read first: the usual try writes at once too
        return None
    try:
        return _build_and_write(
            user=user, plan=plan, origin=origin, now=now, key=key, amount=plan.amount_base_units, nudge=0, unless=checks
        )
    except WriteRefused:
        return None


def _build_and_write(
    *, user, plan: DraftPlan, origin: Origin, now: datetime, key: KeyClaim | None, amount: int, nudge: int, unless=()
) -> Draft | KeyTaken:
    draft_id = uuid4()
    placement, fee_address = _fee_placement(user=user, plan=plan, draft_id=draft_id)  # may claim a dust waiver
    draft = draft_build(
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
    return draft_write(draft, user=user, announce=origin.announce, key=key, unless=unless)


def count_on_commit(counter, draft: Draft) -> None:
    """An in-process counter, moved once the draft's transaction (if any) has committed."""
    if in_transaction():
        transaction.on_commit(lambda: metrics.draft_counted(counter, draft))
    else:
        metrics.draft_counted(counter, draft)


def draft_build(
    *,
    user,
    plan: DraftPlan,
    origin: Origin,
    now: datetime,
    draft_id: UUID,
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


def draft_write(draft: Draft, *, user, announce: bool, key: KeyClaim | None, unless=()) -> Draft | KeyTaken:
    """Write a built draft: the key's answer first (when given), then the draft, then its
    draft.created event and deliveries (unless not `announce`d), in one statement where the
    database allows. The draft, or KEY_TAKEN: the key already held an answer and nothing was
    written. (An amount another draft took meanwhile raises the unique index's IntegrityError:
    `unless_amount_taken` around the try turns it into AMOUNT_TAKEN.) `unless` (announced
    drafts only): reads that refuse the write when one finds a row (WriteRefused, nothing
    written; core.sql.rows.insert_then_fetch)."""
    key_row = key.row(draft) if key is not None else None
    rows = [*([key_row] if key_row is not None else []), (_DRAFT_INSERT, draft)]
    if announce:
        event_record(
            user=user,
            type=EventType.DRAFT_CREATED,
            data=draft_event_data(draft, occurred_at=draft.created_at),
            draft_id=draft.id,
            livemode=draft.livemode,
            along=rows,
            unless=unless,
        )
    else:
        if unless:
            raise ValueError("a draft written without its event cannot carry `unless`")
        for inserter, instance in rows:
            if not inserter.insert(instance):
                break
    if key_row is not None and unwritten(key_row[1]):
        return KEY_TAKEN
    return draft


def _no_fee_json(plan: DraftPlan) -> dict:
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
