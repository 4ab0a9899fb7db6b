"""What happened to the payer's payment, as the pay page tells it.

One reading of the request, its current draft and the transfers reported unmatched for it:
the page's state (choose, pending, seen, mismatch, paid, expired, cancelled) plus what the
payer must know beside it: a transfer that arrived but pays nothing (too far off, or a second
payment), a payment that came late, whether the amount still holds after the quote window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.transfers import unmatched_transfers_for
from paylinks.models import PaymentRequest, PaymentRequestStatus
from paylinks.presenters import payer_status
from payments.explorers import explorer_tx_url
from payments.registry import format_amount, get_asset

R, D = PaymentRequestStatus, DraftStatus


@dataclass(frozen=True)
class Transfer:
    """A transfer the payer may recognise: its amount (asset precision), id and explorer link."""

    amount: str
    currency: str
    txid: str
    explorer_url: str | None


@dataclass(frozen=True)
class Outcome:
    state: str
    status: str
    # AmountMismatch within the window: what arrived, and whether it was short of the amount.
    received: str | None = None
    short: bool = False
    late: bool = False
    # The quote window is over but the draft still takes the amount shown (until its expiry).
    quote_over: bool = False
    explorer_url: str | None = None
    unmatched: list[Transfer] = field(default_factory=list)

    @property
    def polling(self) -> bool:
        return self.state in ("pending", "seen", "mismatch")


def _state(status: str, draft: Draft | None, now: datetime) -> str:
    draft_status = draft.status if draft is not None else None
    if status == R.PAID:
        return "paid"
    if status == R.CANCELLED and draft_status not in (D.SEEN, D.AMOUNT_MISMATCH):
        return "cancelled"
    if draft_status == D.AMOUNT_MISMATCH:
        return "mismatch"
    if draft_status == D.SEEN:
        return "seen"
    if status in (R.EXPIRED, R.CANCELLED):
        return "expired" if status == R.EXPIRED else "cancelled"
    if draft_status == D.PENDING and draft.expires_at > now:
        return "pending"
    return "choose"  # nothing chosen yet, or the chosen draft expired unpaid


def _transfer(amount: int, txid: str, network: str, currency: str) -> Transfer:
    asset = get_asset(currency, network)
    return Transfer(format_amount(amount, asset), currency, txid, explorer_tx_url(network=network, txid=txid))


def _unmatched(payment_request: PaymentRequest) -> list:
    drafts = [str(d) for d in Draft.objects.filter(payment_request_id=payment_request.id).values_list("id", flat=True)]
    return unmatched_transfers_for(user_id=payment_request.user_id, draft_ids=drafts, since=payment_request.created_at)


def unmatched_count(payment_request: PaymentRequest) -> int:
    """How many transfers for this request pay nothing (the status poll reloads the page when it grows)."""
    return len(_unmatched(payment_request)) if payment_request.draft_id else 0


def payment_outcome(payment_request: PaymentRequest, now: datetime) -> Outcome:
    status = payer_status(payment_request, now)
    draft = payment_request.draft
    state = _state(status, draft, now)
    if draft is None:
        return Outcome(state=state, status=status)
    asset = get_asset(draft.currency, draft.network)
    received = short = None
    if draft.amount_mismatch:
        received_units = draft.amount_mismatch["receivedBaseUnits"]
        received = format_amount(received_units, asset)
        short = received_units < draft.amount_mismatch["expectedBaseUnits"]
    unmatched = [_transfer(t.amount_base_units, t.txid, t.network, t.currency) for t in _unmatched(payment_request)]
    quote_over = bool(
        state == "pending"
        and draft.fiat_amount is not None
        and draft.quote_expires_at
        and draft.quote_expires_at <= now
    )
    return Outcome(
        state=state,
        status=status,
        received=received,
        short=bool(short),
        late=draft.paid_late,
        quote_over=quote_over,
        explorer_url=explorer_tx_url(network=draft.network, txid=draft.paid_tx_id, method=draft.method),
        # The same list the status poll counts (`unmatched_count`), or the page would reload forever.
        unmatched=unmatched,
    )
