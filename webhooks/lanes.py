"""A delivery task's lane: after its first attempt, the task goes on through the same
endpoint's due deliveries, claiming them LANE_BATCH at a time, with no broker round trip per
delivery. An endpoint's lanes never exceed its in-flight cap, so a slow endpoint occupies at
most that many worker processes.

This is the hot path of delivery, so each step is one SQL statement:

- claim a batch: the endpoint's next due deliveries, picked FOR UPDATE SKIP LOCKED, get a
  lease (next_attempt_at moves to its end; no attempt is counted yet). Should the lane die,
  they come due again when the lease ends: nothing is lost and no attempt is spent. The lease
  is short (LEASE_SECONDS) and each batch is leased afresh; the lane hands back what it has not
  started once its batch's lease runs out, so a killed lane holds deliveries for one lease.
- start an attempt: count it on the delivery, with its next attempt time as a dispatcher's
  claim sets it, and insert the attempt row as Sending, only while the lease is still this
  lane's (a redelivery or a late result moves next_attempt_at, and the lane skips the row).
- record a success (`attempts.attempt_send`): the attempt, the delivery and the end of any
  failure streak in one statement.

Only a healthy endpoint gets batches. Once an attempt fails, the lane hands back what it still
holds and goes on one attempt at a time through the dispatcher, within the failing endpoint's
cap of one, exactly as the beat tick would claim them.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from django.db import connection
from django.utils import timezone

from core.leases import lease_seconds
from core.sql.backend import backend
from webhooks import attempts, services
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, DeliveryStatus, Event, Webhook
from webhooks.services import OUTBOX

LANE_MAX_ATTEMPTS = 200
LANE_MAX_SECONDS = 10.0
LANE_BATCH = 20


def lease() -> timedelta:
    """How long a lane may hold a claimed batch (core.leases: LEASE_SECONDS)."""
    return timedelta(seconds=lease_seconds())


@dataclass(frozen=True)
class Leased:
    """A due delivery this lane holds until `until`; its next attempt is `attempt_count` + 1."""

    delivery_id: UUID
    attempt_count: int
    event: Event  # as read with the lease (unsaved: id, type, data, created_at, object_id, sequence)
    until: datetime


def deliveries_lease(*, webhook_id: UUID, limit: int) -> list[Leased]:
    """Lease up to `limit` of a healthy endpoint's due deliveries, oldest due first; none for an
    endpoint that is failing or disabled. Deliveries with an attempt under way, or whose
    attempts are used up (the dispatcher marks those Failed), are left alone."""
    now = timezone.now()
    until = now + lease()
    found = OUTBOX.lease(webhook_id=webhook_id, now=now, until=until, limit=limit, max_attempts=services.MAX_ATTEMPTS)
    # jsonb comes back as text (Django decodes JSONField itself)
    return [
        Leased(
            f.delivery_id,
            f.attempt_count,
            Event(
                id=f.event_id,
                type=f.event_type,
                data=json.loads(f.event_data),
                created_at=f.event_created_at,
                object_id=f.event_object_id,
                sequence=f.event_sequence,
            ),
            until,
        )
        for f in found
    ]


_SECRET = Webhook._meta.get_field("secret")
_PREVIOUS_SECRET = Webhook._meta.get_field("previous_secret")


def leased_start(leased: Leased) -> tuple[DeliveryAttempt, Webhook] | None:
    """Count the next attempt of a leased delivery and record it as Sending; None when the lease
    is no longer this lane's or the endpoint was disabled or started failing meanwhile."""
    now = timezone.now()
    count = leased.attempt_count + 1
    # Should this attempt's result never come, the schedule still holds (as after a dispatcher's claim).
    next_attempt_at = now + (
        services.RETRY_WAITS[count - 1] if count < services.MAX_ATTEMPTS else services.attempt_lease()
    )
    attempt_id = uuid.uuid4()
    row = OUTBOX.attempt_start(
        delivery_id=leased.delivery_id,
        until=leased.until,
        next_attempt_at=next_attempt_at,
        attempt={"id": attempt_id, "state": AttemptState.SENDING, "claimed_at": now, "started_at": now},
    )
    if row is None:
        return None
    number, webhook_id, url, secret, previous_secret, previous_secret_expires_at = row
    # The endpoint as it is now: a URL change or a rotated secret applies from the next attempt.
    # The secrets come as stored (encrypted): the fields decrypt them as an ORM read would.
    webhook = Webhook(
        id=webhook_id,
        url=url,
        secret=_SECRET.from_db_value(secret, None, connection),
        previous_secret=_PREVIOUS_SECRET.from_db_value(previous_secret, None, connection),
        previous_secret_expires_at=previous_secret_expires_at,
    )
    attempt = DeliveryAttempt(
        id=attempt_id,
        delivery_id=leased.delivery_id,
        number=number,
        state=AttemptState.SENDING,
        claimed_at=now,
        started_at=now,
    )
    return attempt, webhook


