"""The bundled rate snapshot prices a request even when the shared cache loses the table at once
(another process flushed it, Redis evicted or restarted)."""

import pytest

from payments.rates import feed, get_rate


@pytest.mark.django_db
def test_a_local_snapshot_prices_a_request_when_the_shared_cache_keeps_nothing(settings, monkeypatch):
    settings.RATES_LOCAL_CACHE_SECONDS = 0
    monkeypatch.setattr(feed.cache, "get", lambda key, default=None: default)  # every read misses
    rate = get_rate("BTC", "EUR")
    assert rate.rate > 0 and rate.source
