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
from collections import Counter
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, Model, OuterRef, QuerySet, Subquery
from django.utils import timezone

from accounts.models import User
from accounts.modes import livemode_of
from core.sql.outbox import Outbox, OutboxShape
from core.sql.rows import RowInserter, Select, insert_then_fetch, writes_in_one_statement
from core.sql.state import in_transaction, on_commit_once, unwritten
from core.sql.values import unsaved
from notifications import kinds as email_kinds
from notifications.services import email_enqueue
from webhooks import nudges
from webhooks.fanout import DELIVERIES
from webhooks.models import (
    FIRST_OF_OBJECT,
    AttemptState,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    Event,
    EventType,
    Webhook,
    event_object_id,
)

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
# Waits after attempt 1..7 (decisions.md: 1, 2, 4, 8, 16, 32, 64 minutes).
RETRY_WAITS = [timedelta(minutes=2**n) for n in range(MAX_ATTEMPTS - 1)]
# Events also announced by email to the account (unless it turned emails off), and how.
EMAIL_KIND_OF_EVENT: dict[str, str] = {
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
        # at most one waiting per endpoint, and one next pass (webhooks/nudges.py)
        nudge = task_name in ("dispatch_due", "pass_next")
        flag = nudges.NEXT_PASS if task_name == "pass_next" else (args[0] if args else None)
        if nudge and not nudges.nudge_claim(flag):
            return
        try:
            task.delay(*args)
        except Exception:  # the broker is down; the row waits for the next tick
            if nudge:
                nudges.nudge_clear(flag)
            logger.warning("Could not enqueue %s; the beat tick will pick it up", task_name, exc_info=True)

    # One send per distinct task and arguments per transaction (a batch of events needs one dispatch).
    on_commit_once(("webhooks", task_name, args), send)


def next_pass_nudge() -> None:
    """A pass that stops claiming with requests still in flight asks for the next one
    (webhooks/passes.py), so another worker process goes on claiming meanwhile."""
    _enqueue("pass_next")


# --- Events (the outbox) -------------------------------------------------------------------


# Every change of a draft records an event and fans it out: both statements are built once.
_EVENT_INSERT = RowInserter(Event)
# The last sequence number of an object's events (index webhooks_event_object_seq).
_LAST_SEQUENCE = Select(Event, columns=[("max", "sequence")], where=[("object_id", "=")])


def _sequence_next(event_type: str, object_id: UUID | None) -> int:
    """The object's next sequence number. Read in the transaction of the change, under the
    object's row lock (its state change), so the object's events count up in the order they
    are written; an event that opens its object is 1 without a read."""
    if object_id is None or event_type in FIRST_OF_OBJECT:
        return 1
    ((last,),) = _LAST_SEQUENCE.rows(object_id)
    return (last or 0) + 1


def event_record(
    *,
    user: User,
    type: str,
    data: dict[str, Any],
    draft_id: UUID | None = None,
    along: Sequence[tuple[RowInserter, Model]] = (),
    livemode: bool | None = None,
    unless: Sequence[tuple[Select, Sequence[Any]]] = (),
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
    WriteRefused is raised and nothing is written).

    A creation writes its rows, its event and the deliveries itself, in one write whose result
    says what happened (drafts.creation.draft_write): `event_unsaved`, `event_row`,
    `DELIVERIES`, then `event_announced`, the steps this takes."""
    connection = transaction.get_connection()
    if not in_transaction() and not (along and type not in EMAIL_KIND_OF_EVENT and writes_in_one_statement(connection)):
        raise RuntimeError("event_record must run inside the transaction of the change it reports")
    event = event_unsaved(user=user, type=type, data=data, draft_id=draft_id, livemode=livemode)
    inserts = list(along)
    if type == EventType.TEST:  # a test event goes only to the endpoint it tests
        for inserter, instance in [*inserts, event_row(event)]:
            inserter.insert(instance)
        return event
    # the rows, the event and its deliveries in one round trip where the database allows
    webhooks = insert_then_fetch([*inserts, event_row(event)], DELIVERIES, event, unless=unless)
    if unwritten(event):  # a row along was refused: nothing was written
        return event
    event_announced(event, webhooks)
    return event


def event_unsaved(
    *, user: User, type: str, data: dict[str, Any], draft_id: UUID | None = None, livemode: bool | None = None
) -> Event:
    """The event as it will be stored, numbered after its object's earlier ones (read under
    the object's row lock, unless it opens its object)."""
    livemode = livemode_of(user) if livemode is None else livemode
    object_id = event_object_id(type, data, draft_id)
    return unsaved(
        Event,
        user=user,
        type=type,
        data=data,
        draft_id=draft_id,
        object_id=object_id,
        sequence=_sequence_next(type, object_id),
        livemode=livemode,
    )


def event_row(event: Event) -> tuple[RowInserter, Event]:
    """The event's INSERT, for a write of rows together (its deliveries: the read
    `webhooks.fanout.DELIVERIES` after it)."""
    return _EVENT_INSERT, event


def event_announced(event: Event, webhooks: Sequence[Webhook]) -> None:
    """After the event and its deliveries are written (`webhooks`: the endpoints that got one):
    each active endpoint's dispatch is sent, and the account's email when the type has one."""
    active = sorted(str(w.id) for w in webhooks if w.active)
    if active and in_transaction():
        # A change of a draft (a payment seen, confirmed): each endpoint's dispatch is sent the
        # moment the transaction commits, as work of its own that a running tick cannot hold up.
        for webhook_id in active:
            _enqueue("dispatch_due", webhook_id)
    elif active:
        _enqueue("dispatch_due")
    if event.type in EMAIL_KIND_OF_EVENT:  # unless the owner turned them off (an optional kind)
        email_enqueue(
            user=event.user,
            kind=EMAIL_KIND_OF_EVENT[event.type],
            context={"event": event.type, "data": event.data},
            dedup_key=f"event:{event.id}",
            livemode=event.livemode,  # a test object's email is marked as a test (notifications)
        )


# --- Dispatch: claim due deliveries ------------------------------------------------------


def deliveries_dispatch(
    *,
    now: datetime | None = None,
    limit: int | None = None,
    webhook_id: UUID | None = None,
    enqueue: bool = True,
    slow: Collection[UUID] = (),
    skip: Collection[UUID] = (),
    one_each: bool = False,
    recover: bool = True,
    healthy_cap: int | None = None,
) -> list[UUID]:
    """Claim due deliveries and enqueue one attempt each (after commit; with enqueue=False the
    caller makes them). Bounded, and safe to run concurrently and twice: rows are claimed with
    FOR UPDATE SKIP LOCKED, and an endpoint gets at most WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
    attempts at once (one while it is failing), so a slow or dead endpoint holds few workers.
    Oldest due first, but no endpoint's backlog takes the whole tick (_due_per_endpoint).
    A pass (webhooks/passes.py) names the endpoints it saw answer slowly (`slow`: one attempt
    in flight, as a failing one), those it takes none of this time (`skip`) and, with
    `one_each`, takes at most one delivery of an endpoint; it runs the repair pass
    (`_attempts_recover`) once, not at each claim (`recover`); and it counts a healthy
    endpoint's cap as at least `healthy_cap` (one more than a pass's lane has in flight, so
    the lane's attempts a killed process left Sending do not hold the endpoint up until the
    repair pass finds them).
    Returns the attempt ids."""
    now = now or timezone.now()
    limit = limit or settings.WEBHOOKS_DISPATCH_BATCH
    with transaction.atomic():
        resend = _attempts_recover(now=now, limit=limit) if webhook_id is None and recover else []
        due = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now, webhook__active=True)
        due = due.filter(~Exists(_EARLIER_OF_OBJECT))
        if webhook_id is not None:
            due = due.filter(webhook_id=webhook_id)
        if skip:
            due = due.exclude(webhook_id__in=list(skip))
        if one_each and transaction.get_connection().features.can_distinct_on_fields:
            # Lock only each endpoint's oldest due delivery: a pass claims often, and locking a
            # backlog's rows would make another process's lane skip them (SKIP LOCKED).
            firsts = due.order_by("webhook_id", *_BY_AGE).distinct("webhook_id").values("id")
            candidates = list(
                due.filter(id__in=Subquery(firsts))
                .order_by(*_BY_AGE)
                .select_for_update(skip_locked=True, of=("self",))[:limit]
            )
        else:
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
        picked: set[UUID] = set()
        for delivery in candidates:
            webhook = webhooks.get(delivery.webhook_id)
            if webhook is None or delivery.id in busy:
                continue
            if delivery.attempt_count >= MAX_ATTEMPTS:  # the last attempt was lost
                delivery.status, delivery.next_attempt_at = DeliveryStatus.FAILED, None
                delivery.save(update_fields=["status", "next_attempt_at"])
                failed.append(delivery)
                continue
            cap = settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
            if webhook.last_failure_at or webhook.id in slow:
                cap = 1
            elif healthy_cap is not None:
                cap = max(cap, healthy_cap)
            if in_flight[webhook.id] >= cap or (one_each and webhook.id in picked):
                continue
            in_flight[webhook.id] += 1
            picked.add(webhook.id)
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
# An earlier event of the same object still owed to the same endpoint (pending: due, waiting for
# a retry or under way): the delivery waits until that one succeeded or was given up (Failed),
# so one endpoint gets one object's events in sequence order. Other objects and endpoints go on.
# The lane's lease (core.sql.outbox) asks the same.
_EARLIER_OF_OBJECT = Delivery.objects.filter(
    webhook_id=OuterRef("webhook_id"),
    status=DeliveryStatus.PENDING,
    event__object_id=OuterRef("event__object_id"),
    event__sequence__lt=OuterRef("event__sequence"),
)
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
