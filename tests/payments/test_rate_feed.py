from __future__ import annotations

import time
from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.utils import timezone

from payments.rates import FIAT_CURRENCIES, RatesUnavailable, UnknownFiatCurrency, get_rate, refresh_rates
from payments.tasks import rates_refresh
from tests.payments.conftest import coingecko_payload, open_er_api_payload

pytestmark = pytest.mark.django_db

COINGECKO = "/api/v3/simple/price"
OPEN_ER = "/v6/latest/USD"


@pytest.fixture
def http_feed(settings, provider_server):
    """Both kinds served by the local provider server, one source each; no snapshot to fall back on."""
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}"]
    settings.RATES_HTTP_TIMEOUT_SECONDS = 1
    now = int(time.time())
    provider_server.answer(COINGECKO, coingecko_payload(now))
    provider_server.answer(OPEN_ER, open_er_api_payload(now))
    return provider_server


def test_the_list_has_165_iso_4217_fiat_currencies():
    assert len(FIAT_CURRENCIES) == 165
    assert {"USD", "EUR", "SEK", "JPY", "KWD", "CLF", "XDR"} <= set(FIAT_CURRENCIES)
    assert all(len(code) == 3 and code.isalpha() and code.isupper() for code in FIAT_CURRENCIES)


def test_the_bundled_snapshot_prices_every_asset_in_every_fiat_and_says_it_is_a_snapshot():
    for fiat in FIAT_CURRENCIES:
        for asset in ("BTC", "ETH", "SOL", "USDC", "USDT", "EURC"):
            rate = get_rate(asset, fiat)
            assert rate.rate > 0
            assert "snapshot" in rate.source and "not live" in rate.source
    assert get_rate("BTC", "USD").as_of.date().isoformat() == "2025-10-01"


def test_it_combines_the_usd_price_with_the_fiat_rate(http_feed):
    assert refresh_rates() == {"crypto": "6 assets from coingecko", "fx": "165 currencies from open.er-api.com"}
    usd = get_rate("BTC", "USD")
    assert usd.rate == Decimal("67187.3358")
    assert usd.source == "coingecko"
    assert usd.live is True
    eur = get_rate("BTC", "EUR")
    assert eur.rate == (Decimal("67187.3358") * Decimal("0.9205")).quantize(Decimal("1e-8"))
    assert eur.source == "coingecko + open.er-api.com"
    assert abs(eur.fetched_at - timezone.now()) < timedelta(seconds=5)
    assert get_rate("EURC", "SEK").rate == Decimal("1.0812") * Decimal("10.4821")


def test_the_coingecko_request_asks_for_every_asset_in_usd(http_feed):
    refresh_rates()
    request = next(r for r in http_feed.requests if r.startswith(COINGECKO))
    for part in ("bitcoin", "ethereum", "solana", "usd-coin", "tether", "euro-coin", "vs_currencies=usd"):
        assert part in request


def test_a_feed_older_than_the_limit_is_a_503_never_silently_used(http_feed, settings):
    refresh_rates()
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.RATES_MAX_AGE_SECONDS + 1)):
        with pytest.raises(RatesUnavailable) as caught:
            get_rate("BTC", "EUR")
    assert caught.value.status_code == 503
    assert caught.value.code == "rates_unavailable"


def test_before_the_first_fetch_http_rates_are_unavailable_and_nothing_is_fetched_inline(http_feed):
    with pytest.raises(RatesUnavailable):
        get_rate("BTC", "USD")
    assert http_feed.requests == []


def test_a_refresh_reprices_at_once_and_the_same_tables_give_the_same_rate(http_feed, settings):
    settings.RATES_LOCAL_CACHE_SECONDS = 0  # each read takes the shared table as it is now
    refresh_rates()
    first = get_rate("BTC", "EUR")
    assert get_rate("BTC", "EUR") == first
    http_feed.answer(COINGECKO, coingecko_payload(int(time.time()), bitcoin=70000))
    refresh_rates()
    again = get_rate("BTC", "EUR")
    assert again.rate == (Decimal("70000") * Decimal("0.9205")).quantize(Decimal("1e-8"))
    assert again.fetched_at >= first.fetched_at


def test_a_failed_refresh_keeps_the_previous_table_until_it_ages_out(http_feed, settings):
    refresh_rates()
    http_feed.answer(COINGECKO, status=500, body=b'{"error": "internal"}')
    assert refresh_rates()["crypto"].startswith("failed")
    assert get_rate("BTC", "USD").rate == Decimal("67187.3358")
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.RATES_MAX_AGE_SECONDS + 1)):
        with pytest.raises(RatesUnavailable):
            get_rate("BTC", "USD")


@pytest.mark.parametrize(
    "reply",
    [
        {"status": 500, "body": b'{"status": {"error_code": 500}}'},
        {"status": 429, "body": b'{"status": {"error_code": 429, "error_message": "rate limited"}}'},
        {
            "status": 200,
            "body": b"<!DOCTYPE html><html><body>Cloudflare: checking your browser</body></html>",
            "content_type": "text/html; charset=UTF-8",
        },
        {"status": 200, "body": b"<html>error</html>", "content_type": "application/json"},
        {"status": 200, "body": b'{"bitcoin": {"usd": 67187.33', "content_type": "application/json"},
        {"status": 200, "body": b"[]"},
        {"status": 200, "body": b'{"bitcoin": {"usd": "67187"}}'},
        {"status": 302, "body": b"{}"},
    ],
    ids=["500", "429", "html-200", "html-labelled-json", "truncated-json", "array", "string-price", "redirect"],
)
def test_a_broken_crypto_provider_answer_never_becomes_a_rate(http_feed, reply):
    http_feed.answer(COINGECKO, **reply)
    assert refresh_rates()["crypto"].startswith("failed")
    with pytest.raises(RatesUnavailable):
        get_rate("BTC", "USD")


