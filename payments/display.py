"""Money, networks, methods and times as a person reads them (PDFs, emails, pages).

Amounts keep their own precision: an asset's amount is its exact decimal string
(`payments.registry.format_amount`), a fiat amount has the currency's minor units
("25.00 EUR", "1,250,000 VND"), a rate six significant digits. Networks and methods go by
their display names, never the API's codes; a time is shown in the account's zone and names it.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from payments.enums import Method, Network
from payments.rates.fiat import fiat_minor_units

METHOD_NAMES = {
    Method.SINGLE_OUTPUT: _("Single transfer"),
    Method.MULTI_OUTPUT: _("Bitcoin transaction with a fee output"),
    Method.LIGHTNING: _("Lightning invoice"),
}


def network_name(code: str | None) -> str:
    if not code:
        return ""
    try:
        return str(Network(code).label)
    except ValueError:
        return code


def method_name(code: str | None) -> str:
    if not code:
        return ""
    return str(METHOD_NAMES.get(code, code))


def fiat_text(amount: Decimal | int | float | str | None, currency: str | None) -> str:
    """ "25.00 EUR": the currency's own minor units, thousands grouped."""
    if amount is None or amount == "" or not currency:
        return ""
    places = fiat_minor_units(currency)
    value = Decimal(str(amount)).quantize(Decimal(1).scaleb(-places))
    return f"{value:,.{places}f} {currency}"


def rate_text(rate: Decimal | int | float | str | None) -> str:
    """A rate at six significant digits ("0.851830"), for reading, never for arithmetic."""
    if rate is None or rate == "":
        return ""
    value = Decimal(str(rate))
    if value == 0:
        return "0"
    return f"{value:,.{max(0, 6 - value.adjusted() - 1)}f}"


def time_text(moment: datetime | str | None, zone: str = "UTC") -> str:
    """ "2026-11-25 21:27 CET (Europe/Berlin)", or "2026-11-25 20:27 UTC"."""
    if isinstance(moment, str):
        moment = parse_datetime(moment)
    if moment is None:
        return ""
    local = moment.astimezone(ZoneInfo(zone or "UTC"))
    if zone in ("UTC", "Etc/UTC", ""):
        return f"{local:%Y-%m-%d %H:%M} UTC"
    return f"{local:%Y-%m-%d %H:%M} {local.tzname()} ({zone})"
