"""The demo: anonymous drafts on test networks, capped and limited, never in fees, and (with the
simulator on) paid and confirmed through the same door the chain watchers use."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.test import override_settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from rest_framework.test import APIClient

from demo.api.serializers import DemoDraftResponseSerializer
from demo.services import demo_account
from demo.tasks import simulate_payments
from drafts.models import Draft
from fees.ledger import balance_of
from fees.models import AccruedFee
from tests.concurrency import run_at_once
from tests.drafts.conftest import ADDRESSES
from tests.factories import make_draft
from webhooks.models import Event

URL = "/api/v1/demo/drafts"
DEMO_ADDRESSES = {
    "Testnet": ADDRESSES["Testnet"],
    "Sepolia": ADDRESSES["Sepolia"],
    "BaseSepolia": ADDRESSES["BaseSepolia"],
    "SolanaDevnet": ADDRESSES["SolanaDevnet"],
}


@pytest.fixture(autouse=True)
def _demo_settings():
    with override_settings(
        DEMO_RECEIVING_ADDRESSES=DEMO_ADDRESSES,
        DEMO_RATE_LIMIT="1000/hour",
        API_RATE_LIMITS={"read": "10000/min", "write": "10000/min"},
    ):
        yield


def create(client=None, **body):
    return (client or APIClient()).post(URL, {"network": "Testnet", "currency": "BTC"} | body, format="json")


@pytest.mark.django_db
def test_the_config_lists_the_test_networks_with_a_demo_address_and_their_currencies(anon_client):
    with override_settings(DEMO_RECEIVING_ADDRESSES={"Testnet": ADDRESSES["Testnet"], "Sepolia": ADDRESSES["Sepolia"]}):
        body = anon_client.get("/api/v1/demo/config").json()

    assert body["enabled"] is True and body["expiryMinutes"] == 30
    networks = {n["network"]: n["currencies"] for n in body["networks"]}
    assert set(networks) == {"Testnet", "Sepolia"}
    assert networks["Testnet"] == ["BTC"] and "ETH" in networks["Sepolia"]
    assert body["simulatedPayments"] is False


@pytest.mark.django_db
def test_without_demo_addresses_the_demo_is_off_and_refuses_drafts(anon_client):
    with override_settings(DEMO_RECEIVING_ADDRESSES={}):
        assert anon_client.get("/api/v1/demo/config").json()["enabled"] is False
        response = create(anon_client)
    assert response.status_code == 400 and response.json()["code"] == "demo_network_unavailable"


@pytest.mark.django_db
def test_an_anonymous_visitor_opens_a_short_lived_demo_draft_paid_to_the_operators_demo_address():
    now = parse_datetime("2026-12-01T10:00:00Z")
    with time_machine.travel(now, tick=False):
        response = create()

    assert response.status_code == 201, response.json()
    body = response.json()
    assert set(body) == set(DemoDraftResponseSerializer().fields)
    assert response["Location"] == f"http://testserver/api/v1/demo/drafts/{body['id']}"
    assert (body["network"], body["currency"], body["status"]) == ("Testnet", "BTC", "Pending")
    assert body["receiverAddress"] == ADDRESSES["Testnet"]
    assert body["amountBaseUnits"] > 0 and body["amountFormatted"].startswith("0.0000")
    assert body["paymentUri"].startswith(f"bitcoin:{ADDRESSES['Testnet']}?amount=")
    assert body["expiresAt"] == "2026-12-01T10:30:00Z" and body["createdAt"] == "2026-12-01T10:00:00Z"
    assert (body["confirmations"], body["paidTxId"]) == (0, None)
    draft = Draft.objects.get(pk=body["id"])
    assert draft.user == demo_account() and draft.origin == "Demo"
    assert not demo_account().is_active and not demo_account().has_usable_password()
    # Never in fees: no fee output, nothing to accrue.
    assert (draft.fee_placement, draft.fee_base_units, draft.platform_fee_address) == ("Waived", 0, None)
    assert APIClient().get(response["Location"]).json() == body


@pytest.mark.django_db
@pytest.mark.parametrize(("network", "currency"), [("Sepolia", "ETH"), ("BaseSepolia", "ETH"), ("SolanaDevnet", "SOL")])
def test_demo_drafts_open_on_every_test_network(network, currency):
    response = create(network=network, currency=currency)

    assert response.status_code == 201, response.json()
    assert response.json()["receiverAddress"] == DEMO_ADDRESSES[network]


@pytest.mark.django_db
@pytest.mark.parametrize("network", ["Mainnet", "Ethereum", "Base", "Solana"])
def test_main_networks_are_refused_clearly(network):
    response = create(network=network, currency="USDC" if network != "Mainnet" else "BTC")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "demo_test_networks_only"
    assert body["errors"][0]["field"] == "network"
    assert "test networks only" in body["detail"]
    assert not Draft.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"currency": None}, "currency"),
        ({"network": "Dogecoin"}, "network"),
        ({"amountSats": 5}, "amountSats"),
        ({"network": "SolanaDevnet", "currency": "BTC"}, "currency"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(body, field):
    response = create(**body)

    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_an_account_someone_signed_up_with_the_demo_address_is_never_used_for_demo_drafts():
    from accounts.models import User

    User.objects.create_user("demo@demo.invalid", "a person's passphrase")

    response = create()

    assert response.status_code == 503 and response.json()["code"] == "demo_unavailable"
    assert not Draft.objects.exists()


@pytest.mark.django_db
def test_only_demo_drafts_can_be_read_here(owner):
    private = make_draft(owner)

    assert APIClient().get(f"{URL}/{private.id}").status_code == 404
    assert APIClient().get(f"{URL}/7d8d3a52-9c5e-4a1e-9a43-3f0f2f0f0f0f").status_code == 404
    assert APIClient().get(f"{URL}/not-a-uuid").status_code == 404


@pytest.mark.django_db
def test_credentials_sent_along_are_ignored_not_refused():
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer pdk_not_a_real_key")

    assert create(client).status_code == 201
    assert client.get("/api/v1/demo/config").status_code == 200


@pytest.mark.django_db
def test_open_demo_drafts_are_capped_in_total_and_a_closed_one_frees_a_place():
    with override_settings(DEMO_MAX_OPEN_DRAFTS=2):
        first = create(APIClient(REMOTE_ADDR="198.51.100.1"))
        create(APIClient(REMOTE_ADDR="198.51.100.2"))
        refused = create(APIClient(REMOTE_ADDR="198.51.100.3"))
        assert refused.status_code == 503
        assert refused.json()["code"] == "demo_busy"
        assert refused.json()["maxOpenDemoDrafts"] == 2

        Draft.objects.filter(pk=first.json()["id"]).update(status="Expired")
        assert create(APIClient(REMOTE_ADDR="198.51.100.3")).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_cannot_pass_the_cap_together():
    demo_account()
    with override_settings(DEMO_MAX_OPEN_DRAFTS=2):
        answers = run_at_once(5, lambda: create().status_code)

    assert sorted(answers) == [201, 201, 503, 503, 503]
    assert Draft.objects.filter(origin="Demo").count() == 2


@pytest.mark.django_db
def test_demo_drafts_are_limited_per_ip():
    with override_settings(DEMO_RATE_LIMIT="2/hour"):
        visitor = APIClient(REMOTE_ADDR="203.0.113.20")
        answers = [create(visitor).status_code for _ in range(3)]
        assert answers == [201, 201, 429]
        assert create(visitor, network="Sepolia", currency="ETH")["Retry-After"]
        assert create(APIClient(REMOTE_ADDR="203.0.113.21")).status_code == 201
        # Reading a draft is not a write: it stays possible.
        draft_id = Draft.objects.first().id
        assert visitor.get(f"{URL}/{draft_id}").status_code == 200


# --- The payment simulator ----------------------------------------------------------------


def at(seconds: float):
    return START + timedelta(seconds=seconds)


START = parse_datetime("2026-12-01T10:00:00Z")


def tick(seconds: float) -> int:
    with time_machine.travel(at(seconds), tick=False):
        return simulate_payments()


def status_of(draft_id: str) -> dict:
    return APIClient().get(f"{URL}/{draft_id}").json()


@pytest.mark.django_db
@override_settings(DEMO_SIMULATE_PAYMENTS=True, DEMO_SIMULATE_SEEN_AFTER_SECONDS=5, DEMO_SIMULATE_BLOCK_SECONDS=3)
@pytest.mark.parametrize(("network", "currency"), [("Testnet", "BTC"), ("Sepolia", "ETH")])
def test_with_the_simulator_on_a_demo_draft_walks_seen_then_confirmed_within_a_minute(network, currency):
    with time_machine.travel(START, tick=False):
        draft_id = create(network=network, currency=currency).json()["id"]
    required = status_of(draft_id)["requiredConfirmations"]

    tick(2)
    assert status_of(draft_id)["status"] == "Pending"
    tick(5)
    seen = status_of(draft_id)
    assert seen["status"] == "Seen" and seen["confirmations"] == 0 and seen["paidTxId"]
    tick(5 + 3)
    assert status_of(draft_id)["confirmations"] == min(1, required)
    for second in range(9, 60, 2):
        tick(second)
    done = status_of(draft_id)
    assert done["status"] == "Confirmed" and done["confirmations"] == required

    events = list(Event.objects.filter(draft_id=draft_id).order_by("created_at").values_list("type", flat=True))
    assert events == ["draft.created", "draft.seen", "draft.confirmed"]
    # Never counted in fees.
    assert not AccruedFee.objects.exists()
    assert balance_of(demo_account()).outstanding_usd == Decimal(0)


@pytest.mark.django_db
@override_settings(DEMO_SIMULATE_PAYMENTS=False)
def test_with_the_simulator_off_demo_drafts_wait_for_a_real_payment():
    with time_machine.travel(START, tick=False):
        draft_id = create().json()["id"]

    assert tick(60) == 0
    assert status_of(draft_id)["status"] == "Pending"


@pytest.mark.django_db
@override_settings(DEMO_SIMULATE_PAYMENTS=True)
def test_the_simulator_never_touches_a_merchants_draft_nor_an_expired_demo_draft(owner):
    merchant = make_draft(owner, created_at=timezone.now() - timedelta(minutes=5))
    with time_machine.travel(START, tick=False):
        expired_id = create().json()["id"]

    tick(31 * 60)  # past the demo draft's 30 minutes

    merchant.refresh_from_db()
    assert merchant.status == "Pending" and merchant.paid_tx_id is None
    assert status_of(expired_id)["status"] == "Pending"
