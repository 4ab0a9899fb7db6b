"""The cached rate feed: refreshed by Celery beat, read by quotes, fees and /rates.

A refresh asks every configured provider at once and combines their answers per
asset and per currency (payments/rates/combine.py): median, outliers dropped, a
minimum of agreeing sources. Reads never touch the network: they use the combined
table in the shared cache and refuse it (503 ``rates_unavailable``, Retry-After)
once older than RATES_MAX_AGE_SECONDS, or for a pair too few sources agreed on.
Only when the operator allows it (RATES_BUNDLED_ALLOWED) does the bundled,
dated snapshot price such a pair instead, and every rate it gives says
``live=False``.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any, TypeGuard

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.problems import Problem, ServiceUnavailable
from core.wire import json_datetime
from payments.rates import health
from payments.rates.combine import SourcePrice, combine
from payments.rates.fiat import FIAT_CURRENCIES
from payments.rates.providers import CRYPTO_ASSETS, ProviderError, Quotes, SnapshotProvider, configured_providers

logger = logging.getLogger(__name__)

CACHE_KEYS = {"crypto": "payments:rates:crypto:v2", "fx": "payments:rates:fx:v2"}
# Rates keep at most 15 significant digits (so a JSON number round-trips exactly)
# and at most 8 decimal places.
_SIGNIFICANT = 15
_MAX_PLACES = Decimal("1e-8")
# The pegs a stablecoin is priced at when the operator says so (RATES_STABLECOINS_AT_PAR).
STABLECOIN_PEGS = {"USDC": "USD", "USDT": "USD", "EURC": "EUR"}


class RatesUnavailable(ServiceUnavailable):
    default_code = "rates_unavailable"
    default_detail = gettext_lazy("Exchange rates are unavailable right now; try again shortly.")

    def __init__(self, detail: str | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.retry_after = settings.RATES_REFRESH_SECONDS  # the next refresh may bring a price


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
    live: bool = True
    agreeing: int = 1  # the fewest agreeing sources behind either leg
    # For audit: each leg's combined rate and every source's price (used or why dropped).
    sources: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class _Entry:
    rate: Decimal
    source: str  # "median of kraken, coinbase, bitstamp", or the bundled snapshot's name
    as_of: datetime | None
    agreeing: int
    sources: list[dict[str, Any]]  # [{"source", "rate", "asOf", "used", "dropped"}]

    def audit(self) -> dict[str, Any]:
        return {"rate": str(self.rate), "source": self.source, "agreeing": self.agreeing, "sources": self.sources}


@dataclass(frozen=True)
class _Table:
    kind: str
    fetched_at: datetime
    live: bool
    entries: dict[str, _Entry]

    @property
    def rates(self) -> dict[str, Decimal]:
        return {code: entry.rate for code, entry in self.entries.items()}


# Per-process memo of the parsed tables, so one request (or a burst of them) does not
# read and parse both tables from the shared cache for every rate it needs.
_memo: dict[str, tuple[float, _Table | None]] = {}
# The last table this process read, per kind: it prices while the shared cache does not answer
# (as long as it is fresh, RATES_MAX_AGE_SECONDS), so a cache outage does not stop draft creation.
_last_read: dict[str, _Table | None] = {}


def _entry_json(entry: _Entry) -> dict[str, Any]:
    return {
        "rate": str(entry.rate),
        "source": entry.source,
        "asOf": entry.as_of.isoformat() if entry.as_of else None,
        "agreeing": entry.agreeing,
        "sources": entry.sources,
    }


def _store(table: _Table) -> _Table:
    _memo.pop(table.kind, None)
    cache.set(
        CACHE_KEYS[table.kind],
        {
            "fetchedAt": table.fetched_at.isoformat(),
            "entries": {code: _entry_json(entry) for code, entry in table.entries.items()},
        },
        timeout=None,
    )
    if settings.RATES_LOCAL_CACHE_SECONDS:
        _memo[table.kind] = (time.monotonic(), table)
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
    try:
        raw = cache.get(CACHE_KEYS[kind])
    except (RedisConnectionError, RedisTimeoutError):
        if kind in _last_read:
            return _last_read[kind]
        raise
    if not raw:
        _last_read[kind] = None
        return None
    entries = {
        code: _Entry(
            rate=Decimal(item["rate"]),
            source=item["source"],
            as_of=datetime.fromisoformat(item["asOf"]) if item["asOf"] else None,
            agreeing=item["agreeing"],
            sources=item["sources"],
        )
        for code, item in raw["entries"].items()
    }
    table = _Table(kind=kind, fetched_at=datetime.fromisoformat(raw["fetchedAt"]), live=True, entries=entries)
    _last_read[kind] = table
    return table


@functools.cache
def _bundled(kind: str) -> _Table:
    """The bundled snapshot as a table: never live, used only when RATES_BUNDLED_ALLOWED."""
    quotes = SnapshotProvider(kind).fetch()
    assert quotes.as_of is not None  # the snapshot is dated
    name = quotes.source
    entries = {
        code: _Entry(
            rate=value,
            source=name,
            as_of=quotes.as_of,
            agreeing=0,
            sources=[{"source": name, "rate": str(value), "asOf": json_datetime(quotes.as_of), "used": True}],
        )
        for code, value in quotes.rates.items()
    }
    return _Table(kind=kind, fetched_at=quotes.as_of, live=False, entries=entries)


def _labels(providers: list[Any]) -> list[str]:
    """Each provider's name; the base URL's host too when one provider is configured twice."""
    names = [provider.name for provider in providers]
    return [
        name if names.count(name) == 1 else f"{name}@{provider.base_url.split('://', 1)[-1]}"
        for name, provider in zip(names, providers, strict=True)
    ]


def _fetch_all(kind: str) -> dict[str, Quotes]:
    """Ask every configured provider of ``kind`` at once; a failure is counted and logged."""
    providers = configured_providers(kind)
    if not providers:
        raise RatesUnavailable(f"No live {kind} rate provider is configured.")
    labels = _labels(providers)
    with ThreadPoolExecutor(max_workers=len(providers), thread_name_prefix="rates") as pool:
        futures = [pool.submit(provider.fetch) for provider in providers]
    answers: dict[str, Quotes] = {}
    errors = []
    for label, future in zip(labels, futures, strict=True):
        try:
            answers[label] = future.result()
        except ProviderError as exc:
            errors.append(f"{label}: {exc}")
            health.count("failures", label, error=str(exc))
            logger.warning("Rate provider %s failed (%s): %s", label, kind, exc)
    if not answers:
        raise RatesUnavailable(f"Every {kind} rate provider failed: " + "; ".join(errors))
    return answers


def _min_sources(kind: str) -> int:
    return settings.RATES_MIN_SOURCES if kind == "crypto" else settings.RATES_FX_MIN_SOURCES


def _refresh(kind: str) -> _Table:
    answers = _fetch_all(kind)
    now = timezone.now()
    entries: dict[str, _Entry] = {}
    for code in CRYPTO_ASSETS if kind == "crypto" else FIAT_CURRENCIES:
        prices = [SourcePrice(label, q.rates[code], q.as_of) for label, q in answers.items() if code in q.rates]
        if not prices:
            continue
        combined = combine(
            prices,
            outlier_percent=settings.RATES_OUTLIER_PERCENT,
            min_sources=_min_sources(kind),
            now=now,
            # Fiat sources publish daily: their providers refuse an old day themselves.
            max_age_seconds=settings.RATES_MAX_AGE_SECONDS if kind == "crypto" else None,
        )
        for label, reason in combined.dropped.items():
            if reason in ("outlier", "disagree"):
                health.count("outliers", label)
                logger.warning("Rate source %s dropped for %s (%s)", label, code, reason)
        if combined.rate is None:
            continue
        used = [p.source for p in combined.used]
        as_ofs = [p.as_of for p in combined.used if p.as_of]
        entries[code] = _Entry(
            rate=combined.rate,
            source=used[0] if len(used) == 1 else f"median of {', '.join(used)}",
            as_of=min(as_ofs) if as_ofs else now,
            agreeing=len(used),
            sources=[
                {
                    "source": p.source,
                    "rate": str(p.rate),
                    "asOf": json_datetime(p.as_of) if p.as_of else None,
                    "used": p.source in used,
                    **({"dropped": combined.dropped[p.source]} if p.source in combined.dropped else {}),
                }
                for p in prices
            ],
        )
    if not entries:
        raise RatesUnavailable(f"Too few {kind} rate sources agreed on any price; try again shortly.")
    return _store(_Table(kind=kind, fetched_at=now, live=True, entries=entries))


def refresh_kind(kind: str) -> str:
    """Fetch and combine one table; returns a one-line summary of what it holds."""
    table = _refresh(kind)
    used = sorted({s["source"] for e in table.entries.values() for s in e.sources if s["used"]})
    return f"{len(table.entries)} {'assets' if kind == 'crypto' else 'currencies'} from {', '.join(used)}"


def refresh_rates() -> dict[str, str]:
    """Refresh both tables; a failing kind keeps its previous table, which ages into a 503."""
    served: dict[str, str] = {}
    for kind in CACHE_KEYS:
        try:
            served[kind] = refresh_kind(kind)
        except RatesUnavailable as exc:
            served[kind] = f"failed: {exc.detail}"
    return served


def _is_fresh(table: _Table | None, now: datetime) -> TypeGuard[_Table]:
    return table is not None and now - table.fetched_at <= timedelta(seconds=settings.RATES_MAX_AGE_SECONDS)


def bundled_in_use() -> tuple[list[str], date] | None:
    """(the kinds of rates not live, the bundled table's date) when the bundled table is pricing
    now (allowed and no fresh live table), else None."""
    if not settings.RATES_BUNDLED_ALLOWED:
        return None
    now = timezone.now()
    stale = [kind for kind in CACHE_KEYS if not _is_fresh(_cached(kind), now)]
    if not stale:
        return None
    return stale, _bundled("crypto").fetched_at.date()


def bundled_notice() -> str | None:
    """A plain sentence for the operator when the bundled table is pricing now, else None."""
    in_use = bundled_in_use()
    if in_use is None:
        return None
    stale, dated = in_use
    return (
        f"Prices are not live: with no fresh live {' or '.join(stale)} rates, the bundled rate table "
        f'dated {dated.isoformat()} prices drafts and pay links (RATES_BUNDLED_ALLOWED=true). Payers see "not live".'
    )


def _entry(kind: str, code: str, *, last_known: bool = False) -> tuple[_Table, _Entry]:
    """The live combined price of ``code``, else (only if allowed) the bundled one, else 503.
    With ``last_known`` (a price that only informs, never sets an amount) a stale live price,
    else the bundled one, is taken rather than a 503; either is marked not live."""
    now = timezone.now()
    table = _cached(kind)
    if _is_fresh(table, now) and code in table.entries:
        return table, table.entries[code]
    if settings.RATES_BUNDLED_ALLOWED or last_known:
        if last_known and table is not None and code in table.entries:
            return dataclasses.replace(table, live=False), table.entries[code]
        bundled = _bundled(kind)
        if code in bundled.entries:
            return bundled, bundled.entries[code]
    # A payer can meet these on the checkout: in the request's language (English elsewhere).
    if table is None:
        raise RatesUnavailable(_("No live exchange rates have been fetched yet; try again shortly."))
    if not _is_fresh(table, now):
        raise RatesUnavailable(
            _(
                "The live exchange rates were fetched at %(time)s, older than the %(seconds)s s limit; "
                "try again shortly."
            )
            % {"time": table.fetched_at.isoformat(), "seconds": settings.RATES_MAX_AGE_SECONDS}
        )
    raise RatesUnavailable(
        _("No live exchange rate for %(code)s: fewer than %(count)s sources agreed on one; try again shortly.")
        % {"code": code, "count": _min_sources(kind)}
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


# USD per USD needs no source.
_USD = _Entry(rate=Decimal(1), source="USD", as_of=None, agreeing=1, sources=[])


def _crypto_usd(currency: str, *, last_known: bool = False) -> tuple[_Table | None, _Entry]:
    """USD per 1 ``currency``: its own markets, or its peg when the operator prices it at par."""
    if currency in settings.RATES_STABLECOINS_AT_PAR:
        peg = STABLECOIN_PEGS[currency]
        if peg == "USD":
            rate, table, source = Decimal(1), None, "at par with USD (RATES_STABLECOINS_AT_PAR)"
        else:
            table, fx = _entry("fx", peg, last_known=last_known)
            with localcontext() as ctx:
                ctx.prec = 28
                rate = 1 / fx.rate
            source = f"at par with {peg} (RATES_STABLECOINS_AT_PAR) + {fx.source}"
        entry = _Entry(rate=rate, source=source, as_of=None, agreeing=1, sources=[{"source": source, "used": True}])
        return table, entry
    return _entry("crypto", currency, last_known=last_known)


# The last Rate built per pair, with the entries and tables it was built from: a Rate is a
# function of those (all immutable), so while the same tables price a pair, it is reused.
_built: dict[tuple[str, str], tuple[tuple[Any, ...], Rate]] = {}


def get_rate(currency: str, fiat: str, *, last_known: bool = False) -> Rate:
    """Fiat per 1 whole unit of ``currency`` (a crypto asset), with its sources and fetch time.
    ``last_known``: for a price that sets no amount (the fee and bookkeeping value of a draft
    whose amount is given in the asset), the last live price or the bundled one rather than a
    503 when no fresh one is at hand; such a Rate says ``live=False``."""
    currency = normalise_asset(str(currency))
    fiat = normalise_fiat(fiat)
    crypto_table, crypto = _crypto_usd(currency, last_known=last_known)
    fx_table, fx = (None, _USD) if fiat == "USD" else _entry("fx", fiat, last_known=last_known)
    made_of = (crypto_table, crypto, fx_table, fx)
    built = _built.get((currency, fiat))
    if built is not None and all(a is b for a, b in zip(built[0], made_of, strict=True)):
        return built[1]
    rate = _rate(currency, fiat, crypto_table, crypto, fx_table, fx)
    if crypto_table is not None or fx_table is not None:  # with no table, fetched_at is now
        _built[(currency, fiat)] = (made_of, rate)
    return rate


def _rate(
    currency: str, fiat: str, crypto_table: _Table | None, crypto: _Entry, fx_table: _Table | None, fx: _Entry
) -> Rate:
    tables = [t for t in (crypto_table, fx_table) if t is not None]
    live = all(t.live for t in tables)
    fetched_at = min((t.fetched_at for t in tables), default=timezone.now())
    as_of = min((e.as_of for e in (crypto, fx) if e.as_of), default=None)
    if fiat == "USD":
        source, agreeing = crypto.source, crypto.agreeing
    else:
        source = crypto.source if crypto.source == fx.source else f"{crypto.source} + {fx.source}"
        agreeing = min(crypto.agreeing, fx.agreeing)
    with localcontext() as ctx:
        ctx.prec = 40
        rate = _round_rate(crypto.rate * fx.rate)
    return Rate(
        currency,
        fiat,
        rate,
        source,
        fetched_at.astimezone(UTC),
        as_of,
        live=live,
        agreeing=agreeing,
        sources={"live": live, "crypto": {"asset": currency, **crypto.audit()}, "fx": {"currency": fiat, **fx.audit()}},
    )
