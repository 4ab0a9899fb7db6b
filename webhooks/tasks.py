"""Celery tasks: they take ids and call services. Schedules live in PostgreSQL, never in
countdowns: the beat tick `dispatch_due` finds whatever is due."""

from __future__ import annotations

from uuid import UUID

from celery import shared_task
from django.conf import settings

from webhooks import services


@shared_task(name="webhooks.dispatch_due", ignore_result=True)
def dispatch_due(webhook_id: str | None = None) -> int:
    return len(services.deliveries_dispatch(webhook_id=UUID(webhook_id) if webhook_id else None))


@shared_task(name="webhooks.deliver", ignore_result=True)
def deliver(attempt_id: str) -> None:
    attempt = services.delivery_attempt(attempt_id=UUID(attempt_id))
    if attempt is not None:
        # Keep an endpoint's queue moving without waiting for the next tick.
        services.deliveries_dispatch(
            webhook_id=attempt.delivery.webhook_id, limit=settings.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT
        )


@shared_task(name="webhooks.send_email", ignore_result=True)
def send_email(notification_id: str) -> int:
    return services.email_notifications_send(notification_id=UUID(notification_id), limit=1)


@shared_task(name="webhooks.send_due_emails", ignore_result=True)
def send_due_emails() -> int:
    return services.email_notifications_send()
