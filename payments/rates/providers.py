"""Rate providers: where crypto prices (USD) and USD->fiat rates come from.

A provider's ``fetch()`` returns a validated ``Quotes`` or raises ``ProviderError``;
nothing a provider returns becomes a rate before it passed validation (an HTML
error page with status 200, malformed JSON, a missing or non-positive price are
all errors). Every configured provider is asked on each refresh and the feed
combines their answers per asset (payments/rates/combine.py). Prices are parsed
as Decimal, never float.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal, localcontext
from pathlib import Path
from typing import Any

import requests
from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from payments.rates.fiat import FIAT_CURRENCIES

CRYPTO_ASSETS: tuple[str, ...] = ("BTC", "ETH", "SOL", "USDC", "USDT", "EURC")
SNAPSHOT_PATH = Path(__file__).with_name("snapshot.json")
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
# Fiat providers publish daily; an FX table older than this is refused as stale upstream.
FX_MAX_UPSTREAM_AGE = timedelta(hours=48)
# The ECB publishes on TARGET working days only: Easter's Thursday -> Tuesday is the longest gap.
ECB_MAX_UPSTREAM_AGE = timedelta(days=5)
# Currencies the service cannot work without (SEK: bookkeeping value of every draft).
FX_REQUIRED = ("USD", "EUR", "SEK")


class ProviderError(Exception):
    """A provider gave no usable answer (down, slow, wrong format, implausible values)."""


@dataclass(frozen=True)
class Quotes:
    kind: str  # "crypto": USD per 1 unit; "fx": units of the currency per 1 USD
    source: str
    rates: dict[str, Decimal]
    as_of: datetime | None  # the provider's own timestamp of the data, when it gives one


def _positive(value: Any, what: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (Decimal, int)):
        raise ProviderError(f"{what} is not a number: {value!r}")
    number = Decimal(value)
    if not number.is_finite() or number <= 0:
        raise ProviderError(f"{what} is not a positive number: {value!r}")
    return number


class RateLimited(ProviderError):
    """The provider refused for its rate limit (HTTP 429, or its own rate-limit code)."""


def _error_detail(body: bytes) -> str:
    """A short, printable excerpt of an error answer (providers name the problem there)."""
    text = body[:300].decode("utf-8", "replace")
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())[:200]


def _get(
    url: str,
    *,
    params: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    accept: str = "application/json",
    kinds: tuple[str, ...] = ("json",),
) -> bytes:
    """GET a document with a total deadline and a size cap; a non-200 answer is a ProviderError."""
    timeout = settings.RATES_HTTP_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    try:
        with requests.get(
            url,
            params=params,
            headers={"Accept": accept, **(headers or {})},
            timeout=(timeout, timeout),
            stream=True,
            allow_redirects=False,
        ) as response:
            body = bytearray()
            for chunk in response.iter_content(chunk_size=65536):
                body.extend(chunk)
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ProviderError(f"{url} answered more than {MAX_RESPONSE_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise ProviderError(f"{url} took longer than {timeout} s")
            if response.status_code != 200:
                detail = _error_detail(bytes(body))
                message = f"{url} answered HTTP {response.status_code}" + (f": {detail}" if detail else "")
                if response.status_code == 429 or "400.002" in detail:
                    retry = response.headers.get("Retry-After")
                    raise RateLimited(message + (f" (Retry-After {retry})" if retry else ""))
                raise ProviderError(message)
            content_type = response.headers.get("Content-Type", "")
            if not any(kind in content_type.lower() for kind in kinds):
                raise ProviderError(f"{url} answered {content_type or 'no content type'}, not {'/'.join(kinds)}")
    except requests.RequestException as exc:
        raise ProviderError(f"{url} failed: {exc.__class__.__name__}: {exc}") from exc
    return bytes(body)


def _get_json(url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Any:
    """GET a JSON document; numbers come back as Decimal (never float)."""
    body = _get(url, params=params, headers=headers)
    try:
        return json.loads(body.decode("utf-8"), parse_float=Decimal, parse_int=Decimal)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProviderError(f"{url} answered malformed JSON: {exc}") from exc


def _decimal_text(value: Any) -> Any:
    """Exchanges send prices as JSON strings ("67187.30"): a Decimal of them, else the value unchanged."""
    if isinstance(value, str):
        try:
            return Decimal(value.strip())
        except ArithmeticError:
            return value
    return value


def _from_unix(value: Any, what: str) -> datetime:
    seconds = _positive(value, what)
    try:
        return datetime.fromtimestamp(int(seconds), tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ProviderError(f"{what} is not a timestamp: {value!r}") from exc


class SnapshotProvider:
    """The bundled, dated snapshot (payments/rates/snapshot.json): no network, never live.

    Not a provider the combination counts: the feed falls back on it only when the
    operator allows it (RATES_BUNDLED_ALLOWED), and then says so everywhere.
    """

    is_local = True
    name = "snapshot"

    def __init__(self, kind: str, base_url: str | None = None) -> None:
        self.kind = kind

    def fetch(self) -> Quotes:
        data = json.loads(SNAPSHOT_PATH.read_text(), parse_float=Decimal, parse_int=Decimal)
        table = data["cryptoUsd"] if self.kind == "crypto" else data["usdFx"]
        rates = {code: _positive(Decimal(value), code) for code, value in table.items()}
        as_of = datetime.fromisoformat(data["date"]).replace(tzinfo=UTC)
        return Quotes(self.kind, f"snapshot {data['date']} (bundled, not live)", rates, as_of)


class KrakenProvider:
    """Kraken's public /0/public/Ticker: the last trade ("c") of each asset's USD market."""

    is_local = False
    kind = "crypto"
    name = "kraken"
    # Our asset -> (the pair we ask for, the names Kraken may key the answer by).
    PAIRS = {
        "BTC": ("XBTUSD", ("XXBTZUSD", "XBTUSD")),
        "ETH": ("ETHUSD", ("XETHZUSD", "ETHUSD")),
        "SOL": ("SOLUSD", ("SOLUSD",)),
        "USDC": ("USDCUSD", ("USDCUSD",)),
        "USDT": ("USDTUSD", ("USDTZUSD", "USDTUSD")),
        "EURC": ("EURCUSD", ("EURCUSD",)),
    }

    def __init__(self, kind: str = "crypto", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_KRAKEN_URL).rstrip("/")

    def _ticker(self, pairs: list[str]) -> dict[str, Any]:
        data = _get_json(f"{self.base_url}/0/public/Ticker", params={"pair": ",".join(pairs)})
        if not isinstance(data, dict) or not isinstance(data.get("error"), list):
            raise ProviderError("Kraken answer lacks its error list")
        if data["error"]:
            # Kraken answers its errors (EAPI:Rate limit exceeded, EService:Unavailable,
            # EQuery:Unknown asset pair) with HTTP 200 and an empty or missing result.
            raise ProviderError(f"Kraken answered {', '.join(map(str, data['error']))}")
        result = data.get("result")
        if not isinstance(result, dict):
            raise ProviderError("Kraken answer lacks result")
        return result

    def fetch(self) -> Quotes:
        pairs = [pair for pair, _ in self.PAIRS.values()]
        try:
            result = self._ticker(pairs)
        except ProviderError as exc:
            if "Unknown asset pair" not in str(exc):
                raise
            # One pair delisted fails the whole query: ask for each alone, keep those it knows.
            result = {}
            for pair in pairs:
                try:
                    result.update(self._ticker([pair]))
                except ProviderError as single:
                    if "Unknown asset pair" not in str(single):
                        raise
            if not result:
                raise exc
        rates: dict[str, Decimal] = {}
        for code, (_, keys) in self.PAIRS.items():
            entry = next((result[key] for key in keys if key in result), None)
            if entry is None:
                continue
            last = entry.get("c") if isinstance(entry, dict) else None
            if not isinstance(last, list) or not last:
                raise ProviderError(f"Kraken {keys[0]} lacks its last trade (c)")
            rates[code] = _positive(_decimal_text(last[0]), f"Kraken {keys[0]} c[0]")
        if not rates:
            raise ProviderError("Kraken answered no known pair")
        return Quotes("crypto", self.name, rates, None)


class CoinbaseProvider:
    """Coinbase's public /v2/prices/<ASSET>-USD/spot, one request per asset."""

    is_local = False
    kind = "crypto"
    name = "coinbase"

    def __init__(self, kind: str = "crypto", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_COINBASE_URL).rstrip("/")

    def fetch(self) -> Quotes:
        rates: dict[str, Decimal] = {}
        errors: list[str] = []
        for code in CRYPTO_ASSETS:
            try:
                data = _get_json(f"{self.base_url}/v2/prices/{code}-USD/spot")
                entry = data.get("data") if isinstance(data, dict) else None
                if not isinstance(entry, dict):
                    raise ProviderError(f"Coinbase {code}-USD answer lacks data")
                if entry.get("currency") != "USD" or entry.get("base", code) != code:
                    pair = f"{entry.get('base')}-{entry.get('currency')}"
                    raise ProviderError(f"Coinbase answered {pair}, not {code}-USD")
                rates[code] = _positive(_decimal_text(entry.get("amount")), f"Coinbase {code}-USD amount")
            except ProviderError as exc:
                errors.append(str(exc))
                if " 429" in str(exc):
                    break  # rate-limited: asking for the next asset only makes it worse
        if not rates:
            raise ProviderError("; ".join(errors) or "Coinbase answered nothing")
        return Quotes("crypto", self.name, rates, None)


