"""How long unmatched-transfer reports are kept (docs/settings.md, "Retention"), purged by the
beat task `chainwatch.purge_unmatched` a small batch at a time (core/retention.py).

A report goes after UNMATCHED_TRANSFERS_RETENTION_DAYS, but never while the transfer could still
matter to a draft: not before AMOUNT_RESERVATION_DAYS plus DRAFT_LATE_PAYMENT_GRACE_HOURS have
passed since it was reported (a late payment or a repeated payment of a reserved amount is
judged against it within that window; reports_record would otherwise report it again). The
observed transfer itself stays (chain data; a matched transfer is part of its draft's payment).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import QuerySet
from django.utils import timezone

from chainwatch.models import UnmatchedTransfer
from core.retention import BATCH, MAX_BATCHES, PurgeReport, purge_in_batches


def unmatched_kept_for() -> timedelta:
    """The retention setting, never shorter than the reservation window plus the late-payment grace."""
    window = timedelta(days=settings.AMOUNT_RESERVATION_DAYS, hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    return max(timedelta(days=settings.UNMATCHED_TRANSFERS_RETENTION_DAYS), window)


def unmatched_expired(now: datetime | None = None) -> QuerySet[UnmatchedTransfer]:
    return UnmatchedTransfer.objects.filter(created_at__lt=(now or timezone.now()) - unmatched_kept_for())


def unmatched_purge(*, now: datetime | None = None, batch: int = BATCH, max_batches: int = MAX_BATCHES) -> PurgeReport:
    return purge_in_batches(lambda: unmatched_expired(now), batch=batch, max_batches=max_batches)
