"""Draft state changes. Every status change goes through `_transition`, which locks the
row and records the event in the same transaction."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from config import metrics
from config.problems import Conflict
from config.rows import RowInserter, Select, rows_together, writes_in_one_statement
from config.wire import json_datetime
from drafts.events import draft_event_data
from drafts.models import OPEN_STATUSES, TUPLE_MATCHED_NETWORKS, Draft
from drafts.planning import DraftPlan, draft_plan
from drafts.requests import DraftRequest, Origin
from fees import ledger
from fees.calculator import is_dust
from fees.services import dust_waiver_claim, dust_waivers_left
from payments.enums import DraftStatus as S
from payments.enums import FeePlacement, Method
from payments.registry import format_amount
from payments.uris import bip21_uri, eip681_uri, new_solana_reference, solana_pay_uri
from webhooks.models import EventType
from webhooks.services import event_record

# Where each status may go. Expired drafts stay watched for late payments (grace window).
ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    S.PENDING: {S.SEEN, S.AMOUNT_MISMATCH, S.EXPIRED, S.CANCELLED},
    S.SEEN: {S.CONFIRMED, S.PENDING},
    S.AMOUNT_MISMATCH: {S.SEEN, S.CANCELLED, S.PENDING},
    S.EXPIRED: {S.SEEN, S.AMOUNT_MISMATCH},
    S.CONFIRMED: set(),
    S.CANCELLED: set(),
}
MISMATCH_WINDOW_PERCENT = 10


class TransitionNotAllowed(Conflict):
    default_code = "invalid_state"


# Apps built on drafts that keep a status following a draft's (a pay link becomes Paid)
# register here from their AppConfig.ready, so drafts imports none of them. A listener runs
# inside the transaction that confirms the draft, with the draft's row locked.
_confirmed_listeners: list[Callable[..., None]] = []


def on_draft_confirmed(listener: Callable[..., None]) -> Callable[..., None]:
    """Call `listener(draft=..., now=...)` whenever a draft becomes Confirmed."""
    if listener not in _confirmed_listeners:
        _confirmed_listeners.append(listener)
    return listener


def _locked(draft_id: UUID) -> Draft:
    return Draft.objects.select_for_update().get(pk=draft_id)


def _transition(draft: Draft, to: str, *, event: str | None, now: datetime) -> None:
    """Move a locked draft to `to` and record its event. Caller holds the row lock."""
    if to not in ALLOWED_TRANSITIONS[draft.status]:
        raise TransitionNotAllowed(
            f"A {draft.status} draft cannot become {to}.", extra={"draftStatus": draft.status, "draftId": str(draft.id)}
        )
    draft.status = to
    draft.save()
    _settle_fees_on(draft, to, now)
    if event:
        event_record(user=draft.user, type=event, data=draft_event_data(draft, occurred_at=now), draft_id=draft.id)
    if to == S.CONFIRMED:
        for listener in _confirmed_listeners:
            listener(draft=draft, now=now)
        _count_on_commit(metrics.drafts_confirmed, draft)


def _settle_fees_on(draft: Draft, to: str, now: datetime) -> None:
    """Fee ledger bookkeeping that must happen in the same transaction as the status change."""
    if to == S.CONFIRMED:
        if draft.is_fee_settlement:
            ledger.settlement_confirmed(settlement=draft, now=now)
        elif draft.fee_placement == FeePlacement.ACCRUED:
            ledger.fee_accrue(draft=draft, now=now)
    elif to in (S.EXPIRED, S.CANCELLED) and draft.is_fee_settlement:
        ledger.settlement_abandoned(settlement=draft)


@dataclass(frozen=True)
class PaymentObservation:
    """What a watcher (or the demo's simulator) saw of one transfer to a draft."""

    tx_id: str
    received_base_units: int
    confirmations: int = 0
    # False when the on-chain amount had a fraction below one base unit (a wei value that is
    # not whole gwei): it can then never be the exact amount, only a mismatch.
    amount_exact: bool = True
    # MultiOutput only: whether the same transaction paid the fee output (None: not applicable).
    fee_output_present: bool | None = None
    # Final by the network's own rule (Solana finalized, Lightning preimage checked).
    final: bool = False
    # The transfer left the chain (reorg) or the mempool before it was confirmed.
    vanished: bool = False
    # A split payment: every transaction of it (`tx_id` is the first); their sum is received_base_units.
    parts: tuple[str, ...] = ()


def is_within_mismatch_window(expected: int, received: int) -> bool:
    """Within 10% (inclusive) of the billed amount, integer arithmetic only."""
    return abs(received - expected) * 100 <= expected * MISMATCH_WINDOW_PERCENT


def draft_payment_apply(*, draft_id: UUID, observation: PaymentObservation, now: datetime | None = None) -> Draft:
    """The one door for a payment observed on chain: applied under one row lock, in one transaction.

    Exact amount: Pending/Expired -> Seen (draft.seen), then Confirmed at the required
    confirmations or when final. Within 10%: -> AmountMismatch (draft.amount_mismatch). Further
    off: ignored. A MultiOutput payment without its fee output still pays the draft; its fee then
    accrues. Repeated observations of the paying transaction only update the count; a vanished
    one sends the draft back to Pending. Safe to repeat: what is recorded is never announced twice.
    """
    now = now or timezone.now()
    obs = observation
    with transaction.atomic():
        draft = _locked(draft_id)
        paying = draft.paid_tx_id == obs.tx_id and draft.status in (S.SEEN, S.AMOUNT_MISMATCH)
        if obs.vanished:
            return _payment_vanished(draft, now) if paying else draft
        if draft.status in (S.CONFIRMED, S.CANCELLED):
            return draft
        if paying:
            return _update_confirmations(draft, obs.confirmations, now, final=obs.final)
        if draft.status in (S.SEEN, S.AMOUNT_MISMATCH):
            return draft  # already paid by another transaction; one payment per draft
        exact = obs.amount_exact and obs.received_base_units == draft.amount_base_units
        if not exact and not is_within_mismatch_window(draft.amount_base_units, obs.received_base_units):
            return draft
        if obs.fee_output_present is False and draft.fee_placement == FeePlacement.OUTPUT:
            draft.fee_placement = FeePlacement.ACCRUED
            draft.platform_fee = {**draft.platform_fee, "placement": FeePlacement.ACCRUED, "accrued": True}
        draft.paid_tx_id, draft.received_base_units = obs.tx_id, obs.received_base_units
        draft.paid_tx_ids = list(obs.parts) or [obs.tx_id]
        draft.confirmations, draft.seen_at = max(obs.confirmations, 0), now
        draft.paid_late = draft.paid_late or draft.status == S.EXPIRED
        if exact:
            _transition(draft, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
            return _update_confirmations(draft, obs.confirmations, now, final=obs.final)
        draft.amount_mismatch = {
            "txId": obs.tx_id,
            "expectedBaseUnits": draft.amount_base_units,
            "receivedBaseUnits": obs.received_base_units,
            "differenceBaseUnits": obs.received_base_units - draft.amount_base_units,
            "confirmations": draft.confirmations,
            "detectedAt": json_datetime(now),
            "acceptedAt": None,
        }
        _transition(draft, S.AMOUNT_MISMATCH, event=EventType.DRAFT_AMOUNT_MISMATCH, now=now)
        return draft


def draft_payment_observed(
    *,
    draft_id: UUID,
    tx_id: str,
    received_base_units: int,
    confirmations: int,
    amount_exact: bool = True,
    now: datetime | None = None,
) -> Draft:
    """Shorthand of `draft_payment_apply` for a plain transfer (tests, the demo's simulator)."""
    observation = PaymentObservation(
        tx_id=tx_id, received_base_units=received_base_units, confirmations=confirmations, amount_exact=amount_exact
    )
    return draft_payment_apply(draft_id=draft_id, observation=observation, now=now)


def _update_confirmations(draft: Draft, confirmations: int, now: datetime, *, final: bool = False) -> Draft:
    draft.confirmations = max(confirmations, 0)
    if final:
        draft.confirmations = max(draft.confirmations, draft.required_confirmations)
    if draft.amount_mismatch is not None:
        draft.amount_mismatch = {**draft.amount_mismatch, "confirmations": draft.confirmations}
    if draft.status == S.SEEN and draft.confirmations >= draft.required_confirmations:
        draft.confirmed_at = now
        _transition(draft, S.CONFIRMED, event=EventType.DRAFT_CONFIRMED, now=now)
    else:
        draft.save()
    return draft


def _payment_vanished(draft: Draft, now: datetime) -> Draft:
    """The paying transaction left the chain (a reorg) or the mempool before confirmation: back
    to Pending, with draft.payment_reverted (opt-in) and an email, so a merchant who acted on
    draft.seen hears of it."""
    reverted_tx_id, previous_status = draft.paid_tx_id, draft.status
    draft.paid_tx_id, draft.received_base_units, draft.confirmations = None, None, 0
    draft.paid_tx_ids = []
    draft.amount_mismatch, draft.seen_at, draft.accepted_by_owner = None, None, False
    _transition(draft, S.PENDING, event=None, now=now)
    data = {**draft_event_data(draft, occurred_at=now), "txId": reverted_tx_id, "previousStatus": previous_status}
    event_record(user=draft.user, type=EventType.DRAFT_PAYMENT_REVERTED, data=data, draft_id=draft.id)
    return draft


def draft_accept_received(*, draft: Draft, now: datetime | None = None) -> Draft:
    """The owner accepts a transfer of a different amount (AmountMismatch -> Seen)."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(draft.id)
        if locked.status != S.AMOUNT_MISMATCH:
            raise TransitionNotAllowed(
                "Only a draft in AmountMismatch can accept a received amount.",
                code="accept_not_allowed",
                extra={"draftStatus": locked.status},
            )
        locked.accepted_by_owner = True
        locked.amount_mismatch = {**locked.amount_mismatch, "acceptedAt": json_datetime(now)}
        _transition(locked, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
        return _update_confirmations(locked, locked.confirmations, now)


class AmountNotAccepted(Conflict):
    default_code = "amount_not_accepted"


def draft_payment_attach(
    *, draft: Draft, observation: PaymentObservation, accept_amount: bool = False, now: datetime | None = None
) -> Draft:
    """The owner says an unmatched transfer pays this draft (Pending or Expired).

    The exact amount pays it as a watcher's match would. Within 10% it is accepted as
    accept-received accepts a mismatch (draft.seen with acceptedByOwner); further off only with
    `accept_amount`. Confirmation then follows the transfer's confirmations as usual.
    """
    now = now or timezone.now()
    obs = observation
    with transaction.atomic():
        locked = _locked(draft.id)
        if locked.status not in (S.PENDING, S.EXPIRED):
            raise TransitionNotAllowed(
                f"A {locked.status} draft cannot take another payment.",
                code="attach_not_allowed",
                extra={"draftStatus": locked.status},
            )
        exact = obs.amount_exact and obs.received_base_units == locked.amount_base_units
        if (
            not exact
            and not accept_amount
            and not is_within_mismatch_window(locked.amount_base_units, obs.received_base_units)
        ):
            raise AmountNotAccepted(
                "The transfer differs from the billed amount by more than 10%; send acceptAmount: true to "
                "accept it as payment of this draft anyway.",
                field="acceptAmount",
            )
        locked.paid_tx_id, locked.received_base_units = obs.tx_id, obs.received_base_units
        locked.paid_tx_ids = list(obs.parts) or [obs.tx_id]
        locked.confirmations, locked.seen_at = max(obs.confirmations, 0), now
        locked.paid_late = locked.paid_late or locked.status == S.EXPIRED
        if not exact:
            locked.accepted_by_owner = True
            locked.amount_mismatch = {
                "txId": obs.tx_id,
                "expectedBaseUnits": locked.amount_base_units,
                "receivedBaseUnits": obs.received_base_units,
                "differenceBaseUnits": obs.received_base_units - locked.amount_base_units,
                "confirmations": locked.confirmations,
                "detectedAt": json_datetime(now),
                "acceptedAt": json_datetime(now),
            }
        _transition(locked, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
        return _update_confirmations(locked, obs.confirmations, now, final=obs.final)


def draft_cancel(*, draft: Draft, now: datetime | None = None) -> Draft:
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(draft.id)
        if locked.status not in (S.PENDING, S.AMOUNT_MISMATCH):
            raise TransitionNotAllowed(
                f"A {locked.status} draft cannot be cancelled.",
                code="cancel_not_allowed",
                extra={"draftStatus": locked.status},
            )
        _transition(locked, S.CANCELLED, event=EventType.DRAFT_CANCELLED, now=now)
        return locked


def draft_expire(*, draft_id: UUID, now: datetime | None = None) -> Draft | None:
    """Pending past its expiry -> Expired (draft.expired). Safe to call twice."""
    now = now or timezone.now()
    with transaction.atomic():
        draft = _locked(draft_id)
        if draft.status != S.PENDING or draft.expires_at > now:
            return None
        _transition(draft, S.EXPIRED, event=EventType.DRAFT_EXPIRED, now=now)
        return draft


def draft_supersede(*, draft: Draft, now: datetime | None = None, announce: bool = True) -> Draft | None:
    """A pay link's payer chose another option: the Pending draft they left is cancelled (or
    expired, when past its time: a payment may still be on its way and stays watched) and
    marked superseded. Without `announce` no draft.cancelled/draft.expired event is recorded."""
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(draft.id)
        if locked.status == S.EXPIRED and locked.superseded_at is None:  # left after it expired
            locked.superseded_at = now
            locked.save(update_fields=["superseded_at", "updated_at"])
            return locked
        if locked.status != S.PENDING:
            return None
        locked.superseded_at = now
        if locked.expires_at <= now:
            _transition(locked, S.EXPIRED, event=EventType.DRAFT_EXPIRED if announce else None, now=now)
        else:
            _transition(locked, S.CANCELLED, event=EventType.DRAFT_CANCELLED if announce else None, now=now)
        return locked


# --- Creation ---------------------------------------------------------------------------

MAX_NUDGE_BASE_UNITS = 1000
MAX_AMOUNT_PICKS = 25


class AmountCollision(Conflict):
    default_code = "amount_collision"


class InvoiceAlreadyAttached(Conflict):
    default_code = "invoice_already_attached"


def _invoice_holder(plan: DraftPlan, *, exclude: UUID | None = None) -> Draft | None:
    """The draft (of any account, not cancelled) that already carries this plan's invoice."""
    if plan.payment_hash is None:
        return None
    holders = Draft.objects.filter(payment_hash=plan.payment_hash).exclude(status=S.CANCELLED).exclude(pk=exclude)
    return holders.only("id", "user_id").first()


def _invoice_attached_problem(holder: Draft, *, user) -> InvoiceAlreadyAttached:
    # Name the draft only to its own account: another account's draft ids stay unknown.
    if holder.user_id == user.pk:
        return InvoiceAlreadyAttached(
            f"This invoice is already attached to your draft {holder.id}: one invoice pays one draft.",
            field="bolt11",
            extra={"draftId": str(holder.id)},
        )
    return InvoiceAlreadyAttached(
        "This invoice is already attached to another draft: one invoice pays one draft.", field="bolt11"
    )


def fee_placement_estimate(*, plan: DraftPlan, user=None) -> str:
    """Where a draft's fee would go, claiming nothing (a dust fee: waived while the daily allowance
    lasts; given the account, only if its allowance for today is not spent)."""
    placement = _fee_placement(user=None, plan=plan, draft_id=None)[0]
    if placement == FeePlacement.WAIVED and user is not None and _claims_dust_waiver(plan):
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
        if draft_id is None:
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


def _payment_uri(draft: Draft, plan: DraftPlan) -> str:
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


def _open_amounts(plan: DraftPlan, *, user=None, exclude: UUID | None = None):
    """Open drafts billing near this amount to the same (network, address, asset)."""
    drafts = Draft.objects.filter(
        status__in=OPEN_STATUSES,
        network=plan.asset.network,
        receiver_address=plan.receiver_address,
        currency=plan.asset.currency,
        amount_base_units__gte=plan.amount_base_units,
        amount_base_units__lte=plan.amount_base_units + MAX_NUDGE_BASE_UNITS,
    ).exclude(pk=exclude)
    return drafts.filter(user=user) if user is not None else drafts


# The same look-up as _open_amounts for every account, as a creation makes it: built once.
_OPEN_AMOUNTS_NEAR = Select(
    Draft,
    columns=["amount_base_units"],
    where=[
        ("status", "in", tuple(OPEN_STATUSES)),
        ("network", "="),
        ("receiver_address", "="),
        ("currency", "="),
        ("amount_base_units", ">="),
        ("amount_base_units", "<="),
    ],
)


def _matched_by_amount(plan: DraftPlan) -> bool:
    """Whether a payment to this draft is told apart by its amount, which must then be unique
    among the open drafts to that address (not a Lightning invoice, a tuple-matched network)."""
    return plan.asset.network in TUPLE_MATCHED_NETWORKS and plan.method != Method.LIGHTNING


def _open_amounts_read(plan: DraftPlan) -> tuple[Select, tuple] | None:
    """The read of the open amounts a new draft's may be nudged past; None if it keeps its own."""
    if not _matched_by_amount(plan) or not plan.fiat_priced:
        return None
    low = plan.amount_base_units
    return _OPEN_AMOUNTS_NEAR, (
        plan.asset.network,
        plan.receiver_address,
        plan.asset.currency,
        low,
        low + MAX_NUDGE_BASE_UNITS,
    )


def _taken_amounts(plan: DraftPlan, *, exclude: UUID | None) -> set[int]:
    if exclude is not None:
        return set(_open_amounts(plan, exclude=exclude).values_list("amount_base_units", flat=True))
    select, values = _open_amounts_read(plan)
    return {amount for (amount,) in select.rows(*values)}


def _free_amount(
    plan: DraftPlan,
    *,
    user,
    exclude: UUID | None = None,
    optimistic: bool = False,
    taken: set[int] | None = None,
) -> tuple[int, int]:
    """The amount to bill, so that a payment can be told apart from every other open draft's.

    Exact drafts keep their amount; the same amount in another open draft of the same account
    is a 409 naming it. Another account's open draft at that amount does not block it (the
    matcher refuses to guess between accounts; docs/decisions.md). Fiat-priced drafts are
    nudged up by the fewest base units that make the amount unique among every account's open
    drafts to that address.

    `optimistic` (exact drafts only) skips the look-up and proposes the amount as asked: the
    per-account unique index refuses it if needed, and the caller then asks again without.
    `taken` (fiat-priced drafts) are the open amounts when the caller read them already.
    """
    amount = plan.amount_base_units
    if not _matched_by_amount(plan):
        return amount, 0
    if not plan.fiat_priced:
        if optimistic:
            return amount, 0
        clash = _open_amounts(plan, user=user, exclude=exclude).filter(amount_base_units=amount).first()
        if clash is not None:
            raise AmountCollision(
                f"Your open draft {clash.id} already bills exactly this amount to this address; payments could "
                "not be told apart. Change the amount by one base unit or cancel that draft.",
                field="amountSats",
                extra={"openDraftId": str(clash.id)},
            )
        return amount, 0
    if taken is None:
        taken = _taken_amounts(plan, exclude=exclude)
    for nudge in range(0, MAX_NUDGE_BASE_UNITS + 1):
        if amount + nudge not in taken:
            return amount + nudge, nudge
    raise AmountCollision("Too many open drafts bill nearly this amount to this address.", field="fiatAmount")


def _is_amount_clash(plan: DraftPlan, *, user, amount: int | None = None, exclude: UUID | None = None) -> bool:
    """After an IntegrityError: was it the per-account unique amount? (Read anew, so it works on
    every database: SQLite names columns in the error, PostgreSQL the constraint.)"""
    if not _matched_by_amount(plan):
        return False
    return (
        Draft.objects.filter(
            user=user,
            status__in=OPEN_STATUSES,
            network=plan.asset.network,
            receiver_address=plan.receiver_address,
            currency=plan.asset.currency,
            amount_base_units__gte=plan.amount_base_units,
            amount_base_units__lte=(amount or plan.amount_base_units) + MAX_NUDGE_BASE_UNITS,
        )
        .exclude(pk=exclude)
        .exists()
    )


def draft_create_from_request(
    *,
    user,
    request: DraftRequest,
    origin: Origin | None = None,
    now: datetime | None = None,
    on_created: Callable[[Draft], None] | None = None,
    along: Callable[[Draft], Sequence[tuple]] | None = None,
) -> Draft:
    """The one door to create a draft, for every surface (REST, MCP, checkout, templates, demo).

    Plans first (rates, Lightning-address invoices: network I/O outside any transaction), then
    writes the draft and its draft.created event in one transaction.
    """
    origin = origin or Origin.api()
    now = now or timezone.now()
    plan = draft_plan(
        request=request, now=now, is_fee_settlement=origin.is_fee_settlement, charges_fee=origin.charges_fee
    )
    return draft_create(user=user, plan=plan, origin=origin, now=now, on_created=on_created, along=along)


def draft_create(
    *,
    user,
    plan: DraftPlan,
    origin: Origin,
    now: datetime | None = None,
    on_created: Callable[[Draft], None] | None = None,
    along: Callable[[Draft], Sequence[tuple]] | None = None,
) -> Draft:
    """Write a planned draft and its draft.created event (and its deliveries) at once.

    `along(draft)` runs once the draft is complete and before it is written: the
    (RowInserter, instance) pairs it returns go into the same statement, before the draft (the
    idempotency record with its answer; one its on_conflict refuses stops the draft and the
    event: they keep `_state.adding` True). `on_created` runs after, inside the transaction
    (a pay link is linked to the draft). Without it, on PostgreSQL the whole creation is one
    statement and needs no transaction of its own (webhooks.services.event_record).
    """
    now = now or timezone.now()

    def write(attempt: int) -> Draft:
        # The first try of an exact draft takes the amount as asked (clashes are rare, and the
        # unique index catches them); later tries look up the open amounts first. The fee cap
        # and a fiat-priced draft's open amounts are read in one round trip.
        accrues = plan.method != Method.MULTI_OUTPUT and plan.fee is not None  # a fee that would accrue
        fee_cap = ledger.outstanding_read(user) if accrues else None
        reads = [read for read in (fee_cap, _open_amounts_read(plan)) if read is not None]
        found = rows_together(*reads) if reads else []
        if accrues:
            ledger.ensure_not_blocked(user, totals=found.pop(0))
        taken = {amount for (amount,) in found[0]} if found else None
        draft = _draft_insert(
            user=user, plan=plan, now=now, origin=origin, optimistic=attempt == 0, along=along, taken=taken
        )
        if on_created is not None:
            on_created(draft)
        return draft

    draft = _with_unique_amount(
        plan,
        user=user,
        write=write,
        field="amountSats",
        one_statement=on_created is None and not _claims_dust_waiver(plan),  # else a second write
    )
    if not draft._state.adding:  # written (a replayed idempotency key writes nothing)
        _count_on_commit(metrics.drafts_created, draft)
    return draft


def _count_on_commit(counter, draft: Draft) -> None:
    """An in-process counter, moved once the draft's transaction (if any) has committed."""
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: metrics.draft_counted(counter, draft))
    else:
        metrics.draft_counted(counter, draft)


