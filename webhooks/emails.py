"""Notification emails: plain text plus HTML, rendered from templates/emails/."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from webhooks.models import EmailKind, EmailNotification, EventType

_SUBJECTS = {
    EventType.DRAFT_SEEN: "Payment seen for draft {short}",
    EventType.DRAFT_CONFIRMED: "Payment confirmed for draft {short}",
    EventType.DRAFT_AMOUNT_MISMATCH: "A payment with a different amount arrived for draft {short}",
    EventType.DRAFT_EXPIRED: "Draft {short} expired without payment",
}


def _render(notification: EmailNotification) -> tuple[str, str, dict[str, Any]]:
    if notification.kind == EmailKind.WEBHOOK_DISABLED:
        context = dict(notification.context)
        return "Webhook endpoint disabled", "emails/webhook_disabled", context
    event = notification.event
    data = event.data
    short = str(data.get("draftId", ""))[:8]
    context = {"event": event.type, "data": data, "short": short, "base_url": settings.BASE_URL}
    return _SUBJECTS[event.type].format(short=short), "emails/draft_event", context


def notification_send(notification: EmailNotification) -> None:
    subject, template, context = _render(notification)
    message = EmailMultiAlternatives(
        subject=subject,
        body=render_to_string(f"{template}.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.user.email],
    )
    message.attach_alternative(render_to_string(f"{template}.html", context), "text/html")
    message.send(fail_silently=False)
