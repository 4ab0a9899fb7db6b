"""What a deleted account leaves of its pay links (docs/accounts.md).

Open requests are cancelled, so their pages tell payers not to pay (the drafts closer
cancels their pending drafts; a Seen one may still confirm and then marks its request
Paid). Every request keeps what the books need (amounts, status, times, its draft); the
fields that can carry personal data (memo, order id, the payer's receipt address) are cleared."""

from __future__ import annotations

from datetime import datetime

from accounts.closure import account_closer
from paylinks.models import PaymentRequest, PaymentRequestStatus


@account_closer
def payment_requests_close_for_account(*, user, now: datetime) -> None:
    PaymentRequest.objects.filter(user=user, status=PaymentRequestStatus.OPEN).update(
        status=PaymentRequestStatus.CANCELLED, closed_at=now
    )
    PaymentRequest.objects.filter(user=user).update(memo=None, order_id=None, payer_email=None)
