"""Creating drafts right after start, and with no reachable rate source: the feed refreshes as
beat starts, and an amount given in the asset needs no live rate at all."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
import time_machine
from celery import signals
from django.utils import timezone

from config.celery import _refresh_rates_at_start, scheduled_work
from core.models import Lease
from drafts.models import Draft
from payments.rates import get_rate, refresh_rates
from payments.tasks import rates_refresh
from tests.drafts.conftest import ADDRESSES
from tests.payments.conftest import coingecko_payload, open_er_api_payload

pytestmark = pytest.mark.django_db

FIAT_DRAFT = {
    "network": "Mainnet",
    "currency": "BTC",
    "receiverAddress": ADDRESSES["Mainnet"],
    "fiatCurrency": "EUR",
    "fiatAmount": 100,
}
ASSET_DRAFT = {"network": "Mainnet", "currency": "BTC", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 150000}


@pytest.fixture
def no_rates(settings):
    """A production-like install: no bundled table, and no provider answers (nothing listens)."""
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_CRYPTO_PROVIDERS = ["coingecko=http://127.0.0.1:9"]
    settings.RATES_FX_PROVIDERS = ["open-er-api=http://127.0.0.1:9"]
    settings.RATES_HTTP_TIMEOUT_SECONDS = 1


def test_beat_starting_refreshes_the_rates_at_once(settings, provider_server):
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}"]
    provider_server.answer("/api/v3/simple/price", coingecko_payload(int(time.time())))
    provider_server.answer("/v6/latest/USD", open_er_api_payload(int(time.time())))
    assert _refresh_rates_at_start in signals.beat_init._live_receivers(None)
    # A process another test started on this database (a worker, a beat) may hold the refresh's
    # lease for up to LEASE_SECONDS and skip this run: that is the lease doing its job, not beat
    # failing to send. The run is repeated (the lease cleared each time) until it was not skipped.
    work = scheduled_work("payments.rates_refresh", (), {})
    deadline = time.monotonic() + 3 * settings.LEASE_SECONDS
    # The worker's run of the task it sends, in this process: on the app the task is bound to
    # (an earlier test of this process may have made another Celery app the current one).
    conf = rates_refresh.app.conf
    eager = conf.task_always_eager
    conf.task_always_eager = True
    try:
        while True:
            Lease.objects.filter(name=work).delete()
            _refresh_rates_at_start()
            if provider_server.requests:
                break
            holders = list(Lease.objects.filter(name=work).values_list("holder", "expires_ms"))
            assert time.monotonic() < deadline, f"the refresh never ran; its lease: {holders}"
            time.sleep(0.5)
    finally:
        conf.task_always_eager = eager
    assert get_rate("BTC", "EUR").live is True  # no wait for the schedule's first interval


def test_with_no_rate_source_an_asset_amount_draft_is_created_and_a_fiat_one_refused(api_client, settings, no_rates):
    created = api_client.post("/api/v1/drafts", ASSET_DRAFT, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["amountSats"] == 150000
    assert body["quote"]["live"] is False  # its fee's USD value is priced at the bundled table, and says so

    refused = api_client.post("/api/v1/drafts", FIAT_DRAFT, format="json")
    assert refused.status_code == 503
    assert refused.json()["code"] == "rates_unavailable"
    assert refused["Retry-After"] == str(settings.RATES_REFRESH_SECONDS)
    assert Draft.objects.count() == 1


def test_an_asset_amount_draft_uses_the_last_live_price_once_it_is_stale(api_client, settings, provider_server):
    settings.RATES_BUNDLED_ALLOWED = False
    settings.RATES_MIN_SOURCES = 1
    settings.RATES_CRYPTO_PROVIDERS = [f"coingecko={provider_server.url}"]
    settings.RATES_FX_PROVIDERS = [f"open-er-api={provider_server.url}"]
    provider_server.answer("/api/v3/simple/price", coingecko_payload(int(time.time()), bitcoin=50000))
    provider_server.answer("/v6/latest/USD", open_er_api_payload(int(time.time())))
    refresh_rates()
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.RATES_MAX_AGE_SECONDS + 5)):
        created = api_client.post("/api/v1/drafts", ASSET_DRAFT, format="json")
        refused = api_client.post("/api/v1/drafts", FIAT_DRAFT, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["quote"]["live"] is False and created.json()["quote"]["rate"] == 50000
    assert refused.status_code == 503 and refused.json()["code"] == "rates_unavailable"
