"""Locked exchange-rate quotes and the conversions between fiat and base units."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

from django.conf import settings
from django.utils import timezone

from core.wire import json_datetime, json_number
from payments.rates import get_rate
from payments.registry import Asset

# Enough digits that no division below loses a base unit, whatever the rate.
_PRECISION = 60


def fiat_to_base_units(fiat_amount: Decimal, rate: Decimal, decimals: int) -> int:
    """Fiat amount -> base units of an asset priced at ``rate`` fiat per whole unit; half-up."""
    if rate <= 0:
        raise ValueError("rate must be positive")
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        units = Decimal(fiat_amount) / Decimal(rate) * (Decimal(10) ** decimals)
        return int(units.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def base_units_to_fiat(base_units: int, rate: Decimal, decimals: int) -> Decimal:
    """Base units -> fiat value at ``rate`` (exact; round for display at the edge)."""
    with localcontext() as ctx:
        ctx.prec = _PRECISION
        return Decimal(base_units) * Decimal(rate) / (Decimal(10) ** decimals)


@dataclass(frozen=True)
class Quote:
    rate: Decimal
    fiat_currency: str
    asset: str
    source: str
    locked_at: datetime
    expires_at: datetime
    live: bool = True
    sources: dict[str, Any] | None = None  # audit: each leg's combined rate and every source's price

    def as_json(self) -> dict[str, Any]:
        """QuoteInfo as the API shows it."""
        return {
            "rate": json_number(self.rate),
            "fiatCurrency": self.fiat_currency,
            "asset": self.asset,
            "source": self.source,
            "live": self.live,
            "sources": self.sources,
            "lockedAt": json_datetime(self.locked_at),
            "expiresAt": json_datetime(self.expires_at),
        }

    def is_expired(self, now: datetime | None = None) -> bool:
        return (now or timezone.now()) >= self.expires_at


def quote_lock(*, asset: Asset, fiat_currency: str, now: datetime | None = None, last_known: bool = False) -> Quote:
    """Lock the current rate of ``asset`` in ``fiat_currency`` for QUOTE_LOCK_MINUTES.
    ``last_known``: the rate sets no amount, so a stale or bundled one will do (get_rate)."""
    rate = get_rate(asset.price_currency, fiat_currency, last_known=last_known)
    locked_at = now or timezone.now()
    return Quote(
        rate=rate.rate,
        fiat_currency=rate.fiat,
        asset=str(asset.currency),
        source=rate.source[:200],
        locked_at=locked_at,
        expires_at=locked_at + timedelta(minutes=settings.QUOTE_LOCK_MINUTES),
        live=rate.live,
        sources=rate.sources,
    )


def sek_value(*, asset: Asset, base_units: int, last_known: bool = False) -> dict[str, Any]:
    """SekValueInfo: the amount's value in SEK for bookkeeping (amount rounded half-up to öre)."""
    rate = get_rate(asset.price_currency, "SEK", last_known=last_known)
    amount = base_units_to_fiat(base_units, rate.rate, asset.decimals).quantize(Decimal("0.01"), ROUND_HALF_UP)
    return {
        "amount": json_number(amount),
        "rate": json_number(rate.rate),
        "source": rate.source,
        "at": json_datetime(rate.fetched_at),
    }
