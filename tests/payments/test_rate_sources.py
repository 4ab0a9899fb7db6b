"""Every rate source, served by a local HTTP server answering as that provider's public API
documentation shows (its success, error and rate-limit answers), and the combination of them."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.core.cache import cache

from payments.rates import RatesUnavailable, get_rate, refresh_rates
from payments.rates.health import counters
from tests.payments.conftest import open_er_api_payload

pytestmark = pytest.mark.django_db

KRAKEN = "/0/public/Ticker"
COINGECKO = "/api/v3/simple/price"
ECB = "/stats/eurofxref/eurofxref-daily.xml"
OPEN_ER = "/v6/latest/USD"
KRAKEN_KEYS = {"BTC": "XXBTZUSD", "ETH": "XETHZUSD", "SOL": "SOLUSD", "USDC": "USDCUSD", "USDT": "USDTZUSD"}
BITSTAMP_PAIRS = {"BTC": "btcusd", "ETH": "ethusd", "SOL": "solusd", "USDC": "usdcusd", "USDT": "usdtusd"}
COINGECKO_IDS = {"BTC": "bitcoin", "ETH": "ethereum", "SOL": "solana", "USDC": "usd-coin", "USDT": "tether"}
BASE = {"BTC": "67000.10", "ETH": "3450.50", "SOL": "172.40", "USDC": "0.99985", "USDT": "1.0002"}


def kraken_answer(prices: dict[str, str]) -> dict:
    """GET /0/public/Ticker?pair=...: result keyed by Kraken's own pair names, "c" = last trade closed."""
    return {
        "error": [],
        "result": {
            KRAKEN_KEYS[code]: {
                "a": [price, "1", "1.000"],
                "b": [price, "2", "2.000"],
                "c": [price, "0.00067643"],
                "v": ["4083.67001100", "4412.73601799"],
                "p": [price, price],
                "t": [34619, 38907],
                "l": [price, price],
                "h": [price, price],
                "o": price,
            }
            for code, price in prices.items()
        },
    }


def coinbase_answer(code: str, price: str) -> dict:
    """GET /v2/prices/BTC-USD/spot."""
    return {"data": {"amount": price, "base": code, "currency": "USD"}}


def bitstamp_answer(price: str, timestamp: int) -> dict:
    """GET /api/v2/ticker/btcusd/: every value a string."""
    return {
        "timestamp": str(timestamp),
        "open": price,
        "high": price,
        "low": price,
        "last": price,
        "volume": "1260.25170434",
        "vwap": price,
        "bid": price,
        "ask": price,
        "side": "0",
        "open_24": price,
        "percent_change_24": "0.15",
    }


def ecb_answer(day: str, rates: dict[str, str]) -> bytes:
    """eurofxref-daily.xml: units of each currency per 1 EUR."""
    cubes = "\n".join(f"\t\t\t<Cube currency='{code}' rate='{rate}'/>" for code, rate in rates.items())
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" '
        'xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">\n'
        "\t<gesmes:subject>Reference rates</gesmes:subject>\n"
        "\t<gesmes:Sender>\n\t\t<gesmes:name>European Central Bank</gesmes:name>\n\t</gesmes:Sender>\n"
        f"\t<Cube>\n\t\t<Cube time='{day}'>\n{cubes}\n\t\t</Cube>\n\t</Cube>\n</gesmes:Envelope>\n"
    ).encode()


def serve(server, *, kraken=None, coinbase=None, bitstamp=None, coingecko=None) -> None:
    now = int(time.time())
    if kraken is not None:
        server.answer(KRAKEN, kraken_answer(kraken))
    for code, price in (coinbase or {}).items():
        server.answer(f"/v2/prices/{code}-USD/spot", coinbase_answer(code, price))
    for code, price in (bitstamp or {}).items():
        server.answer(f"/api/v2/ticker/{BITSTAMP_PAIRS[code]}/", bitstamp_answer(price, now - 5))
    if coingecko is not None:
        # JSON numbers written digit for digit (a float would round them before they are sent).
        entries = [
            f'"{coin}": {{"usd": {coingecko[code]}, "last_updated_at": {now}}}' for code, coin in COINGECKO_IDS.items()
        ]
        server.answer(COINGECKO, body=("{" + ", ".join(entries) + "}").encode())


@pytest.fixture
def sources(settings, provider_server):
    """All four crypto providers and both fiat providers on one local server; no bundled table."""
    url = provider_server.url
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={url}", f"coinbase={url}", f"bitstamp={url}", f"coingecko={url}"]
    settings.RATES_FX_PROVIDERS = [f"ecb={url}", f"open-er-api={url}"]
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 2
    settings.RATES_OUTLIER_PERCENT = Decimal("3")
    settings.RATES_HTTP_TIMEOUT_SECONDS = 1
    cache.delete_many([f"payments:rates:count:{e}:{p}" for e in ("failures", "outliers") for p in PROVIDERS])
    return provider_server


