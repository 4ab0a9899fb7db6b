"""The audit log's retention: entries older than AUDIT_RETENTION_DAYS go, in batches (beat)."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from audit.models import AuditEntry

BATCH = 5000


@shared_task(name="audit.purge")
def audit_purge(*, batch: int = BATCH, now=None) -> int:
    """Delete entries past retention, a batch at a time; how many went."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.AUDIT_RETENTION_DAYS)
    total = 0
    while True:
        ids = list(AuditEntry.objects.filter(created_at__lt=cutoff).values_list("id", flat=True)[:batch])
        if not ids:
            return total
        total += AuditEntry.objects.filter(id__in=ids).purge()
