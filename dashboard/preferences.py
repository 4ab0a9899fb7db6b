"""How the dashboard shows money and time to one account: its display currency, time zone and
language. Every page reads them here, so where they are stored is this module's business alone."""

from __future__ import annotations

from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from accounts.profiles import merchant_profile_get
from payments.rates.fiat import FIAT_CURRENCIES

DEFAULT_CURRENCY, DEFAULT_TIME_ZONE, DEFAULT_LANGUAGE = "USD", "UTC", "en"


@dataclass(frozen=True)
class Display:
    currency: str = DEFAULT_CURRENCY
    time_zone: str = DEFAULT_TIME_ZONE
    language: str = DEFAULT_LANGUAGE

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)


def display_of(user) -> Display:
    """The account's display settings; USD, UTC and English for what it has not set (or for a
    value that is no longer valid, such as a withdrawn currency or zone)."""
    profile = merchant_profile_get(user=user)
    currency = profile.display_currency or DEFAULT_CURRENCY
    time_zone = profile.time_zone or DEFAULT_TIME_ZONE
    language = profile.language or DEFAULT_LANGUAGE
    if currency not in FIAT_CURRENCIES:
        currency = DEFAULT_CURRENCY
    try:
        ZoneInfo(time_zone)
    except (ZoneInfoNotFoundError, ValueError):
        time_zone = DEFAULT_TIME_ZONE
    return Display(currency=currency, time_zone=time_zone, language=language)
