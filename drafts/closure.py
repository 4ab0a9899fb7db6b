"""What a deleted account leaves of its drafts (docs/accounts.md).

Open drafts (Pending, AmountMismatch) are cancelled through the state machine. A Seen draft
has a payment on its way: it stays and may still confirm. Every draft keeps what the
operator's books need (amounts, fees, receiver address, transaction ids, times); the fields
that can carry personal data (memo, order id, sender address, Lightning address, verify URL)
are cleared. Idempotency records (they hold response bodies) are deleted."""

from __future__ import annotations

from datetime import datetime

from accounts.closure import account_closer
from accounts.models import User
from drafts.enums import DraftStatus
from drafts.models import Draft, IdempotencyKey
from drafts.services import draft_cancel


@account_closer
def drafts_close_for_account(*, user: User, now: datetime) -> None:
    for draft in Draft.objects.filter(user=user, status__in=[DraftStatus.PENDING, DraftStatus.AMOUNT_MISMATCH]):
        draft_cancel(draft=draft, now=now)
    Draft.objects.filter(user=user).update(
        memo=None, order_id=None, sender_address=None, lightning_address=None, lnurl_verify_url=None
    )
    IdempotencyKey.objects.filter(user=user).delete()
