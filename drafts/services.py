"""Draft state changes. Every status change goes through `_transition`, which locks the
row and records the event in the same transaction."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from config.api.problems import Conflict
from drafts.events import draft_event_data
from drafts.models import Draft
from payments.enums import DraftStatus as S
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


def _locked(draft_id: UUID) -> Draft:
    return Draft.objects.select_for_update().get(pk=draft_id)


def _transition(draft: Draft, to: str, *, event: str | None, now: datetime) -> None:
    """Move a locked draft to `to` and record its event. Caller holds the row lock."""
    if to not in ALLOWED_TRANSITIONS[draft.status]:
        raise TransitionNotAllowed(
            f"A {draft.status} draft cannot become {to}.", extra={"status": draft.status, "draftId": str(draft.id)}
        )
    draft.status = to
    draft.save()
    if event:
        event_record(user=draft.user, type=event, data=draft_event_data(draft, occurred_at=now), draft_id=draft.id)


def is_within_mismatch_window(expected: int, received: int) -> bool:
    """Within 10% (inclusive) of the billed amount, integer arithmetic only."""
    return abs(received - expected) * 100 <= expected * MISMATCH_WINDOW_PERCENT


def draft_payment_observed(
    *,
    draft_id: UUID,
    tx_id: str,
    received_base_units: int,
    confirmations: int,
    amount_exact: bool = True,
    now: datetime | None = None,
) -> Draft:
    """A transfer to the draft was seen (mempool or on chain, any number of confirmations).

    Exact amount: Pending/Expired -> Seen (draft.seen), then Confirmed if it already has
    enough confirmations. Within 10%: -> AmountMismatch (draft.amount_mismatch). Further
    off: ignored. Repeated observations of the same transaction only update the count.
    `amount_exact=False` says the on-chain amount had a fraction below one base unit (a wei
    value that is not whole gwei): it can then never be the exact amount, only a mismatch.
    """
    now = now or timezone.now()
    with transaction.atomic():
        draft = _locked(draft_id)
        if draft.status in (S.CONFIRMED, S.CANCELLED):
            return draft
        if draft.paid_tx_id == tx_id and draft.status in (S.SEEN, S.AMOUNT_MISMATCH):
            return _update_confirmations(draft, confirmations, now)
        if draft.status in (S.SEEN, S.AMOUNT_MISMATCH):
            return draft  # already paid by another transaction; one payment per draft
        late = draft.status == S.EXPIRED
        if amount_exact and received_base_units == draft.amount_base_units:
            draft.paid_tx_id, draft.received_base_units = tx_id, received_base_units
            draft.confirmations, draft.seen_at, draft.paid_late = confirmations, now, late or draft.paid_late
            _transition(draft, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
            return _update_confirmations(draft, confirmations, now)
        if is_within_mismatch_window(draft.amount_base_units, received_base_units):
            draft.paid_tx_id, draft.received_base_units = tx_id, received_base_units
            draft.confirmations, draft.seen_at, draft.paid_late = confirmations, now, late or draft.paid_late
            draft.amount_mismatch = {
                "txId": tx_id,
                "expectedBaseUnits": draft.amount_base_units,
                "receivedBaseUnits": received_base_units,
                "differenceBaseUnits": received_base_units - draft.amount_base_units,
                "confirmations": confirmations,
                "detectedAt": now.isoformat(),
                "acceptedAt": None,
            }
            _transition(draft, S.AMOUNT_MISMATCH, event=EventType.DRAFT_AMOUNT_MISMATCH, now=now)
        return draft


def _update_confirmations(draft: Draft, confirmations: int, now: datetime) -> Draft:
    draft.confirmations = max(confirmations, 0)
    if draft.amount_mismatch is not None:
        draft.amount_mismatch = {**draft.amount_mismatch, "confirmations": draft.confirmations}
    if draft.status == S.SEEN and draft.confirmations >= draft.required_confirmations:
        draft.confirmed_at = now
        _transition(draft, S.CONFIRMED, event=EventType.DRAFT_CONFIRMED, now=now)
    else:
        draft.save()
    return draft


def draft_confirmations_update(*, draft_id: UUID, tx_id: str, confirmations: int, now: datetime | None = None) -> Draft:
    """New confirmation count for the paying transaction; confirms at the required count."""
    now = now or timezone.now()
    with transaction.atomic():
        draft = _locked(draft_id)
        if draft.paid_tx_id != tx_id or draft.status not in (S.SEEN, S.AMOUNT_MISMATCH):
            return draft
        return _update_confirmations(draft, confirmations, now)


def draft_payment_confirmed(*, draft_id: UUID, tx_id: str, now: datetime | None = None) -> Draft:
    """Final by the network's own rule (Solana finalized, Lightning preimage checked)."""
    now = now or timezone.now()
    with transaction.atomic():
        draft = _locked(draft_id)
        if draft.paid_tx_id != tx_id or draft.status != S.SEEN:
            return draft
        draft.confirmations = max(draft.confirmations, draft.required_confirmations)
        draft.confirmed_at = now
        _transition(draft, S.CONFIRMED, event=EventType.DRAFT_CONFIRMED, now=now)
        return draft


def draft_payment_vanished(*, draft_id: UUID, tx_id: str, now: datetime | None = None) -> Draft:
    """The paying transaction left the chain (reorg) before confirmation: back to Pending."""
    now = now or timezone.now()
    with transaction.atomic():
        draft = _locked(draft_id)
        if draft.paid_tx_id != tx_id or draft.status not in (S.SEEN, S.AMOUNT_MISMATCH):
            return draft
        draft.paid_tx_id, draft.received_base_units, draft.confirmations = None, None, 0
        draft.amount_mismatch, draft.seen_at, draft.accepted_by_owner = None, None, False
        _transition(draft, S.PENDING, event=None, now=now)
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
                extra={"status": locked.status},
            )
        locked.accepted_by_owner = True
        locked.amount_mismatch = {**locked.amount_mismatch, "acceptedAt": now.isoformat()}
        _transition(locked, S.SEEN, event=EventType.DRAFT_SEEN, now=now)
        return _update_confirmations(locked, locked.confirmations, now)


def draft_cancel(*, draft: Draft, now: datetime | None = None) -> Draft:
    now = now or timezone.now()
    with transaction.atomic():
        locked = _locked(draft.id)
        if locked.status not in (S.PENDING, S.AMOUNT_MISMATCH):
            raise TransitionNotAllowed(
                f"A {locked.status} draft cannot be cancelled.",
                code="cancel_not_allowed",
                extra={"status": locked.status},
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
