"""How long the outbox keeps its rows (docs/settings.md, "Retention"), purged by the beat task
`webhooks.purge` a small batch at a time (core/retention.py).

- Delivery attempts (the delivery log: status codes, errors, the receiver's response excerpt) of a
  finished delivery go after WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS; a pending delivery keeps
  every attempt (its retries number on from them).
- Finished deliveries (Succeeded or Failed) go after WEBHOOKS_DELIVERY_RETENTION_DAYS, with their
  attempts. A pending delivery is never purged.
- Events go after EVENTS_RETENTION_DAYS unless a pending delivery still refers to one; an event's
  finished deliveries go with it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from core.retention import BATCH, MAX_BATCHES, PurgeReport, purge_in_batches
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event


def _cutoff(now: datetime | None, days: int) -> datetime:
    return (now or timezone.now()) - timedelta(days=days)


def attempts_expired(now: datetime | None = None) -> QuerySet[DeliveryAttempt]:
    cutoff = _cutoff(now, settings.WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS)
    return DeliveryAttempt.objects.filter(claimed_at__lt=cutoff).exclude(delivery__status=DeliveryStatus.PENDING)


def deliveries_expired(now: datetime | None = None) -> QuerySet[Delivery]:
    cutoff = _cutoff(now, settings.WEBHOOKS_DELIVERY_RETENTION_DAYS)
    return Delivery.objects.filter(created_at__lt=cutoff).exclude(status=DeliveryStatus.PENDING)


def events_expired(now: datetime | None = None) -> QuerySet[Event]:
    cutoff = _cutoff(now, settings.EVENTS_RETENTION_DAYS)
    pending = Delivery.objects.filter(event_id=OuterRef("pk"), status=DeliveryStatus.PENDING)
    return Event.objects.filter(created_at__lt=cutoff).exclude(Exists(pending))


def outbox_purge(
    *, now: datetime | None = None, batch: int = BATCH, max_batches: int = MAX_BATCHES, pause_ratio: float | None = None
) -> dict[str, PurgeReport]:
    """Purge attempts, then deliveries, then events past their age; what went, per kind."""
    kinds: dict[str, Callable[[datetime | None], QuerySet[Any]]] = {
        "attempts": attempts_expired,
        "deliveries": deliveries_expired,
        "events": events_expired,
    }
    return {
        kind: purge_in_batches(partial(expired, now), batch=batch, max_batches=max_batches, pause_ratio=pause_ratio)
        for kind, expired in kinds.items()
    }