class BitstampProvider:
    """Bitstamp's public /api/v2/ticker/<pair>/ ("last" trade, "timestamp"), one request per asset."""

    is_local = False
    kind = "crypto"
    name = "bitstamp"
    PAIRS = {"BTC": "btcusd", "ETH": "ethusd", "SOL": "solusd", "USDC": "usdcusd", "USDT": "usdtusd", "EURC": "eurcusd"}

    def __init__(self, kind: str = "crypto", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_BITSTAMP_URL).rstrip("/")

    def fetch(self) -> Quotes:
        rates: dict[str, Decimal] = {}
        errors: list[str] = []
        oldest: datetime | None = None
        for code, pair in self.PAIRS.items():
            try:
                data = _get_json(f"{self.base_url}/api/v2/ticker/{pair}/")
                if not isinstance(data, dict) or "last" not in data:
                    raise ProviderError(f"Bitstamp {pair} answer lacks last")
                rates[code] = _positive(_decimal_text(data["last"]), f"Bitstamp {pair} last")
                updated = _from_unix(_decimal_text(data.get("timestamp")), f"Bitstamp {pair} timestamp")
                oldest = updated if oldest is None else min(oldest, updated)
            except ProviderError as exc:
                rates.pop(code, None)
                errors.append(str(exc))
                if " 429" in str(exc) or "400.002" in str(exc):
                    break
        if not rates:
            raise ProviderError("; ".join(errors) or "Bitstamp answered nothing")
        if oldest is not None and datetime.now(UTC) - oldest > timedelta(seconds=settings.RATES_MAX_AGE_SECONDS):
            raise ProviderError(f"Bitstamp prices are stale (last trade {oldest.isoformat()})")
        return Quotes("crypto", self.name, rates, oldest)


