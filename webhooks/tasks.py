"""Celery tasks: they take ids and call services. Schedules live in PostgreSQL, never in
countdowns: the beat tick `dispatch_due` finds whatever is due."""

from __future__ import annotations

from uuid import UUID

from celery import shared_task

from webhooks import lanes, services


@shared_task(name="webhooks.dispatch_due", ignore_result=True)
def dispatch_due(webhook_id: str | None = None) -> int:
    return len(services.deliveries_dispatch(webhook_id=UUID(webhook_id) if webhook_id else None))


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(attempt_id: str) -> int:
    """One claimed attempt, then its endpoint's lane (webhooks/lanes.py)."""
    return lanes.lane_run(attempt_id=UUID(attempt_id))