def leased_release(batch: list[Leased]) -> None:
    """Hand back leased deliveries not attempted: they are due again at once. One whose lease
    is no longer this lane's is left as it is."""
    if batch:
        Delivery.objects.filter(
            id__in=[leased.delivery_id for leased in batch],
            status=DeliveryStatus.PENDING,
            next_attempt_at=batch[0].until,
        ).update(next_attempt_at=timezone.now())


def leased_send(batch: list[Leased], *, deadline: float) -> tuple[int, bool]:
    """Attempt the leased deliveries in turn. Returns how many were attempted, and whether the
    endpoint still looks healthy (no failure, nothing refused by the lease or the endpoint)."""
    for n, leased in enumerate(batch):
        if time.monotonic() >= deadline:
            leased_release(batch[n:])
            return n, True
        started = leased_start(leased)
        if started is None:  # this one too, if still ours (the endpoint started failing)
            leased_release(batch[n:])
            return n, False
        attempt, webhook = started
        attempt = attempts.attempt_send(attempt=attempt, webhook=webhook, event=leased.event)
        if not attempt.succeeded:
            leased_release(batch[n + 1 :])
            return n + 1, False
    return len(batch), True


def lane_run(*, attempt_id: UUID) -> int:
    """Make a claimed attempt, then the same endpoint's further due deliveries until none is
    left, LANE_MAX_ATTEMPTS are made or LANE_MAX_SECONDS have passed; then hand the lane back
    to the queue, so other endpoints' tasks get their turn. Returns the attempts made."""
    started = time.monotonic()
    attempt = attempts.delivery_attempt(attempt_id=attempt_id)
    if attempt is None:
        return 0
    webhook_id = attempt.delivery.webhook_id
    # Leasing batches needs FOR UPDATE SKIP LOCKED and data-modifying WITH queries; on the
    # embedded default (SQLite, one writer at a time) the lane goes one attempt at a time.
    leases = backend(connection).leased_batches
    made, healthy = 1, attempt.succeeded and leases
    while True:
        if made >= LANE_MAX_ATTEMPTS or time.monotonic() - started >= LANE_MAX_SECONDS:
            services.deliveries_dispatch(webhook_id=webhook_id, limit=1)
            return made
        limit = min(LANE_BATCH, LANE_MAX_ATTEMPTS - made)
        batch = deliveries_lease(webhook_id=webhook_id, limit=limit) if healthy else []
        if batch:
            ends = time.monotonic() + lease().total_seconds()  # no attempt starts on a lapsed lease
            attempted, healthy = leased_send(batch, deadline=min(started + LANE_MAX_SECONDS, ends))
            made += attempted
            continue
        # Failing (or nothing left to lease): one attempt at a time, within the endpoint's cap.
        claimed = services.deliveries_dispatch(webhook_id=webhook_id, limit=1, enqueue=False)
        if not claimed:
            return made
        attempt = attempts.delivery_attempt(attempt_id=claimed[0])
        made += 1
        healthy = attempt is not None and attempt.succeeded and leases
