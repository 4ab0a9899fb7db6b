"""Template filters over payments.formatting: `{% load localized %}`, then
`{{ amount|fiat:"EUR" }}`, `{{ amount|asset:"USDC" }}`, `{{ value|rate }}`,
`{{ when|moment:zone }}`, in the active language; the dashboard's shorter `{{ when|when }}`,
`{{ value|day }}` and `{{ text|number }}`, in the current time zone (the account's)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from django import template
from django.conf import settings
from django.utils import timezone, translation

from payments import formatting

register = template.Library()


@register.filter
def fiat(amount: Decimal | int | str, currency: str) -> str:
    if amount in (None, ""):
        return ""
    return formatting.fiat_amount(amount, currency)


@register.filter
def asset(amount: Decimal | str, currency: str) -> str:
    if amount in (None, ""):
        return ""
    return formatting.asset_amount(amount, currency)


@register.filter
def rate(value: Decimal | str) -> str:
    if value in (None, ""):
        return ""
    return formatting.rate(value)


@register.filter
def moment(when: datetime | str | None, zone: str | None = None) -> str:
    """An aware datetime, or an ISO 8601 string as the JSON documents write it."""
    if not when:
        return ""
    if isinstance(when, str):
        when = datetime.fromisoformat(when)
    return formatting.moment(when, zone or None)


@register.filter
def when(value: datetime | str | None, precision: str = "minutes") -> str:
    """A time in the current zone (the account's on the dashboard), to the minute or, with
    `"seconds"`, the second, the zone named: "Nov 25, 2026, 9:27 PM UTC". "" for none."""
    if not value:
        return ""
    return formatting.local_moment(value, seconds=precision == "seconds")


@register.filter
def day(value: date | datetime | None) -> str:
    """A date (or a time's date in the current zone) as the reader writes it: "Nov 25, 2026"."""
    if not value:
        return ""
    return formatting.day(value, timezone.get_current_timezone_name())


@register.filter
def number(value: Decimal | str | None) -> str:
    """A decimal number with the reader's signs, every place it has kept."""
    if value in (None, ""):
        return ""
    return formatting.decimal_amount(str(value))


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
