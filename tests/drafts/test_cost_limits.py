"""Costly operations (PDF, transaction template, batch creation, CSV export) have their own
budgets per API key and per account, apart from the read/write budget of cheap requests."""

from __future__ import annotations

import time

import pytest
import time_machine
from django.test import Client, override_settings
from redis.connection import AbstractConnection
from rest_framework.test import APIClient

from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db

USDC = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 1_000}
SMALL = {
    "pdf": {"key": "3/min", "account": "5/min"},
    "tx-template": {"key": "2/min", "account": "3/min"},
    "batch": {"key": "2/min", "account": "3/min"},
    "csv": {"account": "2/min"},
}


@pytest.fixture(autouse=True)
def _start_of_a_minute():
    """Budgets count in whole-minute windows: start each test at the start of the next minute,
    with the clock running, so no test straddles two windows."""
    with time_machine.travel((time.time() // 60 + 1) * 60 + 0.5, tick=True):
        yield


def _client(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def draft_id(api_client) -> str:
    return api_client.post("/api/v1/drafts", USDC, format="json").json()["id"]


@pytest.fixture
def btc_draft_id(api_client) -> str:
    body = {"network": "Mainnet", "currency": "BTC", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 100_000}
    return api_client.post("/api/v1/drafts", body, format="json").json()["id"]


@pytest.mark.slow
def test_eighty_pdfs_from_one_key_meet_a_429_with_retry_after(api_client, draft_id, other_account, make_key):
    # The read budget is set far above 80 (tests/drafts/conftest.py): only the PDF class stops this.
    statuses = []
    # The clock stands still: eighty PDFs can take minutes on a loaded machine, and each new
    # minute would open a new window of 20.
    with time_machine.travel(time.time(), tick=False):
        for _ in range(80):
            response = api_client.get(f"/api/v1/drafts/{draft_id}/pdf")
            statuses.append(response.status_code)
            if response.status_code == 429:
                refused = response
    assert statuses.count(200) == 20 and statuses[20:] == [429] * 60  # API_RATE_LIMIT_PDF_PER_KEY: 20/min
    assert refused["Content-Type"] == "application/problem+json"
    assert 1 <= int(refused["Retry-After"]) <= 60
    body = refused.json()
    assert body["code"] == "rate_limited" and body["limit"] == "pdf" and body["per"] == "key"
    # Cheap reads of the same key go on, and another account's PDFs are its own budget.
    assert api_client.get(f"/api/v1/drafts/{draft_id}").status_code == 200
    stranger = _client(make_key("drafts:read", "drafts:write", user=other_account))
    theirs = stranger.post("/api/v1/drafts", USDC, format="json").json()["id"]
    assert stranger.get(f"/api/v1/drafts/{theirs}/pdf").status_code == 200


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_more_keys_buy_no_more_pdfs_than_the_account_budget(api_client, draft_id, make_key):
    first, second = api_client, _client(make_key("drafts:read"))
    assert [first.get(f"/api/v1/drafts/{draft_id}/pdf").status_code for _ in range(4)] == [200, 200, 200, 429]
    assert [second.get(f"/api/v1/drafts/{draft_id}/pdf").status_code for _ in range(2)] == [200, 200]
    refused = _client(make_key("drafts:read")).get(f"/api/v1/drafts/{draft_id}/pdf")
    assert refused.status_code == 429 and refused.json()["per"] == "account" and refused.json()["limit"] == "pdf"


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_a_key_refused_by_its_own_budget_spends_none_of_the_accounts(api_client, draft_id, make_key):
    for _ in range(10):
        api_client.get(f"/api/v1/drafts/{draft_id}/pdf")  # 3 served, 7 refused per key
    other = _client(make_key("drafts:read"))
    assert [other.get(f"/api/v1/drafts/{draft_id}/pdf").status_code for _ in range(3)] == [200, 200, 429]


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_tx_templates_have_their_own_budget(api_client, btc_draft_id, draft_id):
    statuses = [api_client.get(f"/api/v1/drafts/{btc_draft_id}/tx-template").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    refused = api_client.get(f"/api/v1/drafts/{btc_draft_id}/tx-template")
    assert refused.json()["limit"] == "tx-template" and refused.has_header("Retry-After")
    # Neither PDFs nor cheap reads are spent by it.
    assert api_client.get(f"/api/v1/drafts/{draft_id}/pdf").status_code == 200
    assert api_client.get(f"/api/v1/drafts/{draft_id}/status").status_code == 200


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_batches_have_their_own_budget_and_single_creations_are_not_in_it(api_client):
    def batch(amount: int):
        body = {"items": [{"draft": USDC | {"amountSats": amount}}]}
        return api_client.post("/api/v1/drafts/batch", body, format="json")

    assert [batch(2_000 + i).status_code for i in range(3)] == [200, 200, 429]
    refused = batch(3_000)
    assert refused.json()["limit"] == "batch" and refused.has_header("Retry-After")
    assert api_client.post("/api/v1/drafts", USDC | {"amountSats": 4_000}, format="json").status_code == 201


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_a_costly_answer_advertises_its_class_budget_beside_the_read_budget(api_client, draft_id):
    response = api_client.get(f"/api/v1/drafts/{draft_id}/pdf")
    assert response["RateLimit-Policy"] == '"read";q=10000;w=60, "pdf";q=3;w=60, "pdf-account";q=5;w=60'
    assert response["RateLimit"].count(";r=") == 3 and '"pdf";r=2;' in response["RateLimit"]


def test_a_cheap_request_makes_no_more_redis_round_trips_than_before(api_client, draft_id, monkeypatch):
    sent = []
    original = AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):
        sent.append(command)
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    api_client.get(f"/api/v1/drafts/{draft_id}")
    read = len(sent)
    sent.clear()
    api_client.get(f"/api/v1/drafts/{draft_id}/pdf")
    assert read == 1  # the key check, which counts the read budget in the same round trip
    assert len(sent) == 2  # a PDF adds one: its key and account budgets, counted together


@override_settings(API_COST_RATE_LIMITS=SMALL)
def test_the_dashboards_downloads_share_the_accounts_budgets_with_its_keys(api_client, draft_id, btc_draft_id, owner):
    browser = Client()
    browser.force_login(owner)
    assert [api_client.get(f"/api/v1/drafts/{draft_id}/pdf").status_code for _ in range(3)] == [200] * 3
    assert [browser.get(f"/dashboard/drafts/{draft_id}/pdf").status_code for _ in range(3)] == [200, 200, 429]
    refused = browser.get(f"/dashboard/drafts/{draft_id}/pdf")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert "PDF" in refused.content.decode()
    template = f"/dashboard/drafts/{btc_draft_id}/tx-template.json"
    assert [browser.get(template).status_code for _ in range(4)] == [200, 200, 200, 429]
    csv = [browser.get("/dashboard/drafts/?format=csv").status_code for _ in range(3)]
    assert csv == [200, 200, 429]
    assert browser.get("/dashboard/drafts/").status_code == 200  # the page itself is a cheap read
