"""Rendering and sending one email: plain text plus HTML, from templates/emails/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation

from notifications.models import EmailNotification

# What apps above add to every email's context before it is rendered (the accounts app: the
# account's time zone and the amounts and times as people read them), from their `ready`:
# notifications imports no other app.
# An outbox row's context holds this key (True) when the email is about a test-mode object.
TEST_MODE_KEY = "testMode"
TEST_SUBJECT_PREFIX = "[TEST] "
TEST_HEADER = "X-Test-Mode"

_CONTEXT_PROVIDERS: list[Callable[[Any, dict[str, Any]], dict[str, Any]]] = []


def email_context_provider(provider: Callable[[Any, dict[str, Any]], dict[str, Any]]) -> None:
    """`provider(user or None, context) -> extra context`."""
    if provider not in _CONTEXT_PROVIDERS:
        _CONTEXT_PROVIDERS.append(provider)


def email_language(notification: EmailNotification) -> str:
    """The language the caller kept with the email (`context["language"]`, a LANGUAGES code:
    the payer's, for a receipt), else English."""
    wanted = str(notification.context.get("language") or "").lower()
    return wanted if wanted in {code for code, _name in settings.LANGUAGES} else settings.LANGUAGE_CODE


def email_render(notification: EmailNotification) -> tuple[str, str, str]:
    """(subject, plain text, HTML) of an outbox row, in the reader's language."""
    context = {**notification.context, "base_url": settings.BASE_URL}
    user = notification.user if notification.user_id is not None else None
    name = f"emails/{notification.kind}"
    with translation.override(email_language(notification)):
        # Inside the language: what the providers format follows the reader's language.
        for provider in _CONTEXT_PROVIDERS:
            context |= provider(user, context)
        subject = " ".join(render_to_string(f"{name}_subject.txt", context).split())
        if is_test(notification):
            subject = TEST_SUBJECT_PREFIX + subject
        return subject, render_to_string(f"{name}.txt", context), render_to_string(f"{name}.html", context)


def is_test(notification: EmailNotification) -> bool:
    return notification.context.get(TEST_MODE_KEY) is True


def email_deliver(notification: EmailNotification) -> None:
    subject, text, html = email_render(notification)
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.to],
        headers={TEST_HEADER: "true"} if is_test(notification) else None,
    )
    message.attach_alternative(html, "text/html")
    message.send(fail_silently=False)
