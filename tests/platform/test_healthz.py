from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.test import Client, override_settings
from django.utils import timezone

pytestmark = pytest.mark.django_db


@pytest.fixture
def live_rates():
    """Fresh live tables in the shared cache, as a refresh stores them."""
    from payments.rates.feed import _Entry, _store, _Table

    now = timezone.now()
    for kind, code in (("crypto", "BTC"), ("fx", "EUR")):
        entry = _Entry(rate=Decimal("1.5"), source="kraken", as_of=now, agreeing=1, sources=[])
        _store(_Table(kind=kind, fetched_at=now, live=True, entries={code: entry}))


def test_healthz_is_ok_when_the_database_cache_and_broker_answer_and_nothing_waits(anon_client):
    response = anon_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("status", "checks", "failed")} == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "webhooks": "ok", "emails": "ok", "rates": "ok"},
        "failed": [],
    }
    assert body["detail"]["webhooks"] == {"backlog": 0, "oldestDueAgeSeconds": None}
    assert body["detail"]["emails"] == {"backlog": 0, "oldestDueAgeSeconds": None}


def test_healthz_stays_ok_while_naming_what_is_off_and_how_to_turn_it_on(anon_client, settings, live_rates):
    settings.ENABLED_NETWORKS = ["Testnet", "Sepolia"]
    settings.PLATFORM_FEE_ADDRESSES = {}
    settings.CHAINWATCH_ENDPOINTS = {}
    settings.RATES_BUNDLED_ALLOWED = False  # its notice: tests/payments/test_rates_surfaces.py
    response = anon_client.get("/healthz")
    assert response.status_code == 200
    notices = response.json()["notices"]
    assert len(notices) == 2
    assert notices[0].startswith("No fee address for Testnet, Sepolia: MultiOutput drafts carry no fee output")
    assert "FEE_ADDRESS_TESTNET=" in notices[0]
    assert notices[1].startswith("No node endpoint for Testnet, Sepolia:") and "never leave Pending" in notices[1]
    assert "RPC_URL_SEPOLIA=" in notices[1]


def test_healthz_has_no_notice_once_fee_addresses_and_nodes_are_set(anon_client, settings, live_rates):
    settings.ENABLED_NETWORKS = ["Sepolia"]
    settings.PLATFORM_FEE_ADDRESSES = {"Sepolia": "0x8617E340B3D01FA5F11F306F4090FD50E238070D"}
    settings.CHAINWATCH_ENDPOINTS = {"Sepolia": {"rpc_url": "http://127.0.0.1:8545"}}
    settings.RATES_BUNDLED_ALLOWED = False  # its notice: tests/payments/test_rates_surfaces.py
    response = anon_client.get("/healthz")
    assert response.json()["notices"] == []


