import pytest
from django.test import override_settings

pytestmark = pytest.mark.django_db


def test_healthz_is_ok_when_the_database_cache_and_broker_answer_and_nothing_waits(anon_client):
    response = anon_client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert {k: body[k] for k in ("status", "checks", "failed")} == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "ok", "broker": "ok", "webhooks": "ok", "emails": "ok"},
        "failed": [],
    }
    assert body["detail"]["webhooks"] == {"backlog": 0, "oldestDueAgeSeconds": None}
    assert body["detail"]["emails"] == {"backlog": 0, "oldestDueAgeSeconds": None}


def test_healthz_stays_ok_while_naming_what_is_off_and_how_to_turn_it_on(anon_client, settings):
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


def test_healthz_has_no_notice_once_fee_addresses_and_nodes_are_set(anon_client, settings):
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
