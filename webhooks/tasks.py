"""Celery tasks: they take ids and call services. Schedules live in PostgreSQL, never in
countdowns: the beat tick `dispatch_due` finds whatever is due."""

from __future__ import annotations

from uuid import UUID

from celery import shared_task

from webhooks import lanes, nudges, passes, retention


@shared_task(name="webhooks.dispatch_due", ignore_result=True)
def dispatch_due(webhook_id: str | None = None) -> int:
    """A dispatcher pass (webhooks/passes.py): every endpoint's due deliveries, sent at once.
    `webhook_id` names the endpoint whose change nudged it (its flag is cleared)."""
    nudges.nudge_clear(webhook_id)  # from here on, a change committed sends the next nudge
    return passes.pass_run().attempts


@shared_task(name="webhooks.pass_next", ignore_result=True)
def pass_next() -> int:
    """The next pass, asked for by one that waits for its last answers."""
    nudges.nudge_clear(nudges.NEXT_PASS)
    return passes.pass_run().attempts


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(attempt_id: str) -> int:
    """One claimed attempt, then its endpoint's lane (webhooks/lanes.py)."""
    return lanes.lane_run(attempt_id=UUID(attempt_id))


@shared_task(name="webhooks.purge", ignore_result=True)
def purge() -> dict[str, int]:
    """Retention (webhooks/retention.py): attempts, deliveries and events past their age."""
    return {kind: report.deleted for kind, report in retention.outbox_purge().items()}