PROVIDERS = ["kraken", "coinbase", "bitstamp", "coingecko", "ecb", "open.er-api.com"]


@pytest.mark.parametrize("name", ["kraken", "coinbase", "bitstamp", "coingecko"])
def test_each_crypto_provider_is_read_from_its_documented_answer(sources, settings, name):
    settings.RATES_CRYPTO_PROVIDERS = [f"{name}={sources.url}"]
    settings.RATES_MIN_SOURCES = 1
    prices = {**BASE, "BTC": "67187.123456789012"}  # more digits than a float keeps
    serve(sources, **{name: prices})
    assert refresh_rates()["crypto"] == f"5 assets from {name}"
    rate = get_rate("BTC", "USD")
    assert rate.rate == Decimal("67187.12345679")  # 15 significant digits, from the exact Decimal
    assert rate.source == name and rate.live is True
    assert get_rate("USDC", "USD").rate == Decimal("0.99985")  # its own market, not 1.0
    with pytest.raises(RatesUnavailable):
        get_rate("EURC", "USD")  # no source quoted it: no price, not a guess


def test_the_kraken_request_names_every_pair(sources, settings):
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={sources.url}"]
    serve(sources, kraken=BASE)
    refresh_rates()
    request = next(r for r in sources.requests if r.startswith(KRAKEN))
    assert "pair=XBTUSD%2CETHUSD%2CSOLUSD%2CUSDCUSD%2CUSDTUSD%2CEURCUSD" in request


def test_a_pair_kraken_no_longer_lists_costs_only_that_pair(sources, settings):
    settings.RATES_CRYPTO_PROVIDERS = [f"kraken={sources.url}"]
    settings.RATES_MIN_SOURCES = 1
    sources.answer(KRAKEN, {"error": ["EQuery:Unknown asset pair"]})  # the query naming every pair
    for code, pair in {"BTC": "XBTUSD", "ETH": "ETHUSD"}.items():
        sources.answer(f"{KRAKEN}?pair={pair}", kraken_answer({code: BASE[code]}))
    assert refresh_rates()["crypto"] == "2 assets from kraken"
    assert get_rate("ETH", "USD").rate == Decimal("3450.50")


@pytest.mark.parametrize(
    "name,path,reply,says",
    [
        # Kraken answers its errors with HTTP 200 and a filled error list.
        ("kraken", KRAKEN, {"payload": {"error": ["EAPI:Rate limit exceeded"]}}, "EAPI:Rate limit exceeded"),
        ("kraken", KRAKEN, {"payload": {"error": ["EService:Unavailable"]}}, "EService:Unavailable"),
        ("kraken", KRAKEN, {"payload": {"error": ["EQuery:Unknown asset pair"]}}, "Unknown asset pair"),
        (
            "coinbase",
            "/v2/prices/BTC-USD/spot",
            {"status": 429, "payload": {"errors": [{"id": "rate_limit_exceeded", "message": "Too many requests"}]}},
            "429",
        ),
        (
            "coinbase",
            "/v2/prices/BTC-USD/spot",
            {"status": 404, "payload": {"errors": [{"id": "not_found", "message": "Invalid currency"}]}},
            "404",
        ),
        (
            "bitstamp",
            "/api/v2/ticker/btcusd/",
            {
                "status": 400,
                "payload": {"status": "error", "reason": "Rate limit exceeded", "response_code": "400.002"},
            },
            "400.002",
        ),
        (
            "coingecko",
            COINGECKO,
            {
                "status": 429,
                "payload": {"status": {"error_code": 429, "error_message": "You've exceeded the Rate Limit."}},
            },
            "429",
        ),
        (
            "coingecko",
            COINGECKO,
            {"status": 200, "body": b"<html>Just a moment...</html>", "content_type": "text/html"},
            "text/html",
        ),
    ],
    ids=[
        "kraken-rate-limit",
        "kraken-unavailable",
        "kraken-unknown-pair",
        "coinbase-429",
        "coinbase-404",
        "bitstamp-rate-limit",
        "coingecko-429",
        "coingecko-html",
    ],
)
def test_an_error_or_rate_limit_answer_is_a_counted_failure_never_a_price(sources, settings, name, path, reply, says):
    settings.RATES_CRYPTO_PROVIDERS = [f"{name}={sources.url}"]
    settings.RATES_MIN_SOURCES = 1
    sources.answer(path, **reply)
    assert refresh_rates()["crypto"].startswith("failed")
    with pytest.raises(RatesUnavailable):
        get_rate("BTC", "USD")
    health = counters([name])[name]
    assert health["failures"] == 1
    assert says in health["lastError"]


