"""Writes for events, webhook endpoints and deliveries.

The outbox: `event_record` writes the event, one Delivery per interested endpoint and (through
notifications.services.email_enqueue) an email row in the caller's transaction. After commit
a task is enqueued to send them; if that enqueue (or the worker, or Redis) is lost, the beat
tick finds the due rows in PostgreSQL. The retry schedule is `Delivery.next_attempt_at` / `attempt_count`.

An attempt is claimed (a DeliveryAttempt row in state Claimed) under SELECT ... FOR UPDATE
SKIP LOCKED, then a worker moves it Claimed -> Sending with a conditional UPDATE before it
POSTs: a duplicate task message finds nothing to do, so each attempt is POSTed at most once.
The task then goes on through that endpoint's due deliveries as a lane (webhooks/lanes.py).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

import outbound
from accounts.modes import livemode_of
from core import metrics
from core.sql.backend import backend
from core.sql.outbox import Outbox, OutboxShape
from core.sql.rows import RowInserter, insert_then_fetch, writes_in_one_statement
from core.sql.state import in_transaction, on_commit_once, unwritten
from core.sql.values import unsaved
from notifications import kinds as email_kinds
from notifications.services import email_enqueue
from webhooks import signing
from webhooks.fanout import DELIVERIES
from webhooks.models import (
    AttemptState,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    Event,
    EventType,
    Webhook,
)

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
# Waits after attempt 1..7 (decisions.md: 1, 2, 4, 8, 16, 32, 64 minutes).
RETRY_WAITS = [timedelta(minutes=2**n) for n in range(MAX_ATTEMPTS - 1)]
# Events also announced by email to the account (unless it turned emails off), and how.
EMAIL_KIND_OF_EVENT = {
    EventType.DRAFT_SEEN: email_kinds.DRAFT_EVENT,
    EventType.DRAFT_CONFIRMED: email_kinds.DRAFT_EVENT,
    EventType.DRAFT_AMOUNT_MISMATCH: email_kinds.DRAFT_EVENT,
    EventType.DRAFT_EXPIRED: email_kinds.DRAFT_EVENT,
    EventType.DRAFT_PAYMENT_REVERTED: email_kinds.DRAFT_EVENT,
    EventType.TRANSFER_UNMATCHED: email_kinds.TRANSFER_UNMATCHED,
}
OPEN_STATES = (AttemptState.CLAIMED, AttemptState.SENDING)
# The delivery lane's statements and the one-statement success (core.sql.outbox).
OUTBOX = Outbox(
    OutboxShape(
        delivery=Delivery,
        attempt=DeliveryAttempt,
        endpoint=Webhook,
        event=Event,
        pending=DeliveryStatus.PENDING,
        succeeded=DeliveryStatus.SUCCEEDED,
        open_attempts=OPEN_STATES,
        done=AttemptState.DONE,
    )
)
CLAIM_RESEND_AFTER = timedelta(minutes=2)


def attempt_lease() -> timedelta:
    """How long a claimed attempt may go without a result before it counts as lost."""
    return timedelta(seconds=settings.WEBHOOKS_TIMEOUT_SECONDS + 30)


def _enqueue(task_name: str, *args: Any) -> None:
    """Send a task after commit. A broker outage loses nothing: the beat tick finds the row."""
    from webhooks import tasks

    task = getattr(tasks, task_name)

    def send() -> None:
        try:
            task.delay(*args)
        except Exception:  # the broker is down; the row waits for the next tick
            logger.warning("Could not enqueue %s; the beat tick will pick it up", task_name, exc_info=True)

    # One send per distinct task and arguments per transaction (a batch of events needs one dispatch).
    on_commit_once(("webhooks", task_name, args), send)


# --- Events (the outbox) -------------------------------------------------------------------


# Every change of a draft records an event and fans it out: both statements are built once.
_EVENT_INSERT = RowInserter(Event)


def event_record(
    *,
    user,
    type: str,
    data: dict[str, Any],
    draft_id: UUID | None = None,
    along: Sequence[tuple] = (),
    livemode: bool | None = None,
    unless: Sequence[tuple] = (),
) -> Event:
    """Record an event in the transaction of the change it reports (the outbox), with one
    Delivery for each of the owner's endpoints that wants it.

    `along` holds (RowInserter, instance) pairs: the change itself (the new row the event
    reports) and other rows of it, written before the event in the same statement where the
    database allows (core.sql.rows.insert_then_fetch, with webhooks.fanout for the deliveries).
    A row its inserter's on_conflict refuses stops the rest: its instance, the later rows' and
    the event stay unwritten (core.sql.state.unwritten) and nothing more is written. With the change in
    `along` and all of it one statement, no transaction is needed; otherwise call this inside
    the transaction that makes the change, never after it. `livemode` is the mode of the object
    it reports (default: the caller's, accounts.modes): only endpoints of that mode get it.
    `unless` holds reads that refuse the whole write when one finds a row (insert_then_fetch:
    WriteRefused is raised and nothing is written)."""
    connection = transaction.get_connection()
    if not in_transaction() and not (along and type not in EMAIL_KIND_OF_EVENT and writes_in_one_statement(connection)):
        raise RuntimeError("event_record must run inside the transaction of the change it reports")
    livemode = livemode_of(user) if livemode is None else livemode
    event = unsaved(Event, user=user, type=type, data=data, draft_id=draft_id, livemode=livemode)
    inserts = list(along)
    if type == EventType.TEST:  # a test event goes only to the endpoint it tests
        for inserter, instance in [*inserts, (_EVENT_INSERT, event)]:
            inserter.insert(instance)
        return event
    # the rows, the event and its deliveries in one round trip where the database allows
    webhooks = insert_then_fetch([*inserts, (_EVENT_INSERT, event)], DELIVERIES, event, unless=unless)
    if unwritten(event):  # a row along was refused: nothing was written
        return event
    active = sorted(str(w.id) for w in webhooks if w.active)
    if active and in_transaction():
        # A change of a draft (a payment seen, confirmed): each endpoint's dispatch is sent the
        # moment the transaction commits, as work of its own that a running tick cannot hold up.
        for webhook_id in active:
            _enqueue("dispatch_due", webhook_id)
    elif active:
        _enqueue("dispatch_due")
    if type in EMAIL_KIND_OF_EVENT:  # unless the owner turned them off (an optional kind)
        email_enqueue(
            user=user,
            kind=EMAIL_KIND_OF_EVENT[type],
            context={"event": type, "data": data},
            dedup_key=f"event:{event.id}",
            livemode=livemode,  # a test object's email is marked as a test (notifications)
        )
    return event


# --- Dispatch: claim due deliveries ------------------------------------------------------


def deliveries_dispatch(
    *,
    now: datetime | None = None,
    limit: int | None = None,
    webhook_id: UUID | None = None,
    enqueue: bool = True,
) -> list[UUID]:
    """Claim due deliveries and enqueue one attempt each (after commit; with enqueue=False the
    caller makes them). Bounded, and safe to run concurrently and twice: rows are claimed with
    FOR UPDATE SKIP LOCKED, and an endpoint gets at most WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
    attempts at once (one while it is failing), so a slow or dead endpoint holds few workers.
    Oldest due first, but no endpoint's backlog takes the whole tick (_due_per_endpoint).
    Returns the attempt ids."""
    now = now or timezone.now()
    limit = limit or settings.WEBHOOKS_DISPATCH_BATCH
    with transaction.atomic():
        resend = _attempts_recover(now=now, limit=limit) if webhook_id is None else []
        due = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now, webhook__active=True)
        if webhook_id is not None:
            due = due.filter(webhook_id=webhook_id)
        candidates = list(due.order_by(*_BY_AGE).select_for_update(skip_locked=True, of=("self",))[:limit])
        if webhook_id is None and len(candidates) == limit:  # more due than a tick takes: one backlog could fill it
            candidates = _due_per_endpoint(due, first=candidates, limit=limit)
        if not candidates:
            return _attempts_run(resend, enqueue=enqueue)
        # One dispatcher per endpoint at a time, so the in-flight cap holds. The tick skips an
        # endpoint another dispatcher holds; a finished attempt waits its turn (a few ms), so
        # that endpoint's freed slot is not left idle until the next tick.
        webhooks = {
            w.id: w
            for w in Webhook.objects.filter(id__in={d.webhook_id for d in candidates}).select_for_update(
                skip_locked=webhook_id is None
            )
        }
        open_attempts = list(
            DeliveryAttempt.objects.filter(state__in=OPEN_STATES, delivery__webhook_id__in=webhooks).values_list(
                "delivery_id", "delivery__webhook_id"
            )
        )
        in_flight = Counter(webhook for _, webhook in open_attempts)
        busy = {delivery for delivery, _ in open_attempts}
        claimed: list[DeliveryAttempt] = []
        failed: list[Delivery] = []
        for delivery in candidates:
            webhook = webhooks.get(delivery.webhook_id)
            if webhook is None or delivery.id in busy:
                continue
            if delivery.attempt_count >= MAX_ATTEMPTS:  # the last attempt was lost
                delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
                delivery.save(update_fields=["status", "next_attempt_at"])
                failed.append(delivery)
                continue
            cap = 1 if webhook.last_failure_at else settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
            if in_flight[webhook.id] >= cap:
                continue
            in_flight[webhook.id] += 1
            delivery.attempt_count += 1
            delivery.total_attempts += 1
            # Should this attempt's result never come, the schedule still holds.
            delivery.next_attempt_at = now + (
                RETRY_WAITS[delivery.attempt_count - 1] if delivery.attempt_count < MAX_ATTEMPTS else attempt_lease()
            )
            delivery.save(update_fields=["attempt_count", "total_attempts", "next_attempt_at"])
            claimed.append(DeliveryAttempt(delivery=delivery, number=delivery.total_attempts, claimed_at=now))
        DeliveryAttempt.objects.bulk_create(claimed)
        for delivery in failed:
            _webhook_count_failed_delivery(webhooks[delivery.webhook_id], now=now)
        return _attempts_run(resend + [attempt.id for attempt in claimed], enqueue=enqueue)


_BY_AGE = ("next_attempt_at", "created_at")
# Pages a tick reads past endpoints that already have their share (each page one statement).
DISPATCH_PAGES = 20


def _due_per_endpoint(due: QuerySet[Delivery], *, first: list[Delivery], limit: int) -> list[Delivery]:
    """A full page of due deliveries, oldest first, may be one endpoint's backlog (a dead
    endpoint's, one account's burst): taken as it is, it would fill every tick and the other
    accounts' deliveries would wait behind it. Keep of each endpoint no more than it may have
    in flight, and read on past the endpoints that have that many, a page at a time, until the
    tick is full or nothing else is due. Each page is the same index walk as the first, and
    stepping over a backlog of 20,000 deliveries took about 2 ms here."""
    share = settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
    taken: Counter[UUID] = Counter()
    picked: list[Delivery] = []
    page = first
    for _ in range(DISPATCH_PAGES):
        for delivery in page:
            if taken[delivery.webhook_id] < share and len(picked) < limit:
                taken[delivery.webhook_id] += 1
                picked.append(delivery)
        if len(page) < limit or len(picked) >= limit:
            break
        # A row of this page not picked is an endpoint's beyond its share: the next page has none.
        full = [webhook_id for webhook_id, count in taken.items() if count >= share]
        page = list(
            due.exclude(webhook_id__in=full)
            .exclude(id__in=[delivery.id for delivery in picked])
            .order_by(*_BY_AGE)
            .select_for_update(skip_locked=True, of=("self",))[:limit]
        )
    return picked


def _attempts_run(attempt_ids: list[UUID], *, enqueue: bool) -> list[UUID]:
    if enqueue:
        for attempt_id in attempt_ids:
            _enqueue("deliver", str(attempt_id))
    return attempt_ids


def _attempts_recover(*, now: datetime, limit: int) -> list[UUID]:
    """The tick's repair pass. An attempt Sending for longer than a POST can take lost its
    worker: it gets no result and the delivery goes on by its schedule. An attempt still
    Claimed after CLAIM_RESEND_AFTER lost its task message, or waits behind a backlog: it is
    sent again (only one copy can move it to Sending, so it is POSTed once at most)."""
    DeliveryAttempt.objects.filter(state=AttemptState.SENDING, started_at__lt=now - attempt_lease()).update(
        state=AttemptState.INTERRUPTED,
        finished_at=now,
        error="No result: the worker was lost during this attempt.",
    )
    stale = list(
        DeliveryAttempt.objects.filter(state=AttemptState.CLAIMED, claimed_at__lte=now - CLAIM_RESEND_AFTER)
        .select_for_update(skip_locked=True)
        .values_list("id", flat=True)[:limit]
    )
    if stale:
        DeliveryAttempt.objects.filter(id__in=stale).update(claimed_at=now)
    return stale


# --- One attempt ----------------------------------------------------------------------------


def delivery_attempt(*, attempt_id: UUID, now: datetime | None = None) -> DeliveryAttempt | None:
    """Make one claimed attempt: check the address again, POST once, record the outcome and
    the next attempt time. Returns None when the attempt was already taken (a duplicate task)."""
    started = now or timezone.now()
    taken = DeliveryAttempt.objects.filter(id=attempt_id, state=AttemptState.CLAIMED).update(
        state=AttemptState.SENDING, started_at=started
    )
    if not taken:
        return None
    attempt = (
        DeliveryAttempt.objects.select_related("delivery__webhook", "delivery__event").filter(pk=attempt_id).first()
    )
    if attempt is None:
        return None  # the endpoint was deleted meanwhile
    delivery, webhook, event = attempt.delivery, attempt.delivery.webhook, attempt.delivery.event
    if delivery.status != DeliveryStatus.PENDING or not webhook.active:
        DeliveryAttempt.objects.filter(pk=attempt.pk).update(
            state=AttemptState.INTERRUPTED, finished_at=started, error="Not sent: the delivery or endpoint changed."
        )
        return attempt
    return attempt_send(attempt=attempt, webhook=webhook, event_type=event.type, event_data=event.data, now=now)


def attempt_send(
    *, attempt: DeliveryAttempt, webhook: Webhook, event_type: str, event_data: Any, now: datetime | None = None
) -> DeliveryAttempt:
    """POST an attempt already moved to Sending, signed for `webhook`, and record the outcome."""
    body = signing.body_encode(event_type, event_data)
    headers = signing.delivery_headers(
        secret=webhook.secret,
        previous_secret=webhook.previous_secret_in_force(attempt.started_at),
        delivery_id=str(attempt.delivery_id),
        event_type=event_type,
        timestamp=int(time.time()),
        body=body,
    )
    try:
        outcome = outbound.post(
            webhook.url,
            body=body,
            headers=headers,
            timeout=settings.WEBHOOKS_TIMEOUT_SECONDS,
            max_bytes=settings.WEBHOOKS_RESPONSE_MAX_BYTES,
        )
    except outbound.UrlNotAllowed as exc:
        # "does not resolve" is a DNS failure; anything else the guard refused (a private address)
        kind = "DNS" if "does not resolve" in str(exc) else "Not sent"
        outcome = outbound.Response(None, 0, f"{kind}: {exc}")
    return _attempt_finish(attempt=attempt, outcome=outcome, now=now)


def _attempt_finish(*, attempt: DeliveryAttempt, outcome: outbound.Response, now: datetime | None) -> DeliveryAttempt:
    now = now or timezone.now()
    metrics.webhook_delivery_counted(outcome)
    attempt.state, attempt.finished_at = AttemptState.DONE, now
    attempt.status_code, attempt.duration_ms = outcome.status_code, outcome.duration_ms
    attempt.error, attempt.response_excerpt = outcome.error[:500], outcome.excerpt
    if outcome.ok and backend(connection).leased_batches:  # the one-statement success
        OUTBOX.attempt_succeeded(
            attempt_id=attempt.id,
            now=now,
            result={
                "status_code": attempt.status_code,
                "duration_ms": attempt.duration_ms,
                "error": attempt.error,
                "excerpt": attempt.response_excerpt,
            },
        )
        return attempt
    with transaction.atomic():
        delivery = Delivery.objects.select_for_update().filter(pk=attempt.delivery_id).first()
        if delivery is None:
            return attempt  # the endpoint was deleted while the POST was under way
        DeliveryAttempt.objects.filter(pk=attempt.pk).update(
            state=attempt.state,
            finished_at=attempt.finished_at,
            status_code=attempt.status_code,
            duration_ms=attempt.duration_ms,
            error=attempt.error,
            response_excerpt=attempt.response_excerpt,
        )
        if delivery.status != DeliveryStatus.PENDING:
            return attempt  # another round already settled it
        if outcome.ok:  # the embedded default (SQLite): the same success, statement by statement
            delivery.status, delivery.delivered_at, delivery.next_attempt_at = DeliveryStatus.SUCCEEDED, now, None
            delivery.save(update_fields=["status", "delivered_at", "next_attempt_at"])
            Webhook.objects.filter(pk=delivery.webhook_id).filter(
                Q(consecutive_failures__gt=0) | Q(last_failure_at__isnull=False)
            ).update(consecutive_failures=0, last_failure_at=None)
            return attempt
        webhook = Webhook.objects.select_for_update().get(pk=delivery.webhook_id)
        webhook.last_failure_at = now
        webhook.save(update_fields=["last_failure_at"])
        if delivery.attempt_count >= MAX_ATTEMPTS:
            delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
            delivery.save(update_fields=["status", "next_attempt_at"])
            _webhook_count_failed_delivery(webhook, now=now)
        else:
            delivery.next_attempt_at = now + RETRY_WAITS[delivery.attempt_count - 1]
            delivery.save(update_fields=["next_attempt_at"])
        return attempt


def _webhook_count_failed_delivery(webhook: Webhook, *, now: datetime) -> None:
    """A delivery used up its attempts. Enough in a row disable the endpoint; its owner is told."""
    webhook.consecutive_failures += 1
    webhook.save(update_fields=["consecutive_failures"])
    if webhook.active and webhook.consecutive_failures >= settings.WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES:
        webhook.active, webhook.disabled_at = False, now
        webhook.disabled_reason = f"{webhook.consecutive_failures} deliveries in a row failed."
        webhook.save(update_fields=["active", "disabled_at", "disabled_reason"])
        email_enqueue(
            user=webhook.user,
            kind=email_kinds.WEBHOOK_DISABLED,
            context={"url": webhook.url, "webhookId": str(webhook.id), "failures": webhook.consecutive_failures},
        )
