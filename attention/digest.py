"""The daily digest: one email a UTC day to each account with something waiting (live mode),
none when nothing waits or the account turned it off (notifications: `attention_digest`, or
email notifications off). Sent through the email outbox; the day's key makes it once a day
however often the beat entry runs."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Q
from django.utils import timezone

from accounts.models import ApiKey
from accounts.modes import mode_set
from attention.presenters import attention_item_json
from attention.selectors import attention_of
from chainwatch.models import UnmatchedTransfer
from drafts.models import Draft
from notifications.kinds import ATTENTION_DIGEST
from notifications.models import NotificationPreference
from notifications.selectors import attention_digest_enabled
from notifications.services import email_enqueue
from refunds.models import Refund, RefundStatus
from webhooks.models import Webhook


def _candidates() -> set[int]:
    """Accounts that may have something waiting: a cheap, wide read (each is then read exactly)."""
    ids: set[int] = set()
    ids |= set(
        Draft.objects.filter(livemode=True)
        .filter(
            Q(status__in=("AmountMismatch", "Seen")) | Q(payment_reverted_at__isnull=False, paid_tx_id__isnull=True)
        )
        .values_list("user_id", flat=True)
        .distinct()
    )
    ids |= set(UnmatchedTransfer.objects.filter(matched_at__isnull=True).values_list("user_id", flat=True).distinct())
    ids |= set(
        Refund.objects.filter(livemode=True, status=RefundStatus.CLAIMED).values_list("user_id", flat=True).distinct()
    )
    ids |= set(
        Webhook.objects.filter(livemode=True)
        .filter(Q(active=False) | Q(consecutive_failures__gt=0))
        .values_list("user_id", flat=True)
        .distinct()
    )
    ids |= set(
        ApiKey.objects.filter(livemode=True, revoked_at__isnull=True, expires_at__isnull=False)
        .values_list("user_id", flat=True)
        .distinct()
    )
    off = NotificationPreference.objects.filter(Q(email_enabled=False) | Q(attention_digest=False))
    return ids - set(off.values_list("user_id", flat=True))


def digests_send(*, now: datetime | None = None) -> int:
    """Write today's digest of every account that has items (from ATTENTION_DIGEST_HOUR_UTC).
    Returns how many were written."""
    now = now or timezone.now()
    if now.hour < settings.ATTENTION_DIGEST_HOUR_UTC:
        return 0
    day = now.date().isoformat()
    sent = 0
    for account in get_user_model().objects.filter(pk__in=_candidates(), is_active=True).order_by("pk"):
        if not attention_digest_enabled(user=account):
            continue
        attention = attention_of(mode_set(account, livemode=True), now=now)
        if not attention:
            continue
        written = email_enqueue(
            kind=ATTENTION_DIGEST,
            user=account,
            context={"day": day, "items": [attention_item_json(item) for item in attention.items]},
            dedup_key=f"attention-digest:{account.pk}:{day}",
        )
        sent += written is not None
    return sent
