"""Rate providers: where crypto prices (USD) and USD->fiat rates come from.

A provider's ``fetch()`` returns a validated ``Quotes`` or raises ``ProviderError``;
nothing a provider returns becomes a rate before it passed validation (an HTML
error page with status 200, malformed JSON, a missing or non-positive price are
all errors, so the feed fails over to the next provider).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from payments.rates.fiat import FIAT_CURRENCIES

CRYPTO_ASSETS: tuple[str, ...] = ("BTC", "ETH", "SOL", "USDC", "USDT", "EURC")
SNAPSHOT_PATH = Path(__file__).with_name("snapshot.json")
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
# Fiat providers publish daily; an FX table older than this is refused as stale upstream.
FX_MAX_UPSTREAM_AGE = timedelta(hours=48)
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


def _get_json(url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Any:
    """GET a JSON document with a total deadline and a size cap; numbers come back as Decimal."""
    timeout = settings.RATES_HTTP_TIMEOUT_SECONDS
    deadline = time.monotonic() + timeout
    try:
        with requests.get(
            url,
            params=params,
            headers={"Accept": "application/json", **(headers or {})},
            timeout=(timeout, timeout),
            stream=True,
            allow_redirects=False,
        ) as response:
            if response.status_code != 200:
                raise ProviderError(f"{url} answered HTTP {response.status_code}")
            content_type = response.headers.get("Content-Type", "")
            if "json" not in content_type.lower():
                raise ProviderError(f"{url} answered {content_type or 'no content type'}, not JSON")
            body = bytearray()
            for chunk in response.iter_content(chunk_size=65536):
                body.extend(chunk)
                if len(body) > MAX_RESPONSE_BYTES:
                    raise ProviderError(f"{url} answered more than {MAX_RESPONSE_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise ProviderError(f"{url} took longer than {timeout} s")
    except requests.RequestException as exc:
        raise ProviderError(f"{url} failed: {exc.__class__.__name__}: {exc}") from exc
    try:
        return json.loads(bytes(body).decode("utf-8"), parse_float=Decimal, parse_int=Decimal)
    except (UnicodeDecodeError, ValueError) as exc:
        raise ProviderError(f"{url} answered malformed JSON: {exc}") from exc


def _from_unix(value: Any, what: str) -> datetime:
    seconds = _positive(value, what)
    try:
        return datetime.fromtimestamp(int(seconds), tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise ProviderError(f"{what} is not a timestamp: {value!r}") from exc


class SnapshotProvider:
    """The bundled, dated snapshot (payments/rates/snapshot.json): no network, never live."""

    is_local = True

    def __init__(self, kind: str, base_url: str | None = None) -> None:
        self.kind = kind

    def fetch(self) -> Quotes:
        data = json.loads(SNAPSHOT_PATH.read_text(), parse_float=Decimal, parse_int=Decimal)
        table = data["cryptoUsd"] if self.kind == "crypto" else data["usdFx"]
        rates = {code: _positive(Decimal(value), code) for code, value in table.items()}
        as_of = datetime.fromisoformat(data["date"]).replace(tzinfo=UTC)
        return Quotes(self.kind, f"snapshot {data['date']} (bundled, not live)", rates, as_of)


class CoinGeckoProvider:
    """CoinGecko's /api/v3/simple/price (or any API answering in its format)."""

    is_local = False
    kind = "crypto"
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
                raise ProviderError(f"CoinGecko answer lacks {coin}.usd")
            rates[code] = _positive(entry["usd"], f"{coin}.usd")
            if "last_updated_at" in entry:
                updated = _from_unix(entry["last_updated_at"], f"{coin}.last_updated_at")
                oldest = updated if oldest is None else min(oldest, updated)
        if oldest is not None and datetime.now(UTC) - oldest > timedelta(seconds=settings.RATES_MAX_AGE_SECONDS):
            raise ProviderError(f"CoinGecko prices are stale (last updated {oldest.isoformat()})")
        return Quotes("crypto", "coingecko", rates, oldest)


class OpenErApiProvider:
    """open.er-api.com's /v6/latest/USD (ExchangeRate-API's open access format)."""

    is_local = False
    kind = "fx"

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


PROVIDERS = {
    "crypto": {"snapshot": SnapshotProvider, "coingecko": CoinGeckoProvider},
    "fx": {"snapshot": SnapshotProvider, "open-er-api": OpenErApiProvider},
}


def configured_providers(kind: str) -> list[Any]:
    """The providers of one kind, in failover order, from RATES_CRYPTO_PROVIDERS / RATES_FX_PROVIDERS."""
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
    if not found:
        raise ImproperlyConfigured(f"No {kind} rate provider is configured.")
    return found
