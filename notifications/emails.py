"""Rendering and sending one email: plain text plus HTML, from templates/emails/."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string

from notifications.models import EmailNotification
from payments.display import fiat_text, method_name, network_name, rate_text, time_text

# What an account adds to its emails' context (its time zone), from the accounts app's
# `ready` (notifications imports no app above it).
_ACCOUNT_CONTEXT: list[Callable[[Any], dict[str, Any]]] = []


def account_email_context(provider: Callable[[Any], dict[str, Any]]) -> None:
    _ACCOUNT_CONTEXT.append(provider)


def email_shown(context: dict[str, Any]) -> dict[str, str]:
    """The event data as a person reads it: fiat at its own precision, display names, times
    in the account's zone (`timeZone` in the context, UTC without one) with the zone named."""
    data = context.get("data") or {}
    zone = context.get("timeZone") or "UTC"
    rate = context.get("rate") or {}
    return {
        "fiat": fiat_text(data.get("fiatAmount"), data.get("fiatCurrency")),
        "sent": f"{data['sentAmount']} {data['sentCurrency']}" if data.get("sentAmount") else "",
        "received": f"{data['receivedAmount']} {data['sentCurrency']}" if data.get("receivedAmount") else "",
        "network": network_name(data.get("network")),
        "method": method_name(context.get("method") or data.get("method")),
        "when": time_text(data.get("occurredAt"), zone),
        "rate": f"1 {rate['currency']} = {rate_text(rate['value'])} {rate['fiat']}" if rate.get("value") else "",
    }


def email_render(notification: EmailNotification) -> tuple[str, str, str]:
    """(subject, plain text, HTML) of an outbox row."""
    context = {**notification.context, "base_url": settings.BASE_URL}
    if "timeZone" not in context and notification.user_id is not None:
        for provider in _ACCOUNT_CONTEXT:
            context = provider(notification.user) | context
    context["shown"] = email_shown(context)
    name = f"emails/{notification.kind}"
    subject = " ".join(render_to_string(f"{name}_subject.txt", context).split())
    return subject, render_to_string(f"{name}.txt", context), render_to_string(f"{name}.html", context)


def email_deliver(notification: EmailNotification) -> None:
    subject, text, html = email_render(notification)
    message = EmailMultiAlternatives(
        subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL, to=[notification.to]
    )
    message.attach_alternative(html, "text/html")
    message.send(fail_silently=False)
