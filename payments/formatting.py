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
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import (
    format_date,
    format_datetime,
    format_skeleton,
    format_time,
    get_datetime_format,
    get_timezone_name,
)
from babel.numbers import format_currency, format_decimal
from django.utils import timezone, translation
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
    exponent = value.as_tuple().exponent
    places = max(0, -exponent) if isinstance(exponent, int) else 0  # a finite number has an int exponent
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


def rate(value: Decimal | str, language: str | None = None) -> str:
    """A locked rate at six significant digits, for reading only."""
    value = Decimal(value)
    places = max(0, RATE_SIGNIFICANT_DIGITS - value.adjusted() - 1)
    return decimal_amount(value.quantize(Decimal(1).scaleb(-places)), language)


def rate_text(value: Decimal | str, currency: str, fiat: str, language: str | None = None) -> str:
    """ "1 USDC = 0,851830 EUR" (de): one unit of the asset in the fiat, for reading only."""
    return f"{decimal_amount('1', language)}\u00a0{currency} = {rate(value, language)}\u00a0{fiat}"


# The dashboard's shorter times: the date with the month's name (never "11/25/26", which reads
# differently in each country) and the time to the minute ("short") or the second ("medium").
MINUTES, SECONDS = "short", "medium"


def moment(
    when: datetime | str | None,
    zone: str | ZoneInfo | None = None,
    language: str | None = None,
    *,
    skeleton: str | None = None,
) -> str:
    """A date and time in `zone` (UTC by default), the zone named:
    "25.11.2026, 21:27:39 MEZ (Europe/Berlin)"; "" for no time. Accepts ISO 8601 text.
    `skeleton` (MINUTES, SECONDS): the time's precision; MINUTES: "25.11.2026, 21:27"."""
    if isinstance(when, str):
        when = parse_datetime(when)
    if when is None:
        return ""
    locale = cldr_locale(language)
    tz = zone if isinstance(zone, ZoneInfo) else ZoneInfo(zone or "UTC")
    if skeleton:
        # The medium date and a time to the minute (or second), joined as the locale joins them.
        date_text = format_date(when.astimezone(tz), "medium", locale=locale)
        time_text = format_time(when, skeleton, tzinfo=tz, locale=locale)
        joined = str(get_datetime_format("medium", locale=locale)).replace("'", "")
        text = _digits(joined.replace("{0}", time_text).replace("{1}", date_text), locale)
    else:
        text = _digits(format_datetime(when, "medium", tzinfo=tz, locale=locale), locale)
    if tz.key in ("UTC", "Etc/UTC"):
        return f"{text} UTC"
    name = get_timezone_name(when.astimezone(tz), "short", locale=locale)
    if not any(c.isalpha() for c in name) or name.startswith("GMT") or name == tz.key:
        return f"{text} {tz.key}"  # no short name in this language ("+0100"): the zone's id names it
    return f"{text} {name} ({tz.key})"


def local_moment(when: datetime | str | None, *, seconds: bool = False) -> str:
    """The dashboard's time: in the current time zone (the account's, which the dashboard
    activates), to the minute (or second), the zone named: "Nov 25, 2026, 9:27 PM UTC"."""
    return moment(when, timezone.get_current_timezone_name(), skeleton=SECONDS if seconds else MINUTES)


def day(value: date | datetime | None, zone: str | ZoneInfo | None = None, language: str | None = None) -> str:
    """A date as the reader writes it, "25.11.2026" (de), "Nov 25, 2026" (en); a datetime is
    first put in `zone` (UTC by default). "" for none."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        value = value.astimezone(zone if isinstance(zone, ZoneInfo) else ZoneInfo(zone or "UTC")).date()
    locale = cldr_locale(language)
    return _digits(format_date(value, "medium", locale=locale), locale)


def month_day(value: date, language: str | None = None) -> str:
    """A day of the month with the month's name, no year: "Nov 3" (en), "3. Nov." (de)."""
    locale = cldr_locale(language)
    return _digits(format_skeleton("MMMd", value, locale=locale), locale)


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
    names: dict[str, str] = {
        Method.SINGLE_OUTPUT: _("One transfer"),
        Method.MULTI_OUTPUT: _("Bitcoin transaction with a service fee output"),
        Method.LIGHTNING: _("Lightning invoice"),
    }
    return str(names.get(method, method))
