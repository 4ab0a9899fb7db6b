"""The cached rate feed: refreshed by Celery beat, read by quotes, fees and /rates.

Reads never touch the network: they use the cached tables and refuse them
(503 ``rates_unavailable``) once older than RATES_MAX_AGE_SECONDS. The one
exception is a feed made only of local providers (the bundled snapshot), which
is reloaded in place because that costs no I/O.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

from config.problems import Problem, ServiceUnavailable
from payments.rates.fiat import FIAT_CURRENCIES
from payments.rates.providers import CRYPTO_ASSETS, ProviderError, Quotes, configured_providers

logger = logging.getLogger(__name__)

CACHE_KEYS = {"crypto": "payments:rates:crypto", "fx": "payments:rates:fx"}
# Rates keep at most 15 significant digits (so a JSON number round-trips exactly)
# and at most 8 decimal places.
_SIGNIFICANT = 15
_MAX_PLACES = Decimal("1e-8")


class RatesUnavailable(ServiceUnavailable):
    default_code = "rates_unavailable"
    default_detail = "Exchange rates are unavailable right now; try again shortly."


class UnknownFiatCurrency(Problem):
    default_code = "unknown_fiat_currency"
    default_detail = "Unknown fiat currency."


class UnknownAsset(Problem):
    default_code = "unknown_asset"
    default_detail = "Unknown asset."


@dataclass(frozen=True)
class Rate:
    currency: str
    fiat: str
    rate: Decimal  # fiat per 1 whole unit of the crypto
    source: str
    fetched_at: datetime
    as_of: datetime | None


@dataclass(frozen=True)
class _Table:
    source: str
    fetched_at: datetime
    as_of: datetime | None
    rates: dict[str, Decimal]


# Per-process memo of the parsed tables, so one request (or a burst of them) does not
# read and parse both tables from the shared cache for every rate it needs.
_memo: dict[str, tuple[float, _Table | None]] = {}


def _store(quotes: Quotes, fetched_at: datetime) -> _Table:
    _memo.pop(quotes.kind, None)
    cache.set(
        CACHE_KEYS[quotes.kind],
        {
            "source": quotes.source,
            "fetchedAt": fetched_at.isoformat(),
            "asOf": quotes.as_of.isoformat() if quotes.as_of else None,
            "rates": {code: str(value) for code, value in quotes.rates.items()},
        },
        timeout=None,
    )
    table = _Table(source=quotes.source, fetched_at=fetched_at, as_of=quotes.as_of, rates=dict(quotes.rates))
    if settings.RATES_LOCAL_CACHE_SECONDS:
        _memo[quotes.kind] = (time.monotonic(), table)
    return table


def _cached(kind: str) -> _Table | None:
    ttl = settings.RATES_LOCAL_CACHE_SECONDS
    if ttl:
        hit = _memo.get(kind)
        if hit is not None and time.monotonic() - hit[0] < ttl:
            return hit[1]
    table = _load(kind)
    if ttl:
        _memo[kind] = (time.monotonic(), table)
    return table


def _load(kind: str) -> _Table | None:
    raw = cache.get(CACHE_KEYS[kind])
    if not raw:
        return None
    return _Table(
        source=raw["source"],
        fetched_at=datetime.fromisoformat(raw["fetchedAt"]),
        as_of=datetime.fromisoformat(raw["asOf"]) if raw["asOf"] else None,
        rates={code: Decimal(value) for code, value in raw["rates"].items()},
    )


def refresh_kind(kind: str) -> str:
    """Fetch one table from the first provider that answers validly; returns its source."""
    return _refresh(kind).source


def _refresh(kind: str) -> _Table:
    errors = []
    for provider in configured_providers(kind):
        try:
            quotes = provider.fetch()
        except ProviderError as exc:
            errors.append(str(exc))
            logger.warning("Rate provider failed (%s): %s", kind, exc)
            continue
        return _store(quotes, timezone.now())
    raise RatesUnavailable(f"Every {kind} rate provider failed: " + "; ".join(errors))


def refresh_rates() -> dict[str, str]:
    """Refresh both tables; a failing kind keeps its previous table, which ages into a 503."""
    served: dict[str, str] = {}
    for kind in CACHE_KEYS:
        try:
            served[kind] = refresh_kind(kind)
        except RatesUnavailable as exc:
            served[kind] = f"failed: {exc.detail}"
    return served


def _is_fresh(table: _Table | None, now: datetime) -> bool:
    return table is not None and now - table.fetched_at <= timedelta(seconds=settings.RATES_MAX_AGE_SECONDS)


def _table(kind: str) -> _Table:
    now = timezone.now()
    table = _cached(kind)
    if _is_fresh(table, now):
        return table
    if all(provider.is_local for provider in configured_providers(kind)):
        # The table just read, not a second trip to the shared cache (which may have lost it meanwhile).
        return _refresh(kind)
    if table is None:
        raise RatesUnavailable(f"No {kind} rates have been fetched yet; try again shortly.")
    raise RatesUnavailable(
        f"The {kind} rates were fetched at {table.fetched_at.isoformat()}, older than the "
        f"{settings.RATES_MAX_AGE_SECONDS} s limit; try again shortly."
    )


def _round_rate(value: Decimal) -> Decimal:
    digits = value.adjusted() + 1  # digits before the point
    places = max(0, min(8, _SIGNIFICANT - digits))
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def normalise_fiat(fiat: str, *, field: str = "fiatCurrency") -> str:
    code = fiat.strip().upper() if isinstance(fiat, str) else ""
    if code not in FIAT_CURRENCIES:
        raise UnknownFiatCurrency(
            f"Unknown fiat currency {fiat!r}. Valid values: {', '.join(FIAT_CURRENCIES)}.",
            errors=[
                {
                    "field": field,
                    "code": "unknown_fiat_currency",
                    "message": f"Unknown fiat currency {fiat!r}; use an ISO 4217 code from the list.",
                }
            ],
            extra={"validValues": list(FIAT_CURRENCIES)},
        )
    return code


def normalise_asset(currency: str, *, field: str = "currency") -> str:
    code = currency.strip().upper() if isinstance(currency, str) else ""
    if code not in CRYPTO_ASSETS:
        raise UnknownAsset(
            f"Unknown asset {currency!r}. Valid values: {', '.join(CRYPTO_ASSETS)}.",
            errors=[{"field": field, "code": "unknown_asset", "message": f"Unknown asset {currency!r}."}],
            extra={"validValues": list(CRYPTO_ASSETS)},
        )
    return code


def get_rate(currency: str, fiat: str) -> Rate:
    """Fiat per 1 whole unit of ``currency`` (a crypto asset), with its source and fetch time."""
    currency = normalise_asset(str(currency))
    fiat = normalise_fiat(fiat)
    crypto = _table("crypto")
    fx = _table("fx")
    price = crypto.rates.get(currency)
    if price is None:
        raise RatesUnavailable(f"The crypto rate provider ({crypto.source}) gave no price for {currency}.")
    usd_fx = fx.rates.get(fiat)
    if usd_fx is None:
        raise RatesUnavailable(f"The fiat rate provider ({fx.source}) gave no rate for {fiat}.")
    if fiat == "USD":
        source, fetched_at, as_of = crypto.source, crypto.fetched_at, crypto.as_of
    else:
        source = crypto.source if crypto.source == fx.source else f"{crypto.source} + {fx.source}"
        fetched_at = min(crypto.fetched_at, fx.fetched_at)
        as_of = min((t for t in (crypto.as_of, fx.as_of) if t), default=None)
    return Rate(currency, fiat, _round_rate(price * usd_fx), source, fetched_at.astimezone(UTC), as_of)