class CoinGeckoProvider:
    """CoinGecko's /api/v3/simple/price (or any API answering in its format)."""

    is_local = False
    kind = "crypto"
    name = "coingecko"
    IDS = {
        "BTC": "bitcoin",
        "ETH": "ethereum",
        "SOL": "solana",
        "USDC": "usd-coin",
        "USDT": "tether",
        "EURC": "euro-coin",
    }

    def __init__(self, kind: str = "crypto", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_COINGECKO_URL).rstrip("/")

    def fetch(self) -> Quotes:
        headers = {}
        if settings.RATES_COINGECKO_API_KEY:
            header = "x-cg-pro-api-key" if "pro-api." in self.base_url else "x-cg-demo-api-key"
            headers[header] = settings.RATES_COINGECKO_API_KEY
        data = _get_json(
            f"{self.base_url}/api/v3/simple/price",
            params={"ids": ",".join(self.IDS.values()), "vs_currencies": "usd", "include_last_updated_at": "true"},
            headers=headers,
        )
        if not isinstance(data, dict):
            raise ProviderError("CoinGecko answer is not an object")
        rates: dict[str, Decimal] = {}
        oldest: datetime | None = None
        for code, coin in self.IDS.items():
            entry = data.get(coin)
            if not isinstance(entry, dict) or "usd" not in entry:
                continue  # CoinGecko leaves out an id it does not know; the others still count
            rates[code] = _positive(entry["usd"], f"{coin}.usd")
            if "last_updated_at" in entry:
                updated = _from_unix(entry["last_updated_at"], f"{coin}.last_updated_at")
                oldest = updated if oldest is None else min(oldest, updated)
        if not rates:
            raise ProviderError("CoinGecko answered none of the asked coins")
        if oldest is not None and datetime.now(UTC) - oldest > timedelta(seconds=settings.RATES_MAX_AGE_SECONDS):
            raise ProviderError(f"CoinGecko prices are stale (last updated {oldest.isoformat()})")
        return Quotes("crypto", "coingecko", rates, oldest)


