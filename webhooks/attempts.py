"""One delivery attempt, from its claim to its recorded outcome: take it (Claimed -> Sending,
only one taker can), build the signed request, send it (the synchronous lane) or record what
the pass's concurrent sender got back (webhooks/passes.py), and the next attempt's time.
The outbox's claiming and dispatch are in webhooks/services.py."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

import outbound
from core import metrics
from core.sql.backend import backend
from webhooks import signing
from webhooks.models import (
    AttemptState,
    Delivery,
    DeliveryAttempt,
    DeliveryStatus,
    Event,
    Webhook,
)
from webhooks.services import MAX_ATTEMPTS, OUTBOX, RETRY_WAITS, _webhook_count_failed_delivery

logger = logging.getLogger(__name__)


def delivery_attempt(*, attempt_id: UUID, now: datetime | None = None) -> DeliveryAttempt | None:
    """Make one claimed attempt: check the address again, POST once, record the outcome and
    the next attempt time. Returns None when the attempt was already taken (a duplicate task)."""
    taken = attempt_take(attempt_id=attempt_id, now=now)
    if not isinstance(taken, tuple):
        return taken
    attempt, webhook, event = taken
    return attempt_send(attempt=attempt, webhook=webhook, event=event, now=now)


def attempt_take(
    *, attempt_id: UUID, now: datetime | None = None
) -> tuple[DeliveryAttempt, Webhook, Event] | DeliveryAttempt | None:
    """Move a claimed attempt to Sending (only one taker can) and read what it sends: the
    attempt, its endpoint and its event. None when the attempt was already taken (a duplicate
    task) or the endpoint is gone; the attempt alone, Interrupted, when its delivery was settled
    or its endpoint disabled meanwhile (nothing is sent)."""
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
    return attempt, webhook, event


def attempt_request(*, attempt: DeliveryAttempt, webhook: Webhook, event: Event) -> tuple[bytes, dict[str, str]]:
    """The body and headers of an attempt, signed for `webhook` (and its replaced secret while
    a rotation's overlap lasts). `event`: the delivery's Event (its id, type, data, createdAt,
    objectId and sequence)."""
    body = signing.event_body(event)
    headers = signing.delivery_headers(
        secret=webhook.secret,
        previous_secret=webhook.previous_secret_in_force(attempt.started_at or timezone.now()),
        delivery_id=str(attempt.delivery_id),
        event_type=event.type,
        timestamp=int(time.time()),
        body=body,
    )
    return body, headers


def outcome_refused(exc: outbound.UrlNotAllowed) -> outbound.Response:
    """The outcome of an attempt the guard refused before sending: a DNS failure, or an address
    that may not be called (a private one)."""
    kind = "DNS" if "does not resolve" in str(exc) else "Not sent"
    return outbound.Response(None, 0, f"{kind}: {exc}")


def attempt_send(
    *, attempt: DeliveryAttempt, webhook: Webhook, event: Event, now: datetime | None = None
) -> DeliveryAttempt:
    """POST an attempt already moved to Sending, signed for `webhook`, and record the outcome."""
    body, headers = attempt_request(attempt=attempt, webhook=webhook, event=event)
    try:
        outcome = outbound.post(
            webhook.url,
            body=body,
            headers=headers,
            timeout=settings.WEBHOOKS_TIMEOUT_SECONDS,
            max_bytes=settings.WEBHOOKS_RESPONSE_MAX_BYTES,
        )
    except outbound.UrlNotAllowed as exc:
        outcome = outcome_refused(exc)
    return attempt_record(attempt=attempt, outcome=outcome, now=now)


def attempt_record(
    *, attempt: DeliveryAttempt, outcome: outbound.Response, now: datetime | None = None
) -> DeliveryAttempt:
    """Record an attempt's outcome: the attempt Done, and the delivery Succeeded, or its next
    attempt scheduled (Failed after the last one), the endpoint's failure streak kept."""
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


def attempts_record_succeeded(
    results: Sequence[tuple[DeliveryAttempt, outbound.Response]], *, now: datetime | None = None
) -> None:
    """Record many successful attempts at once, each as `attempt_record` records a success: in
    one statement where the database has the outbox's statements (PostgreSQL), else one by one."""
    now = now or timezone.now()
    if not backend(connection).leased_batches:
        for attempt, outcome in results:
            attempt_record(attempt=attempt, outcome=outcome, now=now)
        return
    rows = []
    for attempt, outcome in results:
        metrics.webhook_delivery_counted(outcome)
        attempt.state, attempt.finished_at = AttemptState.DONE, now
        attempt.status_code, attempt.duration_ms = outcome.status_code, outcome.duration_ms
        attempt.error, attempt.response_excerpt = outcome.error[:500], outcome.excerpt
        rows.append((attempt.id, attempt.status_code, attempt.duration_ms, attempt.error, attempt.response_excerpt))
    OUTBOX.attempts_succeeded(now=now, results=rows)