def _with_unique_amount(
    plan: DraftPlan,
    *,
    user,
    write: Callable[[int], Draft],
    field: str,
    exclude: UUID | None = None,
    one_statement: bool = False,
) -> Draft:
    """Run `write(attempt)` in a transaction until the amount it picks is unique among the
    account's open drafts: the one retry loop of creation and requote (a concurrent draft may
    take the same amount between the look-up and the INSERT; the unique index refuses it).
    A `write` that is `one_statement` (reads, then a single statement that writes) needs no
    transaction where that statement is all or nothing by itself: PostgreSQL outside any
    transaction (inside one, a savepoint keeps the caller's transaction usable for a retry)."""
    connection = transaction.get_connection()
    alone = one_statement and writes_in_one_statement(connection) and not connection.in_atomic_block
    for attempt in range(MAX_AMOUNT_PICKS):
        try:
            with nullcontext() if alone else transaction.atomic():
                return write(attempt)
        except IntegrityError:
            holder = _invoice_holder(plan, exclude=exclude)
            if holder is not None:
                raise _invoice_attached_problem(holder, user=user) from None
            if not _is_amount_clash(plan, user=user, exclude=exclude):
                raise
    raise AmountCollision("Could not find a unique amount for this address; try again.", field=field)


_DRAFT_INSERT = RowInserter(Draft)  # every creation: the 40-column INSERT is built once


