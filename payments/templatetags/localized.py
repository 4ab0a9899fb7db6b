"""Template filters over payments.formatting: `{% load localized %}`, then
`{{ amount|fiat:"EUR" }}`, `{{ amount|asset:"USDC" }}`, `{{ value|rate }}`,
`{{ when|moment:zone }}`, in the active language."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.conf import settings
from django.utils import translation

from payments import formatting

register = template.Library()


@register.filter
def fiat(amount, currency: str) -> str:
    if amount in (None, ""):
        return ""
    return formatting.fiat_amount(amount, currency)


@register.filter
def asset(amount, currency: str) -> str:
    if amount in (None, ""):
        return ""
    return formatting.asset_amount(amount, currency)


@register.filter
def rate(value) -> str:
    if value in (None, ""):
        return ""
    return formatting.rate(value)


@register.filter
def moment(when, zone: str | None = None) -> str:
    """An aware datetime, or an ISO 8601 string as the JSON documents write it."""
    if not when:
        return ""
    if isinstance(when, str):
        when = datetime.fromisoformat(when)
    return formatting.moment(when, zone or None)


@register.filter
def network_name(network: str) -> str:
    return formatting.network_name(network)


@register.filter
def method_name(method: str) -> str:
    return formatting.method_name(method)


@register.simple_tag
def language_choices() -> list[tuple[str, str, bool]]:
    """(code, name in its own language, is the active one) for the language picker."""
    current = translation.get_language()
    return [(code, name, code == current) for code, name in settings.LANGUAGES]


@register.simple_tag
def number_locale() -> str:
    """The BCP 47 locale a script should format numbers with, digits included ("ar-EG-u-nu-arab"),
    so numbers the page's script writes match the server's."""
    locale = formatting.cldr_locale()
    tag = "-".join(part for part in (locale.language, locale.script, locale.territory) if part)
    return f"{tag}-u-nu-{locale.default_numbering_system}"