def test_the_notices_command_prints_one_line_each(settings):
    from io import StringIO

    from django.core.management import call_command

    settings.ENABLED_NETWORKS = ["Sepolia"]
    settings.PLATFORM_FEE_ADDRESSES = {}
    settings.CHAINWATCH_ENDPOINTS = {}
    settings.RATES_BUNDLED_ALLOWED = False  # its notice: tests/payments/test_rates_surfaces.py
    out = StringIO()
    call_command("notices", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 2 and all(line.startswith("Note: No ") for line in lines)


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0", HEALTHZ_BROKER_TIMEOUT_SECONDS=1)
def test_healthz_is_503_naming_the_broker_when_it_is_down(anon_client):
    response = anon_client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["failed"] == ["broker"]
    assert body["checks"]["database"] == "ok"


FULL = {"status", "checks", "failed", "notices", "detail"}


def test_the_public_gets_only_status_and_failed_the_operator_on_loopback_everything():
    public = Client(REMOTE_ADDR="203.0.113.7").get("/healthz")
    assert public.status_code == 200 and public.json() == {"status": "ok", "failed": []}
    operator = Client(REMOTE_ADDR="127.0.0.1").get("/healthz")
    assert set(operator.json()) == FULL and "webhooks" in operator.json()["detail"]


@override_settings(REST_FRAMEWORK={"NUM_PROXIES": 1})
def test_behind_the_proxy_the_client_it_vouches_for_decides_not_the_proxys_own_loopback_address():
    # nginx connects from loopback and appends the real client's address.
    remote = Client(REMOTE_ADDR="127.0.0.1").get("/healthz", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert set(remote.json()) == {"status", "failed"}
    # A client claiming to be loopback: nginx appends its real address after the claim.
    forged = Client(REMOTE_ADDR="127.0.0.1").get("/healthz", HTTP_X_FORWARDED_FOR="127.0.0.1, 203.0.113.7")
    assert set(forged.json()) == {"status", "failed"}
    local = Client(REMOTE_ADDR="127.0.0.1").get("/healthz", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert set(local.json()) == FULL


def test_a_proxy_the_service_was_not_told_about_makes_no_caller_loopback():
    # NUM_PROXIES 0 (the default) yet a forwarded request: the loopback peer is a proxy.
    response = Client(REMOTE_ADDR="127.0.0.1").get("/healthz", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert set(response.json()) == {"status", "failed"}


@override_settings(HEALTHZ_TOKEN="h" * 40)
def test_the_operators_token_in_the_authorization_header_opens_the_detail_from_anywhere():
    remote = Client(REMOTE_ADDR="203.0.113.7")
    assert set(remote.get("/healthz", HTTP_AUTHORIZATION=f"Bearer {'h' * 40}").json()) == FULL
    assert set(remote.get("/healthz", HTTP_AUTHORIZATION=f"Bearer {'h' * 39}x").json()) == {"status", "failed"}
    # Not in the query string, where access logs would keep it.
    assert set(remote.get("/healthz", {"token": "h" * 40}).json()) == {"status", "failed"}


@override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0", HEALTHZ_BROKER_TIMEOUT_SECONDS=1)
@pytest.mark.slow
def test_a_503_says_when_to_ask_again_and_tells_the_public_only_what_failed(settings):
    public = Client(REMOTE_ADDR="203.0.113.7").get("/healthz")
    assert public.status_code == 503 and public.json() == {"status": "fail", "failed": ["broker"]}
    assert public["Retry-After"] == str(settings.OUTAGE_RETRY_AFTER_SECONDS)
    operator = Client(REMOTE_ADDR="127.0.0.1").get("/healthz")
    assert operator.status_code == 503 and operator["Retry-After"] == str(settings.OUTAGE_RETRY_AFTER_SECONDS)


def test_healthz_fails_naming_rates_when_no_fiat_price_can_be_made_yet(settings):
    settings.RATES_BUNDLED_ALLOWED = False  # and no refresh has run: fiat-priced creation is refused
    public = Client(REMOTE_ADDR="203.0.113.7").get("/healthz")
    assert public.status_code == 503 and public.json() == {"status": "fail", "failed": ["rates"]}
    operator = Client(REMOTE_ADDR="127.0.0.1").get("/healthz").json()
    assert operator["failed"] == ["rates"]
    assert operator["checks"]["rates"].startswith("stale: no crypto rates fetched yet, no fx rates fetched yet")
    assert operator["detail"]["rates"]["tables"]["crypto"]["ageSeconds"] is None


def test_healthz_fails_naming_rates_with_their_age_once_older_than_the_limit(settings, live_rates):
    settings.RATES_BUNDLED_ALLOWED = False
    client = Client(REMOTE_ADDR="127.0.0.1")
    assert client.get("/healthz").json()["checks"]["rates"] == "ok"
    limit = settings.RATES_MAX_AGE_SECONDS
    with time_machine.travel(timezone.now() + timedelta(seconds=limit + 30), tick=False):
        response = client.get("/healthz")
    body = response.json()
    assert response.status_code == 503 and body["failed"] == ["rates"]
    age = limit + 30
    assert body["checks"]["rates"] == (
        f"stale: crypto rates {age} s old, fx rates {age} s old (limit {limit} s): fiat prices are refused"
    )
    assert body["detail"]["rates"]["tables"]["crypto"]["ageSeconds"] == limit + 30


def test_healthz_rates_stay_ok_when_the_operator_allows_the_bundled_table(settings):
    settings.RATES_BUNDLED_ALLOWED = True  # no live rates, but the bundled table prices, knowingly
    body = Client(REMOTE_ADDR="127.0.0.1").get("/healthz").json()
    assert body["checks"]["rates"] == "ok" and body["detail"]["rates"]["bundledInUse"] is True


@pytest.mark.parametrize("network", ["Regtest", "Signet"])
def test_healthz_and_notices_name_the_fee_variable_of_regtest_and_signet(anon_client, settings, network):
    from io import StringIO

    from django.core.management import call_command

    settings.ENABLED_NETWORKS = [network, "Testnet"]
    settings.PLATFORM_FEE_ADDRESSES = {}
    settings.CHAINWATCH_ENDPOINTS = {}
    settings.RATES_BUNDLED_ALLOWED = False
    notices = anon_client.get("/healthz").json()["notices"]
    assert notices[0].startswith(f"No fee address for {network}, Testnet:")
    assert f"FEE_ADDRESS_{network.upper()}=" in notices[0]
    out = StringIO()
    call_command("notices", stdout=out)
    assert f"FEE_ADDRESS_{network.upper()}=" in out.getvalue()
