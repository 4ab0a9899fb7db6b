"""Celery tasks: they take ids and call services. Schedules live in PostgreSQL, never in
countdowns: the beat tick `dispatch_due` finds whatever is due."""

from __future__ import annotations

import time
from uuid import UUID

from celery import shared_task

from webhooks import services

# A delivery task keeps working through its endpoint's due deliveries (a "lane") for a
# while: no broker round trip per delivery, and an endpoint's lanes never exceed its
# in-flight cap, so a slow endpoint occupies at most that many worker processes.
LANE_MAX_ATTEMPTS = 200
LANE_MAX_SECONDS = 10.0


@shared_task(name="webhooks.dispatch_due", ignore_result=True)
def dispatch_due(webhook_id: str | None = None) -> int:
    return len(services.deliveries_dispatch(webhook_id=UUID(webhook_id) if webhook_id else None))


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(attempt_id: str) -> int:
    started, made = time.monotonic(), 0
    attempt = services.delivery_attempt(attempt_id=UUID(attempt_id))
    while attempt is not None:
        made += 1
        if made >= LANE_MAX_ATTEMPTS or time.monotonic() - started >= LANE_MAX_SECONDS:
            # Hand the lane back to the queue so other endpoints' tasks get their turn.
            services.deliveries_dispatch(webhook_id=attempt.delivery.webhook_id, limit=1)
            break
        claimed = services.deliveries_dispatch(webhook_id=attempt.delivery.webhook_id, limit=1, enqueue=False)
        if not claimed:
            break
        attempt = services.delivery_attempt(attempt_id=claimed[0])
    return made
