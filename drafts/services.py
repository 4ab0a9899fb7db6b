"""Draft state changes. Every status change goes through `_transition`, which locks the
row and records the event in the same transaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from audit import services as audit
from core import metrics
from core.problems import Conflict
from core.wire import json_datetime
from drafts.amounts import (
    MAX_AMOUNT_PICKS,
    AmountTaken,
    amount_hold,
    free_amount,
    no_free_amount,
    unless_amount_taken,
)
from drafts.creation import count_on_commit, payment_uri
from drafts.enums import DraftStatus as S
from drafts.events import draft_event_data
from drafts.models import Draft
from drafts.planning import DraftPlan, draft_plan
from drafts.requests import DraftRequest
from fees import ledger
from payments.enums import FeePlacement
from webhooks.models import EventType
from webhooks.services import event_record

# Where each status may go. Expired drafts stay watched for late payments (grace window).
ALLOWED_TRANSITIONS: dict[str, set[str]] = {
    S.PENDING: {S.SEEN, S.AMOUNT_MISMATCH, S.EXPIRED, S.CANCELLED},
    S.SEEN: {S.CONFIRMED, S.PENDING},
    S.AMOUNT_MISMATCH: {S.SEEN, S.CANCELLED, S.PENDING},
    S.EXPIRED: {S.SEEN, S.AMOUNT_MISMATCH},
    # A reorg past its confirmations before it was final (FINALITY_DEPTHS): paid again or not.
    S.CONFIRMED: {S.PENDING, S.EXPIRED},
    S.CANCELLED: set(),
}
MISMATCH_WINDOW_PERCENT = 10
# Blocks before a coinbase output can be spent (Bitcoin's consensus rule): a draft it pays is
# Confirmed only at this depth (docs/decisions.md, Nothing paid before it was asked).
COINBASE_MATURITY = 100


def finality_depth(draft: Draft) -> int:
    """How deep a Confirmed payment of this draft is followed for reorgs (FINALITY_DEPTHS)."""
    return max(settings.FINALITY_DEPTHS.get(draft.network, 0), draft.required_confirmations)


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


def _locked(draft_id: UUID | str) -> Draft:
    return Draft.objects.select_for_update().get(pk=draft_id)


def _transition(draft: Draft, to: str, *, event: str | None, now: datetime) -> None:
    """Move a locked draft to `to` and record its event. Caller holds the row lock."""
    if to not in ALLOWED_TRANSITIONS[draft.status]:
        raise TransitionNotAllowed(
            f"A {draft.status} draft cannot become {to}.", extra={"draftStatus": draft.status, "draftId": str(draft.id)}
        )
    draft.status = to
    amount_hold(draft, to=to, now=now)
    draft.save()
    _settle_fees_on(draft, to, now)
    if event:
        event_record(
            user=draft.user,
            type=event,
            data=draft_event_data(draft, occurred_at=now),
            draft_id=draft.id,
            livemode=draft.livemode,
        )
    if to == S.CONFIRMED:
        for listener in _confirmed_listeners:
            listener(draft=draft, now=now)
        count_on_commit(metrics.drafts_confirmed, draft)


def _settle_fees_on(draft: Draft, to: str, now: datetime) -> None:
    """Fee ledger bookkeeping that must happen in the same transaction as the status change."""
    if to == S.CONFIRMED:
        if draft.is_fee_settlement:
            ledger.settlement_confirmed(settlement=draft, now=now)
        elif draft.fee_placement == FeePlacement.ACCRUED and draft.livemode:  # test fees never accrue
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
    # A coinbase output (Bitcoin): Confirmed only at COINBASE_MATURITY confirmations.
    coinbase: bool = False
    # False where the node tells finality itself (an EVM node's `finalized` block): the payment
    # is then final only when `final` says so, never by counting to FINALITY_DEPTHS.
    final_by_depth: bool = True


def is_within_mismatch_window(expected: int, received: int) -> bool:
    """Within 10% (inclusive) of the billed amount, integer arithmetic only."""
    return abs(received - expected) * 100 <= expected * MISMATCH_WINDOW_PERCENT


def draft_payment_apply(*, draft_id: UUID | str, observation: PaymentObservation, now: datetime | None = None) -> Draft:
    """The one door for a payment observed on chain: applied under one row lock, in one transaction.

    Exact amount: Pending/Expired -> Seen (draft.seen), then Confirmed at the required
    confirmations or when final. Within 10%: -> AmountMismatch (draft.amount_mismatch). Further
    off: ignored. A MultiOutput payment without its fee output still pays the draft; its fee then
    accrues. Repeated observations of the paying transaction only update the count, until the
    finality depth once Confirmed; a vanished one sends the draft back to Pending (or Expired)
    with draft.payment_reverted. Safe to repeat: what is recorded is never announced twice.
    """
    now = now or timezone.now()
    obs = observation
    with transaction.atomic():
        draft = _locked(draft_id)
        paying = draft.paid_tx_id == obs.tx_id and draft.status in (S.SEEN, S.AMOUNT_MISMATCH, S.CONFIRMED)
        if draft.status == S.CONFIRMED and draft.finalized_at is not None:
            return draft
        if obs.vanished:
            return _payment_vanished(draft, now) if paying else draft
        if draft.status == S.CONFIRMED:
            return (
                _update_confirmations(draft, obs.confirmations, now, final=obs.final, by_depth=obs.final_by_depth)
                if paying
                else draft
            )
        if draft.status == S.CANCELLED:
            return draft
        if draft.status == S.AMOUNT_MISMATCH and _completes_short(draft, obs):
            return _short_completed(draft, obs, now)
        if paying:
            return _update_confirmations(draft, obs.confirmations, now, final=obs.final, by_depth=obs.final_by_depth)
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
        if obs.coinbase:
            draft.required_confirmations = max(draft.required_confirmations, COINBASE_MATURITY)
        if exact:
            _transition(draft, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
            return _update_confirmations(draft, obs.confirmations, now, final=obs.final, by_depth=obs.final_by_depth)
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


def _completes_short(draft: Draft, obs: PaymentObservation) -> bool:
    """A split payment that starts with the short payment's transactions and adds up to the
    exact amount: the rest sent to complete it (chainwatch.matching.top_up_draft)."""
    paid = draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else [])
    return (
        not draft.accepted_by_owner
        and bool(paid)
        and obs.amount_exact
        and obs.received_base_units == draft.amount_base_units
        and len(obs.parts) > len(paid)
        and list(obs.parts[: len(paid)]) == list(paid)
    )


def _short_completed(draft: Draft, obs: PaymentObservation, now: datetime) -> Draft:
    """AmountMismatch (short) -> Seen: the rest arrived; the draft is paid exactly, in parts."""
    draft.received_base_units = obs.received_base_units
    draft.paid_tx_ids = list(obs.parts)
    draft.amount_mismatch = None  # paid exactly now: no difference left to report or accept
    _transition(draft, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
    return _update_confirmations(draft, obs.confirmations, now, final=obs.final, by_depth=obs.final_by_depth)


def _update_confirmations(
    draft: Draft, confirmations: int, now: datetime, *, final: bool = False, by_depth: bool = True
) -> Draft:
    """The count keeps going after Confirmed until the finality depth (or a final observation;
    only that when not `by_depth`), when `finalized_at` ends the watch."""
    draft.confirmations = max(confirmations, 0)
    if final:
        draft.confirmations = max(draft.confirmations, draft.required_confirmations)
    if draft.amount_mismatch is not None:
        draft.amount_mismatch = {**draft.amount_mismatch, "confirmations": draft.confirmations}
    deep = by_depth and draft.confirmations >= finality_depth(draft)
    if draft.status in (S.SEEN, S.CONFIRMED) and (final or deep):
        draft.finalized_at = draft.finalized_at or now
    if draft.status == S.SEEN and draft.confirmations >= draft.required_confirmations:
        draft.confirmed_at = now
        _transition(draft, S.CONFIRMED, event=EventType.DRAFT_CONFIRMED, now=now)
    else:
        draft.save()
    return draft


def _payment_vanished(draft: Draft, now: datetime) -> Draft:
    """The paying transaction left the chain (a reorg) or the mempool before it was final: back
    to Pending (Expired when past its time), `paymentReverted` on the draft with the time and
    txids, draft.payment_reverted to every endpoint and an email, so a merchant who acted on
    draft.seen or draft.confirmed hears of it. A fee accrued on confirmation is waived."""
    reverted_tx_id, previous_status = draft.paid_tx_id, draft.status
    draft.payment_reverted_at = now
    draft.reverted_tx_ids = list(dict.fromkeys(draft.paid_tx_ids or [reverted_tx_id]))
    draft.paid_tx_id, draft.received_base_units, draft.confirmations = None, None, 0
    draft.paid_tx_ids = []
    draft.amount_mismatch, draft.seen_at, draft.accepted_by_owner = None, None, False
    draft.confirmed_at = draft.finalized_at = None
    back = S.EXPIRED if previous_status == S.CONFIRMED and draft.expires_at <= now else S.PENDING
    _transition(draft, back, event=None, now=now)
    if previous_status == S.CONFIRMED:
        ledger.fee_revert(draft=draft, now=now)
    data = {
        **draft_event_data(draft, occurred_at=now),
        "txId": reverted_tx_id,
        "revertedTxIds": draft.reverted_tx_ids,
        "paymentRevertedAt": json_datetime(now),
        "previousStatus": previous_status,
    }
    event_record(
        user=draft.user, type=EventType.DRAFT_PAYMENT_REVERTED, data=data, draft_id=draft.id, livemode=draft.livemode
    )
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
        locked.amount_mismatch = {**(locked.amount_mismatch or {}), "acceptedAt": json_datetime(now)}
        _transition(locked, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
        audit.record(
            organization=locked.user_id,
            action="draft.amount_accepted",
            changes={"draft": locked.id, "amountMismatch": locked.amount_mismatch},
        )
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


def draft_expire(*, draft_id: UUID | str, now: datetime | None = None) -> Draft | None:
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

    write = partial(_requoted, draft_id=draft.id, plan=plan, now=now)
    for _ in range(MAX_AMOUNT_PICKS):
        requoted = unless_amount_taken(plan, user=draft.user, write=write, exclude=draft.id)
        if not isinstance(requoted, AmountTaken):
            return requoted
    raise no_free_amount("fiatAmount")


def _requoted(*, draft_id: UUID | str, plan: DraftPlan, now: datetime) -> Draft:
    """One try of a requote, under the draft's lock: the new amount, rate and fee written."""
    locked = _locked(draft_id)
    _check_requotable(locked, now)
    amount, nudge = free_amount(plan, user=locked.user, exclude=locked.id, now=now)
    locked.amount_base_units, locked.quote_nudge_base_units = amount, nudge
    locked.rate, locked.usd_rate, locked.rate_source = plan.quote.rate, plan.usd_rate, plan.quote.source
    locked.quote_sources = plan.quote.sources
    locked.quote_locked_at, locked.quote_expires_at = plan.quote.locked_at, plan.quote.expires_at
    locked.sek = plan.sek
    if plan.fee is not None:
        placement = locked.fee_placement
        locked.fee_usd, locked.fee_base_units = plan.fee.fee_usd, plan.fee.fee_base_units
        locked.platform_fee = plan.fee.as_json(placement)
    locked.payment_uri = payment_uri(locked, plan)
    locked.save()
    return locked


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
