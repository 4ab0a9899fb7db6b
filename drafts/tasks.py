from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from drafts import idempotency, services
from drafts.enums import DraftStatus
from drafts.models import Draft

EXPIRY_BATCH = 500


@shared_task(name="drafts.expire_drafts", ignore_result=True)
def expire_drafts() -> int:
    """Move unpaid Pending drafts past their expiry to Expired (draft.expired). Safe to run twice."""
    now = timezone.now()
    due = list(
        Draft.objects.filter(status=DraftStatus.PENDING, expires_at__lte=now)
        .order_by("expires_at")
        .values_list("id", flat=True)[:EXPIRY_BATCH]
    )
    return sum(1 for draft_id in due if services.draft_expire(draft_id=draft_id, now=now))


@shared_task(name="drafts.purge_idempotency_keys", ignore_result=True)
def purge_idempotency_keys() -> int:
    return idempotency.purge_expired()