@pytest.mark.parametrize(
    "change",
    [
        {"usd-coin": 0},
        {"tether": -1},
        {"bitcoin": True},
        {"solana": None},
    ],
)
def test_a_non_positive_or_missing_price_is_refused(http_feed, change):
    payload = coingecko_payload(int(time.time()))
    for coin, value in change.items():
        if value is None:
            del payload[coin]
        else:
            payload[coin]["usd"] = value
    http_feed.answer(COINGECKO, payload)
    if None in change.values():  # a coin left out: the others still count, that one has no price
        refresh_rates()
        with pytest.raises(RatesUnavailable):
            get_rate("SOL", "USD")
    else:
        assert refresh_rates()["crypto"].startswith("failed")


def test_stale_upstream_prices_are_refused(http_feed):
    http_feed.answer(COINGECKO, coingecko_payload(int(time.time()) - 24 * 3600))
    assert refresh_rates()["crypto"].startswith("failed")


@pytest.mark.parametrize(
    "payload",
    [
        {"result": "error", "error-type": "unsupported-code"},
        {**open_er_api_payload(int(time.time())), "base_code": "EUR"},
        {**open_er_api_payload(int(time.time())), "rates": {"USD": 1, "EUR": 0.92}},  # no SEK
        {**open_er_api_payload(int(time.time())), "time_last_update_unix": int(time.time()) - 5 * 86400},
    ],
    ids=["error-result", "wrong-base", "missing-sek", "stale"],
)
def test_a_bad_fx_answer_is_refused(http_feed, payload):
    http_feed.answer(OPEN_ER, payload)
    assert refresh_rates()["fx"].startswith("failed")


def test_a_slow_provider_times_out_and_the_others_still_count(settings, provider_server, second_provider_server):
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_HTTP_TIMEOUT_SECONDS = 1
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}", f"coingecko={second_provider_server.url}"]
    now = int(time.time())
    provider_server.answer(COINGECKO, coingecko_payload(now, bitcoin=1), delay=3)
    second_provider_server.answer(COINGECKO, coingecko_payload(now, bitcoin=2))
    started = time.monotonic()
    assert refresh_rates()["crypto"] == f"6 assets from coingecko@{second_provider_server.url[7:]}"
    assert time.monotonic() - started < 3
    assert get_rate("BTC", "USD").rate == 2


def test_it_fails_over_from_an_html_error_page_to_the_next_fx_provider(
    settings, provider_server, second_provider_server
):
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}", f"open-er-api={second_provider_server.url}"]
    now = int(time.time())
    provider_server.answer(OPEN_ER, body=b"<html>502 Bad Gateway</html>", content_type="text/html")
    second_provider_server.answer(OPEN_ER, open_er_api_payload(now, {"EUR": 0.5}))
    refresh_rates()
    assert get_rate("USDC", "EUR").rate == Decimal("0.9998") * Decimal("0.5")  # crypto: the snapshot
    assert provider_server.requests and second_provider_server.requests


def test_the_snapshot_prices_only_when_the_operator_allows_it_and_then_says_not_live(settings, provider_server):
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}"]
    provider_server.answer(COINGECKO, status=503, body=b"{}")
    assert refresh_rates()["crypto"].startswith("failed")
    settings.RATES_BUNDLED_ALLOWED = False
    with pytest.raises(RatesUnavailable) as caught:
        get_rate("BTC", "USD")
    assert caught.value.retry_after == settings.RATES_REFRESH_SECONDS
    settings.RATES_BUNDLED_ALLOWED = True
    rate = get_rate("BTC", "USD")
    assert rate.live is False and rate.rate == 114000 and "not live" in rate.source


def test_a_fiat_code_the_provider_does_not_quote_is_unavailable_not_guessed(http_feed):
    payload = open_er_api_payload(int(time.time()))
    del payload["rates"]["KPW"]
    http_feed.answer(OPEN_ER, payload)
    refresh_rates()
    with pytest.raises(RatesUnavailable):
        get_rate("BTC", "KPW")


def test_an_unknown_fiat_code_is_a_400():
    with pytest.raises(UnknownFiatCurrency) as caught:
        get_rate("BTC", "XYZ")
    assert caught.value.status_code == 400
    assert caught.value.errors[0]["field"] == "fiatCurrency"


def test_the_beat_schedule_names_the_refresh_task(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["payments-rates-refresh"]
    assert entry["task"] == "payments.rates_refresh"


def test_the_refresh_task_stores_the_rates(http_feed):
    assert rates_refresh.apply().get() == {
        "crypto": "6 assets from coingecko",
        "fx": "165 currencies from open.er-api.com",
    }
    assert get_rate("SOL", "JPY").rate == Decimal("172.45") * Decimal("151.37")


def test_a_refused_connection_leaves_the_other_providers(settings, provider_server):
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_CRYPTO_PROVIDERS = ["coingecko=http://127.0.0.1:9", f"coingecko={provider_server.url}"]
    provider_server.answer(COINGECKO, coingecko_payload(int(time.time()), bitcoin=3))
    assert refresh_rates()["crypto"] == f"6 assets from coingecko@{provider_server.url[7:]}"
    assert get_rate("BTC", "USD").rate == 3
