"""Celery tasks for email: they take ids and call services. The beat tick finds whatever
the on-commit task missed."""

from __future__ import annotations

from uuid import UUID

from celery import shared_task

from notifications import services


@shared_task(name="notifications.send_email", ignore_result=True)
def send_email(notification_id: str) -> int:
    return services.emails_send_due(notification_id=UUID(notification_id), limit=1)


@shared_task(name="notifications.send_due_emails", ignore_result=True)
def send_due_emails() -> int:
    return services.emails_send_due()
