"""Rendering and sending one email: plain text plus HTML, from templates/emails/."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation

from accounts.languages import account_language, supported
from notifications.models import EmailNotification


def email_language(notification: EmailNotification) -> str:
    """The payer's language kept with the email, else the account's, else English."""
    return (
        supported(notification.context.get("language"))
        or (account_language(notification.user) if notification.user_id else None)
        or settings.LANGUAGE_CODE
    )


def email_render(notification: EmailNotification) -> tuple[str, str, str]:
    """(subject, plain text, HTML) of an outbox row, in the reader's language."""
    context = {**notification.context, "base_url": settings.BASE_URL}
    name = f"emails/{notification.kind}"
    with translation.override(email_language(notification)):
        subject = " ".join(render_to_string(f"{name}_subject.txt", context).split())
        return subject, render_to_string(f"{name}.txt", context), render_to_string(f"{name}.html", context)


def email_deliver(notification: EmailNotification) -> None:
    subject, text, html = email_render(notification)
    message = EmailMultiAlternatives(
        subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL, to=[notification.to]
    )
    message.attach_alternative(html, "text/html")
    message.send(fail_silently=False)
