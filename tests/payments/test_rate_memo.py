"""Each process reuses parsed rate tables briefly, and a refresh replaces them at once."""

import time
from decimal import Decimal

import pytest
from django.core.cache import cache

from payments.rates import feed, get_rate
from tests.payments.conftest import coingecko_payload


@pytest.fixture
def memo(settings):
    settings.RATES_LOCAL_CACHE_SECONDS = 60
    feed._memo.clear()
    yield
    feed._memo.clear()


@pytest.mark.django_db
def test_a_second_look_up_is_served_without_reading_the_shared_cache(memo):
    first = get_rate("BTC", "EUR")
    for key in feed.CACHE_KEYS.values():
        cache.delete(key)
    assert get_rate("BTC", "EUR") == first


@pytest.mark.django_db
def test_a_refresh_replaces_the_memo(memo, settings, provider_server):
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}"]
    settings.RATES_MIN_SOURCES = 1
    provider_server.answer("/api/v3/simple/price", coingecko_payload(int(time.time())))
    get_rate("BTC", "EUR")
    stale = feed._memo["crypto"]
    feed.refresh_kind("crypto")
    assert "crypto" not in feed._memo or feed._memo["crypto"] is not stale
    assert get_rate("BTC", "USD").rate == Decimal("67187.3358")  # the new live table, not the memo's
