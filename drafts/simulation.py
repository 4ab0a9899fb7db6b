"""Test helpers: payments, expiry and reorgs on demand, for test-mode drafts only.

Each helper makes up what a chain watcher would have seen and hands it to the same door
the watchers use (`drafts.services.draft_payment_apply`), or moves the draft through the
same state machine (`draft_expire`): statuses, events, the account's webhooks and emails
are exactly those of a real payment. A live draft is never touched (OnlyInTestMode).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone

from accounts.models import User
from accounts.modes import livemode_of
from core.problems import Conflict, Problem
from drafts import services
from drafts.enums import DraftStatus as S
from drafts.models import Draft
from drafts.services import PaymentObservation, draft_payment_apply
from drafts.transfers import unmatched_transfer_record
from payments.registry import network_info

MAX_CONFIRMATIONS = 1000
# short / over pay this much less / more than billed: inside the 10% window, so AmountMismatch.
MISMATCH_PERCENT = 5


class Outcome(models.TextChoices):
    EXACT = "exact", "The billed amount: Seen, then Confirmed at the required confirmations"
    SHORT = "short", "5% less than billed: AmountMismatch"
    OVER = "over", "5% more than billed: AmountMismatch"
    SPLIT = "split", "The billed amount in two transactions: Seen, then Confirmed"
    TWICE = (
        "twice",
        "The billed amount, then a second transfer of it: it pays nothing and no other draft; draft.paid_again "
        "on this draft and transfer.unmatched, as a watcher reports it",
    )
    LATE = "late", "The draft expires first, then the billed amount arrives: paid late"


class OnlyInTestMode(Problem):
    status_code = 403
    default_code = "test_mode_only"


def require_test_mode(user: User) -> None:
    """Refuse a live caller: test helpers exist for test keys (pdk_test_...) only."""
    if livemode_of(user):
        raise OnlyInTestMode(
            "Test helpers work with a test key (pdk_test_...) on test-mode drafts only; this key is live."
        )


def _test_draft(draft: Draft) -> None:
    if draft.livemode:
        raise OnlyInTestMode("Payments can be simulated only on test-mode drafts; this draft is live.")


def _tx_id(draft: Draft, part: str) -> str:
    digest = hashlib.sha256(f"test-payment:{draft.id}:{part}".encode()).hexdigest()
    return f"0x{digest}" if network_info(draft.network).family == "evm" else digest


def simulated_tx_id(draft: Draft) -> str:
    """The id of the (first) transaction a simulated payment of this draft gives."""
    return _tx_id(draft, "1")


def _confirmations(draft: Draft, confirmations: int | None) -> int:
    if confirmations is None:
        return draft.required_confirmations
    if not 0 <= confirmations <= MAX_CONFIRMATIONS:
        raise Problem(
            f"confirmations must be between 0 and {MAX_CONFIRMATIONS}.", code="out_of_range", field="confirmations"
        )
    return confirmations


def draft_payment_simulate(
    *, draft: Draft, outcome: str, confirmations: int | None = None, now: datetime | None = None
) -> Draft:
    """Pay a test-mode draft as `outcome` says. `confirmations` (default: the draft's required
    count) is how deep the paying transaction is; calling again with a higher count adds
    confirmations to the same payment, as a watcher's next pass does."""
    _test_draft(draft)
    now = now or timezone.now()
    depth = _confirmations(draft, confirmations)
    amount = draft.amount_base_units
    if outcome == Outcome.LATE:
        if draft.status == S.PENDING:
            draft = _expire_now(draft, now=now - timedelta(microseconds=1))
        outcome = Outcome.EXACT
    if outcome in (Outcome.EXACT, Outcome.TWICE):
        observation = PaymentObservation(tx_id=_tx_id(draft, "1"), received_base_units=amount, confirmations=depth)
    elif outcome in (Outcome.SHORT, Outcome.OVER):
        step = max(1, amount * MISMATCH_PERCENT // 100)
        received = amount - step if outcome == Outcome.SHORT else amount + step
        if received <= 0:
            raise Problem("The draft's amount is too small to pay short.", code="amount_too_small", field="outcome")
        observation = PaymentObservation(tx_id=_tx_id(draft, "1"), received_base_units=received, confirmations=depth)
    elif outcome == Outcome.SPLIT:
        if amount < 2:
            raise Problem("A one-unit draft cannot be paid in two parts.", code="amount_too_small", field="outcome")
        parts = (_tx_id(draft, "1"), _tx_id(draft, "2"))
        observation = PaymentObservation(tx_id=parts[0], received_base_units=amount, confirmations=depth, parts=parts)
    else:
        raise Problem(
            f"outcome must be one of {', '.join(Outcome.values)}.",
            code="invalid_choice",
            field="outcome",
            extra={"allowed": list(Outcome.values)},
        )
    draft = draft_payment_apply(draft_id=draft.id, observation=observation, now=now)
    if outcome == Outcome.TWICE:  # a second transfer: the door takes one payment per draft
        second = PaymentObservation(tx_id=_tx_id(draft, "twice"), received_base_units=amount, confirmations=depth)
        draft = draft_payment_apply(draft_id=draft.id, observation=second, now=now)
        # It pays nothing (nor any other draft: the amount is this draft's), so it is reported as a
        # watcher reports it: draft.paid_again on this draft, transfer.unmatched and its email.
        unmatched_transfer_record(draft=draft, tx_id=second.tx_id, amount_base_units=amount, now=now)
    return draft


def _expire_now(draft: Draft, *, now: datetime) -> Draft:
    # The expiry time moves to now, then the state machine's own expiry runs, as the beat task's would.
    Draft.objects.filter(pk=draft.id, status=S.PENDING, expires_at__gt=now).update(expires_at=now)
    expired = services.draft_expire(draft_id=draft.id, now=now)
    return expired or Draft.objects.get(pk=draft.id)


def draft_expire_simulate(*, draft: Draft, now: datetime | None = None) -> Draft:
    """Expire a Pending test-mode draft now (draft.expired), as its expiry time passing would."""
    _test_draft(draft)
    if draft.status != S.PENDING:
        raise Conflict(
            f"Only a Pending draft can expire; this one is {draft.status}.",
            code="expire_not_allowed",
            extra={"draftStatus": draft.status},
        )
    return _expire_now(draft, now=now or timezone.now())


def draft_reorg_simulate(*, draft: Draft, now: datetime | None = None) -> Draft:
    """The paying transaction of a Seen, AmountMismatch or Confirmed (not yet final) test-mode
    draft leaves the chain: back to Pending (or Expired) with draft.payment_reverted, as a reorg
    seen by a watcher does."""
    _test_draft(draft)
    revertible = draft.status in (S.SEEN, S.AMOUNT_MISMATCH) or (
        draft.status == S.CONFIRMED and draft.finalized_at is None
    )
    if not revertible:
        raise Conflict(
            f"Only a Seen, AmountMismatch or not yet final Confirmed draft has a payment a reorg can remove; "
            f"this one is {draft.status}. Pay it with confirmations: 0 to keep it Seen.",
            code="reorg_not_allowed",
            extra={"draftStatus": draft.status},
        )
    observation = PaymentObservation(
        tx_id=draft.paid_tx_id or "", received_base_units=draft.received_base_units or 0, vanished=True
    )
    return draft_payment_apply(draft_id=draft.id, observation=observation, now=now)
