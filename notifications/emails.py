"""Rendering and sending one email: plain text plus HTML, from templates/emails/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.utils import translation

from notifications.kinds import CUSTOMER, MERCHANT, kind_get
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


# Who reads an organization's email: `provider(organization, work) -> [(person id, address,
# language code or None)]`, the members whose role grants that work (set by the accounts app).
Recipient = tuple[Any, str, str | None]
_RECIPIENTS: list[Callable[[Any, str], list[Recipient]]] = []


def email_recipients_provider(provider: Callable[[Any, str], list[Recipient]]) -> None:
    _RECIPIENTS[:] = [provider]


def email_recipients(user: Any, work: str) -> list[Recipient] | None:
    """The members of `user` (an organization) who read its emails about `work`; None when no
    app says (then the email goes to the account's own address)."""
    return _RECIPIENTS[0](user, work) if _RECIPIENTS else None


# The language an account reads its email in: `provider(user) -> code or None` (set by the
# accounts app: the account's language setting).
_ACCOUNT_LANGUAGE: list[Callable[[Any], str | None]] = []


def email_account_language_provider(provider: Callable[[Any], str | None]) -> None:
    _ACCOUNT_LANGUAGE[:] = [provider]


def email_language(notification: EmailNotification) -> str:
    """The reader's language. A customer's email (a receipt, a refund claim link): the language
    the caller kept with it (`context["language"]`, the payer's, a LANGUAGES code). The
    merchant's: the member's language kept with it, else the account's language setting, when
    the dashboard is offered in it (DASHBOARD_LANGUAGES), so a merchant reads their email in the
    language of their dashboard. The operator's, and anything else: English."""
    reader = kind_get(notification.kind).reader
    wanted = str(notification.context.get("language") or "").lower()
    if reader == CUSTOMER:
        offered = {code for code, _name in settings.LANGUAGES}
    elif reader == MERCHANT:
        offered = set(settings.DASHBOARD_LANGUAGES)
        if not wanted and notification.user_id is not None and _ACCOUNT_LANGUAGE:
            wanted = (_ACCOUNT_LANGUAGE[0](notification.user) or "").lower()
    else:
        return settings.LANGUAGE_CODE
    return wanted if wanted in offered else settings.LANGUAGE_CODE


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
    headers = {"Content-Language": email_language(notification)}
    if is_test(notification):
        headers[TEST_HEADER] = "true"
    message = EmailMultiAlternatives(
        subject=subject,
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[notification.to],
        headers=headers,
    )
    message.attach_alternative(html, "text/html")
    message.send(fail_silently=False)