def _draft_insert(
    *,
    user,
    plan: DraftPlan,
    now: datetime,
    origin: Origin,
    optimistic: bool,
    along: Callable | None = None,
    taken: set[int] | None = None,
) -> Draft:
    amount, nudge = _free_amount(plan, user=user, optimistic=optimistic, taken=taken)
    asset = plan.asset
    draft = Draft(
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
    )
    placement, fee_address = _fee_placement(user=user, plan=plan, draft_id=draft.id)
    draft.fee_placement, draft.platform_fee_address = placement, fee_address
    if plan.fee is not None:
        draft.fee_usd, draft.fee_base_units = plan.fee.fee_usd, plan.fee.fee_base_units
        draft.platform_fee = plan.fee.as_json(placement)
    else:
        draft.platform_fee = _no_fee_json(plan)
    draft.payment_uri = _payment_uri(draft, plan)
    rows = [*(along(draft) if along is not None else ()), (_DRAFT_INSERT, draft)]
    if not origin.announce:  # written without its draft.created event
        for inserter, instance in rows:
            if not inserter.insert(instance):
                break
        return draft
    event_record(  # the draft, its draft.created event and the rows along go in one statement
        user=user,
        type=EventType.DRAFT_CREATED,
        data=draft_event_data(draft, occurred_at=now),
        draft_id=draft.id,
        along=rows,
    )
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


