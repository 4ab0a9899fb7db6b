"""What a deleted account leaves of its refunds (docs/accounts.md).

Open refunds are cancelled, so their claim pages tell the customer the merchant cancelled
them (the drafts closer cancels an unpaid payout draft; one already seen may still confirm
and then marks its refund Paid). Every refund keeps what the books need (amounts, status,
times, addresses, its drafts); the fields that can carry personal data (the customer's
email, the reason) are cleared."""

from __future__ import annotations

from datetime import datetime

from accounts.closure import account_closer
from refunds.models import OPEN_REFUND_STATUSES, Refund, RefundStatus


@account_closer
def refunds_close_for_account(*, user, now: datetime) -> None:
    Refund.objects.filter(user=user, status__in=OPEN_REFUND_STATUSES).update(
        status=RefundStatus.CANCELLED, closed_at=now
    )
    Refund.objects.filter(user=user).update(customer_email=None, reason=None)
