"""Amounts, rates, times, networks and methods as a reader of a given language writes them
(Babel, CLDR data).

The one place the pay page, every email and the PDF format values for people:
"19,99 €" in German, "1.250.000 ₫" for VND, Arabic-Indic digits in Arabic. Machine-readable
values (JSON, payment URIs, QR codes) never pass through here.

A fiat amount keeps its currency's minor units (JPY 0, USD 2, KWD 3); a crypto amount keeps
every digit of the asset's precision (a payer sends exactly that), written with the locale's
decimal and grouping signs and followed by the asset's code. Networks and methods go by
their display names, never the API's codes; a time is shown in a named zone.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_datetime, get_timezone_name
from babel.numbers import format_currency, format_decimal
from django.utils import translation
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from payments.enums import Method, Network
from payments.rates.fiat import fiat_minor_units

# Django's language code -> the CLDR locale its numbers and dates follow. Arabic: CLDR's
# plain "ar" writes Latin digits; its Egyptian locale (ar_EG) writes the Arabic-Indic digits
# "١٩٫٩٩" (docs/decisions.md "Languages").
CLDR_LOCALES = {"pt-br": "pt_BR", "zh-hans": "zh_Hans_CN", "ar": "ar_EG", "en": "en_US"}
# Babel applies a numbering system's signs (the Arabic decimal sign "٫") but not its digits.
DIGITS = {"arab": "٠١٢٣٤٥٦٧٨٩", "arabext": "۰۱۲۳۴۵۶۷۸۹", "deva": "०१२३४५६७८९", "beng": "০১২৩৪৫৬৭৮৯"}
RATE_SIGNIFICANT_DIGITS = 6
CODE_BEFORE_DIGIT = re.compile(r"([A-Za-z])(\d)")
CODE_AFTER_DIGIT = re.compile(r"(\d)([A-Za-z])")


def cldr_locale(language: str | None = None) -> Locale:
    """The CLDR locale of `language`, or of the active language."""
    return _locale((language or translation.get_language() or "en").lower())


@lru_cache(maxsize=64)
def _locale(code: str) -> Locale:
    return Locale.parse(CLDR_LOCALES.get(code, code.replace("-", "_")))


def _digits(text: str, locale: Locale) -> str:
    digits = DIGITS.get(locale.default_numbering_system)
    if digits is None:
        return text
    return text.translate(str.maketrans("0123456789", digits))


def fiat_amount(amount: Decimal | int | str, currency: str, language: str | None = None) -> str:
    """`19.99 EUR` as the reader writes it: "19,99 €" (de), "$19.99" for USD (en), "١٩٫٩٩ €" (ar)."""
    locale = cldr_locale(language)
    value = Decimal(amount).quantize(Decimal(1).scaleb(-fiat_minor_units(currency)))
    # CLDR's digits per currency are ISO 4217's, as ours are (JPY 0, KWD 3).
    text = format_currency(value, currency, locale=locale, numbering_system="default")
    # CLDR's currency spacing, which Babel does not apply: a code written as letters keeps a
    # no-break space from the digits ("KWD 1.500", not "KWD1.500").
    text = CODE_BEFORE_DIGIT.sub("\\1\u00a0\\2", CODE_AFTER_DIGIT.sub("\\1\u00a0\\2", text))
    return _digits(text, locale)


def decimal_amount(amount: Decimal | str, language: str | None = None) -> str:
    """A number with exactly the places it has ("24.376357" -> "24,376357" in German)."""
    locale = cldr_locale(language)
    value = Decimal(amount)
    places = max(0, -value.as_tuple().exponent)
    pattern = "#,##0." + "0" * places if places else "#,##0"
    return _digits(format_decimal(value, format=pattern, locale=locale, numbering_system="default"), locale)


def asset_amount(amount: Decimal | str, currency: str, language: str | None = None) -> str:
    """A crypto amount in the asset's precision, then its code: "24,376357 USDC" (de)."""
    text = decimal_amount(amount, language)
    locale = cldr_locale(language)
    if locale.character_order == "right-to-left":
        # Keep the code after the number in reading order inside right-to-left text.
        return f"\u2067{text}\u00a0{currency}\u2069"
    return f"{text}\u00a0{currency}"


def rate(value: Decimal, language: str | None = None) -> str:
    """A locked rate at six significant digits, for reading only."""
    value = Decimal(value)
    places = max(0, RATE_SIGNIFICANT_DIGITS - value.adjusted() - 1)
    return decimal_amount(value.quantize(Decimal(1).scaleb(-places)), language)


def rate_text(value: Decimal | str, currency: str, fiat: str, language: str | None = None) -> str:
    """ "1 USDC = 0,851830 EUR" (de): one unit of the asset in the fiat, for reading only."""
    return f"{decimal_amount('1', language)}\u00a0{currency} = {rate(value, language)}\u00a0{fiat}"


def moment(when: datetime | str | None, zone: str | ZoneInfo | None = None, language: str | None = None) -> str:
    """A date and time in `zone` (UTC by default), the zone named:
    "25.11.2026, 21:27:39 MEZ (Europe/Berlin)"; "" for no time. Accepts ISO 8601 text."""
    if isinstance(when, str):
        when = parse_datetime(when)
    if when is None:
        return ""
    locale = cldr_locale(language)
    tz = zone if isinstance(zone, ZoneInfo) else ZoneInfo(zone or "UTC")
    text = _digits(format_datetime(when, "medium", tzinfo=tz, locale=locale), locale)
    if tz.key in ("UTC", "Etc/UTC"):
        return f"{text} UTC"
    name = get_timezone_name(when.astimezone(tz), "short", locale=locale)
    if not any(c.isalpha() for c in name) or name.startswith("GMT") or name == tz.key:
        return f"{text} {tz.key}"  # no short name in this language ("+0100"): the zone's id names it
    return f"{text} {name} ({tz.key})"


def network_name(network: str | None) -> str:
    """A network's display name ("Bitcoin", "Base Sepolia"): proper names, not translated."""
    if not network:
        return ""
    try:
        return str(Network(network).label)
    except ValueError:
        return network


def method_name(method: str | None) -> str:
    if not method:
        return ""
    names = {
        Method.SINGLE_OUTPUT: _("One transfer"),
        Method.MULTI_OUTPUT: _("Bitcoin transaction with a service fee output"),
        Method.LIGHTNING: _("Lightning invoice"),
    }
    return str(names.get(method, method))
