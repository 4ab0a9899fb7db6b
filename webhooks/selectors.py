"""Reads for webhook endpoints, their delivery log and the account's events."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.core.cache import cache
from django.db.models import Prefetch, Q, QuerySet
from django.utils import timezone

from accounts.models import User
from accounts.modes import owned
from core.problems import NotFound, Problem
from webhooks.models import Delivery, DeliveryAttempt, Event, Webhook


def webhook_list(*, user: User) -> QuerySet[Webhook]:
    return owned(Webhook, user).order_by("-created_at")


def delivery_list(*, webhook: Webhook) -> QuerySet[Delivery]:
    return (
        Delivery.objects.filter(webhook=webhook)
        .select_related("event")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("number")))
        .order_by("-created_at", "-id")
    )


def account_delivery_list(*, user: User) -> QuerySet[Delivery]:
    """Every delivery to the account's endpoints in the caller's mode, newest first (the
    dashboard's delivery log: filters and CSV)."""
    return (
        Delivery.objects.filter(webhook__in=webhook_list(user=user))
        .select_related("event", "webhook")
        .prefetch_related(Prefetch("attempts", queryset=DeliveryAttempt.objects.order_by("number")))
        .order_by("-created_at", "-id")
    )


def delivery_backlog(*, now: datetime) -> tuple[int, object]:
    """Deliveries still pending (due or waiting for a retry), and the due time of the oldest
    one due now to an active endpoint (None when none is due): read by /healthz."""
    from django.db.models import Min

    from webhooks.models import DeliveryStatus

    pending = Delivery.objects.filter(status=DeliveryStatus.PENDING)
    oldest = pending.filter(next_attempt_at__lte=now, webhook__active=True).aggregate(at=Min("next_attempt_at"))["at"]
    return pending.count(), oldest


# --- Events (GET /api/v1/events, the stream `listen` reads) -------------------------------

# An event shows in the stream once it is this old: the transaction that wrote it has committed
# by then, so one written earlier never appears after the cursor has passed it.
STREAM_SETTLE = timedelta(seconds=1)
STREAM_WAIT_MAX_SECONDS = 25
STREAM_POLL_SECONDS = 0.5


def event_list(*, user: User, filters: Mapping[str, Any]) -> QuerySet[Event]:
    """The account's events in the caller's mode (a test key: test events only), newest first.
    `filters`: type, objectId, from, to (created at, inclusive), as the list validated them."""
    events = owned(Event, user)
    if filters.get("type"):
        events = events.filter(type=filters["type"])
    if filters.get("objectId"):
        events = events.filter(object_id=filters["objectId"])
    if filters.get("from"):
        events = events.filter(created_at__gte=filters["from"])
    if filters.get("to"):
        events = events.filter(created_at__lte=filters["to"])
    return events.order_by("-created_at", "-id")


def event_get(*, user: User, event_id: UUID | str | None) -> Event:
    event = owned(Event, user).filter(pk=event_id).first() if event_id is not None else None
    if event is None:
        raise NotFound("You have no event with this id (in this key's mode).")
    return event


def events_after(
    *, user: User, after: UUID | None, limit: int, wait: float = 0, types: list[str] | None = None
) -> list[Event]:
    """The account's events (caller's mode) recorded after the event `after`, oldest first, at
    most `limit`; from the first one when `after` is None. With `wait` seconds, a call that
    finds none looks again every STREAM_POLL_SECONDS until one comes or the wait is over (a
    long poll; at most EVENTS_STREAM_MAX_WAITERS wait at once). Only events at least
    STREAM_SETTLE old are given, so a cursor never passes an event whose transaction had not
    committed yet."""
    events = owned(Event, user)
    if types:
        events = events.filter(type__in=types)
    if after is not None:
        cursor = owned(Event, user).filter(pk=after).values_list("created_at", "id").first()
        if cursor is None:  # a bad query parameter (400), as an unknown filter value is
            raise Problem(
                "You have no event with this id (in this key's mode).", code="unknown_event", field="startingAfter"
            )
        at, pk = cursor
        events = events.filter(Q(created_at__gt=at) | Q(created_at=at, id__gt=pk))
    events = events.order_by("created_at", "id")
    found = list(events.filter(created_at__lte=timezone.now() - STREAM_SETTLE)[:limit])
    if found or wait <= 0:
        return found
    with _waiting() as may_wait:
        deadline = time.monotonic() + (min(wait, STREAM_WAIT_MAX_SECONDS) if may_wait else 0)
        while not found and time.monotonic() < deadline:
            time.sleep(min(STREAM_POLL_SECONDS, max(0.0, deadline - time.monotonic())))
            found = list(events.filter(created_at__lte=timezone.now() - STREAM_SETTLE)[:limit])
    return found


_WAITERS_KEY = "events-stream-waiters"


@contextmanager
def _waiting() -> Iterator[bool]:
    """Whether this poll may wait: at most EVENTS_STREAM_MAX_WAITERS wait at once over every web
    process (a count in the cache; it expires, so a process killed mid-wait is forgotten
    within two minutes). Each waiting poll holds a WSGI worker; the rest answer at once."""
    try:
        cache.add(_WAITERS_KEY, 0, timeout=120)
        waiting = cache.incr(_WAITERS_KEY)
    except Exception:  # the cache is down or the count expired meanwhile: do not wait
        yield False
        return
    try:
        yield waiting <= settings.EVENTS_STREAM_MAX_WAITERS
    finally:
        with suppress(Exception):
            cache.decr(_WAITERS_KEY)
