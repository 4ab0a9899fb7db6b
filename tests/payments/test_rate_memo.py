"""Each process reuses parsed rate tables briefly, and a refresh replaces them at once."""

import pytest
from django.core.cache import cache

from payments.rates import feed, get_rate


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
def test_a_refresh_replaces_the_memo(memo):
    get_rate("BTC", "EUR")
    stale = feed._memo["crypto"]
    feed.refresh_kind("crypto")
    assert "crypto" not in feed._memo or feed._memo["crypto"] is not stale
    assert get_rate("BTC", "EUR").fetched_at >= stale[1].fetched_at