def test_one_lying_source_does_not_move_the_price_while_two_of_four_agree(sources):
    serve(
        sources,
        kraken={**BASE, "BTC": "67000"},
        coinbase={**BASE, "BTC": "67010"},
        bitstamp={**BASE, "BTC": "73700"},  # 10% off
    )
    sources.answer(COINGECKO, status=503, body=b'{"status": {"error_code": 503}}')  # the fourth is down
    sources.answer(
        ECB, body=ecb_answer(datetime.now(UTC).date().isoformat(), {"USD": "1.0800"}), content_type="text/xml"
    )
    refresh_rates()
    rate = get_rate("BTC", "USD")
    assert rate.rate == Decimal("67005")  # the median of the two that agree; the liar's 73700 is gone
    assert rate.agreeing == 2
    sources_seen = {s["source"]: s for s in rate.sources["crypto"]["sources"]}
    assert sources_seen["bitstamp"]["used"] is False and sources_seen["bitstamp"]["dropped"] == "outlier"
    assert sources_seen["kraken"]["used"] and sources_seen["coinbase"]["used"]
    health = counters(["bitstamp", "coingecko", "kraken"])
    assert health["bitstamp"]["outliers"] == 1
    assert health["coingecko"]["failures"] == 1
    assert health["kraken"] == {"failures": 0, "outliers": 0, "lastError": None, "lastErrorAt": None}


def test_two_sources_that_disagree_give_no_price(sources):
    serve(sources, kraken={**BASE, "BTC": "67000"}, coinbase={**BASE, "BTC": "73700"})
    refresh_rates()
    with pytest.raises(RatesUnavailable) as caught:
        get_rate("BTC", "USD")
    assert "agreed" in caught.value.detail
    assert get_rate("ETH", "USD").rate == Decimal("3450.50")  # ETH: the two agree


def test_fewer_agreeing_sources_than_the_minimum_is_a_503(sources):
    serve(sources, kraken=BASE)  # the other three answer 404
    assert refresh_rates()["crypto"].startswith("failed")
    with pytest.raises(RatesUnavailable):
        get_rate("BTC", "USD")


def test_a_source_older_than_the_maximum_age_is_set_aside(sources, settings):
    serve(sources, kraken=BASE, coinbase=BASE)
    old = int(time.time()) - settings.RATES_MAX_AGE_SECONDS - 60
    sources.answer("/api/v2/ticker/solusd/", bitstamp_answer("100", old))  # stale and far off
    for code in ("BTC", "ETH", "USDC", "USDT"):
        sources.answer(f"/api/v2/ticker/{BITSTAMP_PAIRS[code]}/", bitstamp_answer(BASE[code], int(time.time())))
    refresh_rates()
    assert get_rate("SOL", "USD").rate == Decimal("172.40")


def test_fiat_rates_are_the_median_of_the_ecb_and_open_er_api(sources, settings):
    serve(sources, kraken=BASE, coinbase=BASE)
    today = datetime.now(UTC).date().isoformat()
    # 1 EUR = 1.0800 USD = 11.6000 SEK: 1 USD = 0.925925... EUR
    sources.answer(
        ECB, body=ecb_answer(today, {"USD": "1.0800", "SEK": "11.6000", "JPY": "163.50"}), content_type="text/xml"
    )
    sources.answer(OPEN_ER, open_er_api_payload(int(time.time()), {"EUR": 0.9261, "SEK": 10.74}))
    refresh_rates()
    eur = get_rate("USDT", "EUR")
    with_ecb = Decimal(1) / Decimal("1.0800")
    assert eur.rate == (Decimal("1.0002") * (with_ecb + Decimal("0.9261")) / 2).quantize(Decimal("1e-8"))
    assert eur.sources["fx"]["agreeing"] == 2 and eur.source.endswith("median of ecb, open.er-api.com")
    assert get_rate("USDT", "KPW").sources["fx"]["source"] == "open.er-api.com"  # the ECB does not quote it


@pytest.mark.parametrize(
    "body,content_type",
    [
        (b"<html><body>Service Unavailable</body></html>", "text/html"),
        (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><x>&a;</x>', "text/xml"),
        (ecb_answer("2020-01-02", {"USD": "1.1193"}), "text/xml"),  # stale
        (ecb_answer("2026-01-02", {"SEK": "11.6"}), "text/xml"),  # no USD
    ],
    ids=["html", "entities", "stale", "no-usd"],
)
def test_a_bad_ecb_answer_is_refused(sources, settings, body, content_type):
    settings.RATES_FX_PROVIDERS = [f"ecb={sources.url}"]
    sources.answer(ECB, body=body, content_type=content_type)
    assert refresh_rates()["fx"].startswith("failed")
    assert counters(["ecb"])["ecb"]["failures"] == 1


def test_stablecoins_are_priced_at_their_peg_only_when_the_operator_says_so(sources, settings):
    serve(sources, kraken=BASE, coinbase=BASE)
    refresh_rates()
    assert get_rate("USDC", "USD").rate == Decimal("0.99985")
    settings.RATES_STABLECOINS_AT_PAR = ["USDC"]
    at_par = get_rate("USDC", "USD")
    assert at_par.rate == 1 and "RATES_STABLECOINS_AT_PAR" in at_par.source
