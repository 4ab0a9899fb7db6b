"""What happened to the payer's payment, as the pay page tells it.

One reading of the request and its current draft: the page's state (choose, pending, seen,
mismatch, paid, reverted, expired, cancelled) plus what the payer must know beside it: what arrived when
it was off the amount, a payment that came late, whether the amount still holds after the
quote window. Only transfers attached to this request's draft are shown: a transfer that pays
nothing is the merchant's business (dashboard, API), for on a shared address it may be anyone's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from drafts.enums import DraftStatus
from drafts.models import Draft
from paylinks.models import PaymentRequest, PaymentRequestStatus
from paylinks.presenters import payer_status
from payments.explorers import explorer_tx_url
from payments.registry import format_amount, get_asset

R, D = PaymentRequestStatus, DraftStatus


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

    @property
    def polling(self) -> bool:
        return self.state in ("pending", "seen", "mismatch", "reverted")


def _state(status: str, draft: Draft | None, now: datetime) -> str:
    draft_status = draft.status if draft is not None else None
    if status == R.PAID:
        if draft is not None and draft.status in (D.PENDING, D.EXPIRED) and draft.payment_reverted_at is not None:
            return "reverted"  # the Confirmed payment left the chain (a reorg) before it was final
        if draft is not None and draft.status == D.SEEN:
            return "seen"  # the reverted payment came back: confirming again
        return "paid"
    if status == R.CANCELLED and draft_status not in (D.SEEN, D.AMOUNT_MISMATCH):
        return "cancelled"
    if draft_status == D.AMOUNT_MISMATCH:
        return "mismatch"
    if draft_status == D.SEEN:
        return "seen"
    if status in (R.EXPIRED, R.CANCELLED):
        return "expired" if status == R.EXPIRED else "cancelled"
    if draft is not None and draft.status == D.PENDING and draft.expires_at > now:
        return "pending"
    return "choose"  # nothing chosen yet, or the chosen draft expired unpaid


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
    )
