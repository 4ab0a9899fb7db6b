"""Rendering and sending one email: plain text plus HTML, from templates/emails/."""

from __future__ import annotations

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation

from notifications.models import EmailNotification


def email_language(notification: EmailNotification) -> str:
    """The language the caller kept with the email (`context["language"]`, a LANGUAGES code:
    the payer's, for a receipt), else English."""
    wanted = str(notification.context.get("language") or "").lower()
    return wanted if wanted in {code for code, _name in settings.LANGUAGES} else settings.LANGUAGE_CODE


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
