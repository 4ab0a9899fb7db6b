"""Test mode: test keys see and make only test objects on test networks, and the test helpers
pay, expire and reorg their drafts through the watchers' own door, so the account's test
webhooks get what a real payment gives."""

from __future__ import annotations

import json
from io import StringIO
from uuid import UUID

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import ApiKey
from fees.models import AccruedFee
from tests.accounts.test_api_keys_api import csrf_session
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.webhooks.conftest import deliver_due, loopback, make_receiver  # noqa: F401
from webhooks.models import Event

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _settings(settings, fake_dns):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    fake_dns.answers["localhost"] = ["127.0.0.1"]


@pytest.fixture
def test_client(make_key) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    return client


def sepolia_draft(client, **body) -> dict:
    body = {
        "network": "Sepolia",
        "currency": "USDC",
        "receiverAddress": ADDRESSES["Sepolia"],
        "amountSats": 25_000_000,
    } | body
    response = client.post("/api/v1/drafts", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def pay(client, draft_id, **body):
    return client.post(f"/api/v1/test-helpers/drafts/{draft_id}/pay", body, format="json")


def test_issue_api_key_with_test_mode_prints_a_test_key(owner):
    out = StringIO()
    call_command("issue_api_key", email=owner.email, scopes="drafts:read,drafts:write", test_mode=True, stdout=out)
    key = out.getvalue().strip()
    assert key.startswith("pdk_test_")
    assert ApiKey.objects.get(prefix=key[:12]).livemode is False


def test_a_session_creates_a_test_key_that_says_so(owner):
    session_client = csrf_session(owner)
    response = session_client.post("/api/v1/api-keys", {"scopes": ["drafts:read"], "testMode": True}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["key"].startswith("pdk_test_") and response.json()["livemode"] is False
    live = session_client.post("/api/v1/api-keys", {"scopes": ["drafts:read"]}, format="json").json()
    assert live["key"].startswith("pdk_") and not live["key"].startswith("pdk_test_") and live["livemode"] is True


def test_a_test_key_makes_test_drafts_on_test_networks_only(test_client):
    draft = sepolia_draft(test_client)
    assert draft["livemode"] is False

    response = test_client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"], "amountSats": 1000},
        format="json",
    )
    assert response.status_code == 400
    problem = response.json()
    assert problem["code"] == "live_network_in_test_mode"
    assert problem["errors"][0]["field"] == "network"


def test_live_and_test_keys_never_see_each_others_objects(api_client, test_client):
    live = sepolia_draft(api_client)
    test = sepolia_draft(test_client, amountSats=26_000_000)
    assert live["livemode"] is True

    assert api_client.get(f"/api/v1/drafts/{test['id']}").status_code == 404
    assert test_client.get(f"/api/v1/drafts/{live['id']}").status_code == 404
    assert [d["id"] for d in api_client.get("/api/v1/drafts").json()["items"]] == [live["id"]]
    assert [d["id"] for d in test_client.get("/api/v1/drafts").json()["items"]] == [test["id"]]


def test_a_live_key_cannot_use_the_test_helpers(api_client):
    draft = sepolia_draft(api_client)
    response = pay(api_client, draft["id"])
    assert response.status_code == 403
    assert response.json()["code"] == "test_mode_only"
    assert api_client.get(f"/api/v1/drafts/{draft['id']}").json()["status"] == "Pending"


def test_an_exact_payment_confirms_the_draft_with_its_events(test_client):
    draft = sepolia_draft(test_client)
    body = pay(test_client, draft["id"]).json()
    assert body["status"] == "Confirmed" and body["confirmations"] == body["requiredConfirmations"]
    types = list(Event.objects.filter(draft_id=draft["id"]).order_by("created_at").values_list("type", "livemode"))
    assert types == [("draft.created", False), ("draft.seen", False), ("draft.confirmed", False)]


def test_confirmations_zero_leaves_it_seen_and_a_reorg_sends_it_back_to_pending(test_client):
    draft = sepolia_draft(test_client)
    assert pay(test_client, draft["id"], confirmations=0).json()["status"] == "Seen"
    reverted = test_client.post(f"/api/v1/test-helpers/drafts/{draft['id']}/reorg").json()
    assert reverted["status"] == "Pending" and reverted["paidTxId"] is None
    assert Event.objects.filter(draft_id=draft["id"], type="draft.payment_reverted").exists()
    # then confirmed by a second call with the default depth
    assert pay(test_client, draft["id"]).json()["status"] == "Confirmed"


@pytest.mark.parametrize(
    ("outcome", "status", "received"),
    [
        ("short", "AmountMismatch", 23_750_000),
        ("over", "AmountMismatch", 26_250_000),
        ("split", "Confirmed", 25_000_000),
    ],
)
def test_each_outcome_gives_what_a_watcher_would(test_client, outcome, status, received):
    draft = sepolia_draft(test_client)
    body = pay(test_client, draft["id"], outcome=outcome).json()
    assert body["status"] == status
    assert body["receivedAmountSats"] == received
    assert len(body["paidTxIds"]) == (2 if outcome == "split" else 1)


def test_late_expires_first_then_pays(test_client):
    draft = sepolia_draft(test_client)
    body = pay(test_client, draft["id"], outcome="late").json()
    assert body["status"] == "Confirmed" and body["paidLate"] is True
    types = set(Event.objects.filter(draft_id=draft["id"]).values_list("type", flat=True))
    assert {"draft.expired", "draft.seen", "draft.confirmed"} <= types


def test_twice_keeps_the_first_payment_and_reports_the_second_as_a_watcher_would(test_client):
    from chainwatch.models import UnmatchedTransfer
    from webhooks.models import Event

    draft = sepolia_draft(test_client)
    body = pay(test_client, draft["id"], outcome="twice").json()
    assert body["status"] == "Confirmed" and len(body["paidTxIds"]) == 1
    [report] = UnmatchedTransfer.objects.all()
    assert report.candidate_draft_ids == [draft["id"]] and report.transfer.txid not in body["paidTxIds"]
    assert report.transfer.amount_base_units == draft["amountSats"]
    [event] = Event.objects.filter(type="transfer.unmatched")
    assert event.livemode is False and event.data["candidateDraftIds"] == [draft["id"]]
    listed = test_client.get("/api/v1/transfers").json()
    assert [t["txId"] for t in listed["items"]] == [report.transfer.txid]
    [again] = Event.objects.filter(type="draft.paid_again")  # reported on the draft it was meant for
    assert again.draft_id == UUID(draft["id"]) and again.livemode is False
    assert again.data["again"]["txId"] == report.transfer.txid


def test_twice_never_pays_another_draft_when_the_watcher_matches_the_second_transfer(test_client):
    from chainwatch.matching import match_network
    from chainwatch.models import ObservedTransfer

    draft = sepolia_draft(test_client, fiatCurrency="USD", fiatAmount=25, amountSats=None)
    other = sepolia_draft(test_client, fiatCurrency="USD", fiatAmount=25, amountSats=None)  # the same price
    assert 0 < other["amountSats"] - draft["amountSats"] <= 1000  # within 10% of the first's amount
    assert pay(test_client, draft["id"], outcome="twice").json()["status"] == "Confirmed"
    assert ObservedTransfer.objects.filter(draft__isnull=True).count() == 1  # the second transfer
    match_network(network="Sepolia", head=None)  # the watcher's next pass over the test network
    body = test_client.get(f"/api/v1/drafts/{other['id']}").json()
    assert body["status"] == "Pending"
    assert not Event.objects.filter(type="draft.amount_mismatch").exists()


def test_expire_and_bad_input(test_client):
    draft = sepolia_draft(test_client)
    bad = pay(test_client, draft["id"], outcome="sideways")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "outcome"
    assert pay(test_client, draft["id"], confirmations=-1).status_code == 400
    assert test_client.post(f"/api/v1/test-helpers/drafts/{draft['id']}/expire").json()["status"] == "Expired"
    again = test_client.post(f"/api/v1/test-helpers/drafts/{draft['id']}/expire")
    assert again.status_code == 409 and again.json()["code"] == "expire_not_allowed"


def test_test_fees_never_accrue(test_client):
    # SingleOutput on Sepolia: the platform fee accrues for a live draft
    draft = sepolia_draft(test_client)
    assert pay(test_client, draft["id"]).json()["status"] == "Confirmed"
    assert not AccruedFee.objects.exists()
    assert test_client.get("/api/v1/fees/accrued").json()["draftCount"] == 0


def test_the_test_accounts_webhook_receives_seen_and_confirmed(owner, api_client, test_client, make_receiver, loopback):  # noqa: F811
    test_receiver, live_receiver = make_receiver(), make_receiver()
    test_endpoint = test_client.post("/api/v1/webhooks", {"url": test_receiver.url}, format="json").json()
    live_endpoint = api_client.post("/api/v1/webhooks", {"url": live_receiver.url}, format="json").json()
    assert test_endpoint["livemode"] is False and live_endpoint["livemode"] is True
    assert [w["id"] for w in test_client.get("/api/v1/webhooks").json()["items"]] == [test_endpoint["id"]]

    draft = sepolia_draft(test_client)
    pay(test_client, draft["id"])
    while deliver_due():  # a tick per attempt in flight, as beat would
        pass

    assert live_receiver.requests == []  # a live endpoint never hears of test objects
    delivered = [json.loads(r.body) for r in test_receiver.requests]
    assert sorted(body["event"] for body in delivered) == ["draft.confirmed", "draft.created", "draft.seen"]
    confirmed = next(body for body in delivered if body["event"] == "draft.confirmed")
    assert confirmed["data"]["draftId"] == draft["id"] and confirmed["data"]["livemode"] is False


def test_llms_txt_teaches_test_mode(anon_client):
    text = anon_client.get("/llms.txt").content.decode()
    assert "pdk_test_" in text and "--test-mode" in text
    assert "/api/v1/test-helpers/drafts/{id}/pay" in text and "test_pay_draft" in text
    assert all(f"`{outcome}`" in text for outcome in ("exact", "short", "over", "split", "twice", "late"))


def test_an_idempotency_key_of_one_mode_never_replays_the_other_modes_answer(api_client, test_client):
    live = api_client.post(
        "/api/v1/drafts",
        {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 30_000_000},
        format="json",
        HTTP_IDEMPOTENCY_KEY="order-7",
    ).json()
    test = test_client.post(
        "/api/v1/drafts",
        {"network": "Sepolia", "currency": "USDC", "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 31_000_000},
        format="json",
        HTTP_IDEMPOTENCY_KEY="order-7",
    )
    assert test.status_code == 201 and test.json()["id"] != live["id"] and test.json()["livemode"] is False


def test_a_test_template_makes_test_drafts_and_refuses_a_main_network(test_client):
    from recurring.tasks import run_due

    body = {"interval": "Daily", "draft": {"network": "Sepolia", "currency": "USDC",
            "receiverAddress": ADDRESSES["Sepolia"], "amountSats": 9_000_000}}  # fmt: skip
    template = test_client.post("/api/v1/recurring-templates", body, format="json")
    assert template.status_code == 200, template.content
    assert template.json()["livemode"] is False
    run_due()
    made = test_client.get("/api/v1/drafts").json()["items"]
    assert [d["livemode"] for d in made] == [False] and made[0]["amountSats"] == 9_000_000

    main = body | {"draft": body["draft"] | {"network": "Base", "receiverAddress": ADDRESSES["Base"]}}
    refused = test_client.post("/api/v1/recurring-templates", main, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "draft.network"


def test_a_test_pay_link_refuses_a_main_network_option(test_client):
    body = {"fiatCurrency": "EUR", "fiatAmount": 5,
            "options": [{"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]}]}  # fmt: skip
    refused = test_client.post("/api/v1/payment-requests", body, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "options[0].network"