def draft_requote(*, draft: Draft, now: datetime | None = None) -> Draft:
    """Lock a new rate for a Pending fiat-priced draft whose quote expired; re-price amount and fee."""
    now = now or timezone.now()
    _check_requotable(draft, now)
    request = DraftRequest(
        network=draft.network,
        currency=draft.currency,
        payment_method=draft.method,
        receiver_address=draft.receiver_address,
        fiat_currency=draft.fiat_currency,
        fiat_amount=draft.fiat_amount,
        required_confirmations=draft.required_confirmations,
    )
    # Rate look-ups happen here, before the row is locked.
    plan = draft_plan(request=request, now=now, is_fee_settlement=draft.is_fee_settlement)

    def write(attempt: int) -> Draft:
        locked = _locked(draft.id)
        _check_requotable(locked, now)
        amount, nudge = _free_amount(plan, user=locked.user, exclude=locked.id)
        locked.amount_base_units, locked.quote_nudge_base_units = amount, nudge
        locked.rate, locked.usd_rate, locked.rate_source = plan.quote.rate, plan.usd_rate, plan.quote.source
        locked.quote_sources = plan.quote.sources
        locked.quote_locked_at, locked.quote_expires_at = plan.quote.locked_at, plan.quote.expires_at
        locked.sek = plan.sek
        if plan.fee is not None:
            placement = locked.fee_placement
            locked.fee_usd, locked.fee_base_units = plan.fee.fee_usd, plan.fee.fee_base_units
            locked.platform_fee = plan.fee.as_json(placement)
        locked.payment_uri = _payment_uri(locked, plan)
        locked.save()
        return locked

    return _with_unique_amount(plan, user=draft.user, write=write, field="fiatAmount", exclude=draft.id)


def _check_requotable(draft: Draft, now: datetime) -> None:
    if (
        draft.status != S.PENDING
        or draft.fiat_amount is None
        or (draft.quote_expires_at and draft.quote_expires_at > now)
    ):
        raise Conflict(
            "Only a Pending fiat-priced draft whose quote has expired can be requoted.",
            code="requote_not_allowed",
            extra={"draftStatus": draft.status, "quoteExpiresAt": json_datetime(draft.quote_expires_at)},
        )