class OpenErApiProvider:
    """open.er-api.com's /v6/latest/USD (ExchangeRate-API's open access format)."""

    is_local = False
    kind = "fx"
    name = "open.er-api.com"

    def __init__(self, kind: str = "fx", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_OPEN_ER_API_URL).rstrip("/")

    def fetch(self) -> Quotes:
        data = _get_json(f"{self.base_url}/v6/latest/USD")
        if not isinstance(data, dict):
            raise ProviderError("open.er-api answer is not an object")
        if data.get("result") != "success":
            raise ProviderError(f"open.er-api answered result={data.get('result')!r} ({data.get('error-type')!r})")
        if data.get("base_code") != "USD":
            raise ProviderError(f"open.er-api answered base {data.get('base_code')!r}, not USD")
        table = data.get("rates")
        if not isinstance(table, dict):
            raise ProviderError("open.er-api answer lacks rates")
        rates = {code: _positive(table[code], code) for code in FIAT_CURRENCIES if code in table}
        missing = [code for code in FX_REQUIRED if code not in rates]
        if missing:
            raise ProviderError(f"open.er-api answer lacks {', '.join(missing)}")
        if rates["USD"] != 1:
            raise ProviderError("open.er-api answer does not give USD = 1")
        as_of = _from_unix(data.get("time_last_update_unix"), "time_last_update_unix")
        if datetime.now(UTC) - as_of > FX_MAX_UPSTREAM_AGE:
            raise ProviderError(f"open.er-api rates are stale (last updated {as_of.isoformat()})")
        return Quotes("fx", "open.er-api.com", rates, as_of)


class EcbProvider:
    """The ECB's euro foreign exchange reference rates (eurofxref-daily.xml), turned into USD -> fiat.

    Published on TARGET working days around 16:00 CET for about 30 currencies; a table
    older than ECB_MAX_UPSTREAM_AGE (a long weekend) is refused as stale.
    """

    is_local = False
    kind = "fx"
    name = "ecb"
    _NS = "{http://www.ecb.int/vocabulary/2002-08-01/eurofxref}"

    def __init__(self, kind: str = "fx", base_url: str | None = None) -> None:
        self.base_url = (base_url or settings.RATES_ECB_URL).rstrip("/")

    def fetch(self) -> Quotes:
        url = f"{self.base_url}/stats/eurofxref/eurofxref-daily.xml"
        body = _get(url, accept="application/xml, text/xml", kinds=("xml",))
        try:
            root = ElementTree.fromstring(body, forbid_dtd=True)
        except (ElementTree.ParseError, DefusedXmlException) as exc:
            raise ProviderError(f"ECB answer is not XML: {exc}") from exc
        day = next((cube for cube in root.iter(f"{self._NS}Cube") if cube.get("time")), None)
        if day is None:
            raise ProviderError("ECB answer lacks Cube time=")
        try:
            as_of = datetime.fromisoformat(day.get("time", "")).replace(tzinfo=UTC) + timedelta(hours=15)
        except ValueError as exc:
            raise ProviderError(f"ECB date is not a date: {day.get('time')!r}") from exc
        per_eur = {"EUR": Decimal(1)}
        for cube in day.iter(f"{self._NS}Cube"):
            code, rate = cube.get("currency"), cube.get("rate")
            if code and rate is not None:
                per_eur[code] = _positive(_decimal_text(rate), f"ECB {code}")
        if "USD" not in per_eur:
            raise ProviderError("ECB answer lacks USD")
        usd = per_eur["USD"]
        with localcontext() as ctx:
            ctx.prec = 28
            rates = {code: value / usd for code, value in per_eur.items() if code in FIAT_CURRENCIES}
        rates["USD"] = Decimal(1)
        if datetime.now(UTC) - as_of > ECB_MAX_UPSTREAM_AGE:
            raise ProviderError(f"ECB rates are stale (reference date {day.get('time')})")
        return Quotes("fx", self.name, rates, as_of)


PROVIDERS = {
    "crypto": {
        "kraken": KrakenProvider,
        "coinbase": CoinbaseProvider,
        "bitstamp": BitstampProvider,
        "coingecko": CoinGeckoProvider,
    },
    "fx": {"ecb": EcbProvider, "open-er-api": OpenErApiProvider},
}


def configured_providers(kind: str) -> list[Any]:
    """The live providers of one kind, from RATES_CRYPTO_PROVIDERS / RATES_FX_PROVIDERS (may be none)."""
    names = settings.RATES_CRYPTO_PROVIDERS if kind == "crypto" else settings.RATES_FX_PROVIDERS
    found = []
    for item in names:
        name, _, base_url = item.partition("=")
        cls = PROVIDERS[kind].get(name.strip())
        if cls is None:
            setting = "RATES_CRYPTO_PROVIDERS" if kind == "crypto" else "RATES_FX_PROVIDERS"
            raise ImproperlyConfigured(
                f"{setting} names an unknown provider {name!r}; known: {', '.join(PROVIDERS[kind])}"
            )
        found.append(cls(kind, base_url.strip() or None))
    return found
