"""Refunds live in their draft's mode: a test key sees, approves and cancels only test refunds
(and a live key only live ones), a test refund's payout draft is a test draft the test helpers
pay, its events go to test endpoints only and its emails are marked as tests; a refund pays out
on the side (main or test networks) its payment came in on."""

from __future__ import annotations

import pytest
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from core.problems import Problem
from drafts.models import Draft
from notifications.models import EmailNotification
from notifications.services import emails_send_due
from refunds.models import Refund
from refunds.services import refund_approve, refund_claim
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.refunds.conftest import CUSTOMER
from webhooks.models import Delivery, Event, Webhook

pytestmark = pytest.mark.django_db

SEPOLIA_CUSTOMER = CUSTOMER["Ethereum"]  # an EVM address is the same on both sides
TESTNET_CUSTOMER = ADDRESSES["Signet"]  # Signet and Testnet share their encodings


@pytest.fixture(autouse=True)
def _settings(settings):
    settings.PLATFORM_FEE_ADDRESSES = FEE_ADDRESSES


@pytest.fixture
def test_client(make_key) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key(livemode=False)}")
    return client


def paid_test_draft(client: APIClient, **body) -> dict:
    """A test draft (25 USDC on Sepolia unless told), paid through the test helpers."""
    body = {
        "network": "Sepolia",
        "currency": "USDC",
        "receiverAddress": ADDRESSES["Sepolia"],
        "amountSats": 25_000_000,
    } | body
    created = client.post("/api/v1/drafts", body, format="json")
    assert created.status_code == 201, created.json()
    paid = client.post(f"/api/v1/test-helpers/drafts/{created.json()['id']}/pay", {}, format="json")
    assert paid.json()["status"] == "Confirmed", paid.json()
    return paid.json()


def issue(client: APIClient, draft_id: str, **body):
    if not {"amountSats", "fiatAmount"} & body.keys():
        body["full"] = True
    return client.post("/api/v1/refunds", {"draftId": draft_id} | body, format="json")


def claim(anon_client, refund: dict, address: str):
    token = refund["claimUrl"].rsplit("/", 1)[1]
    return anon_client.post(f"/api/v1/refund-claims/{token}", {"refundAddress": address}, format="json")


def test_a_test_refund_reaches_paid_with_a_test_key_and_the_test_helpers(test_client, anon_client):
    draft = paid_test_draft(test_client)
    created = issue(test_client, draft["id"])
    assert created.status_code == 201, created.json()
    refund = created.json()
    assert refund["livemode"] is False and refund["network"] == "Sepolia"
    assert claim(anon_client, refund, SEPOLIA_CUSTOMER).json()["status"] == "Claimed"

    approved = test_client.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert approved.status_code == 200, approved.json()
    payout_id = approved.json()["payout"]["draftId"]
    payout = test_client.get(f"/api/v1/drafts/{payout_id}")
    assert payout.status_code == 200 and payout.json()["livemode"] is False  # the test key sees its payout

    paid = test_client.post(f"/api/v1/test-helpers/drafts/{payout_id}/pay", {}, format="json")
    assert paid.status_code == 200, paid.json()
    assert paid.json()["status"] == "Confirmed"
    shown = test_client.get(f"/api/v1/refunds/{refund['id']}").json()
    assert shown["status"] == "Paid" and shown["payout"]["txId"] == paid.json()["paidTxId"]


def test_the_modes_never_see_each_others_refunds(api_client, test_client, paid_draft):
    live = issue(api_client, str(paid_draft().id)).json()
    test = issue(test_client, paid_test_draft(test_client)["id"]).json()
    assert (live["livemode"], test["livemode"]) == (True, False)

    assert [r["id"] for r in test_client.get("/api/v1/refunds").json()["items"]] == [test["id"]]
    assert [r["id"] for r in api_client.get("/api/v1/refunds").json()["items"]] == [live["id"]]
    assert test_client.get("/api/v1/refunds").json()["total"] == 1
    for client, other in ((test_client, live), (api_client, test)):
        assert client.get(f"/api/v1/refunds/{other['id']}").status_code == 404
        assert client.post(f"/api/v1/refunds/{other['id']}/approve").status_code == 404
        assert client.post(f"/api/v1/refunds/{other['id']}/cancel").status_code == 404
    assert set(Refund.objects.values_list("status", flat=True)) == {"Claimable"}  # nothing was touched


def test_a_test_key_cannot_refund_a_live_draft(api_client, test_client, paid_draft):
    refused = issue(test_client, str(paid_draft().id))
    assert refused.status_code == 404 and refused.json()["errors"][0]["field"] == "draftId"
    assert not Refund.objects.exists()


def test_the_dashboard_in_test_mode_shows_and_acts_on_test_refunds_only(owner, api_client, test_client, paid_draft):
    live = issue(api_client, str(paid_draft().id), reason="live refund").json()
    test = issue(test_client, paid_test_draft(test_client)["id"], reason="test refund").json()
    merchant = Client()
    merchant.force_login(owner)

    page = merchant.get("/dashboard/refunds/").content.decode()
    assert live["id"] in page and test["id"] not in page
    assert merchant.get(f"/dashboard/refunds/{test['id']}/").status_code == 404

    assert merchant.post("/dashboard/mode", {"testMode": "on"}).status_code == 302
    page = merchant.get("/dashboard/refunds/").content.decode()
    assert test["id"] in page and live["id"] not in page
    assert merchant.get(f"/dashboard/refunds/{live['id']}/").status_code == 404
    assert merchant.post(f"/dashboard/refunds/{live['id']}/cancel").status_code == 404
    assert Refund.objects.get(pk=live["id"]).status == "Claimable"
    assert merchant.post(f"/dashboard/refunds/{test['id']}/cancel").status_code == 302
    assert Refund.objects.get(pk=test["id"]).status == "Cancelled"


def test_a_test_refunds_events_and_its_payouts_go_to_test_endpoints_only(owner, test_client, anon_client):
    wanted = ["refund.created", "refund.claimed", "refund.approved", "refund.paid", "draft.created"]
    live_hook = Webhook.objects.create(
        user=owner, url="https://live.example/h", events=wanted, secret="s", livemode=True
    )
    test_hook = Webhook.objects.create(
        user=owner, url="https://test.example/h", events=wanted, secret="s", livemode=False
    )
    refund = issue(test_client, paid_test_draft(test_client)["id"]).json()
    claim(anon_client, refund, SEPOLIA_CUSTOMER)
    payout_id = test_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()["payout"]["draftId"]
    test_client.post(f"/api/v1/test-helpers/drafts/{payout_id}/pay", {}, format="json")

    refund_events = Event.objects.filter(type__startswith="refund.")
    assert sorted(refund_events.values_list("type", "livemode")) == [
        ("refund.approved", False),
        ("refund.claimed", False),
        ("refund.created", False),
        ("refund.paid", False),
    ]
    assert Event.objects.get(type="draft.created", draft_id=payout_id).livemode is False
    assert not Delivery.objects.filter(webhook=live_hook).exists()
    delivered = set(Delivery.objects.filter(webhook=test_hook).values_list("event__type", flat=True))
    assert {"refund.created", "refund.claimed", "refund.approved", "refund.paid", "draft.created"} <= delivered


def test_a_test_refunds_emails_are_marked_and_stay_with_the_account(owner, test_client, anon_client, settings):
    refund = issue(test_client, paid_test_draft(test_client)["id"], customerEmail="buyer@example.com").json()
    claim(anon_client, refund, SEPOLIA_CUSTOMER)
    link = EmailNotification.objects.get(kind="refund_claim_link")
    assert link.to == owner.email  # never the address typed in, unless the operator allows it
    mail.outbox.clear()
    emails_send_due(limit=100)
    # the claim link, the "claimed" notice, and the test draft's own notices: all to the account, all marked
    assert len(mail.outbox) >= 2 and {m.to[0] for m in mail.outbox} == {owner.email}
    for message in mail.outbox:
        assert message.subject.startswith("[TEST] ") and message.extra_headers["X-Test-Mode"] == "true"

    settings.TEST_MODE_CUSTOMER_EMAILS = True
    again = issue(
        test_client, paid_test_draft(test_client, amountSats=24_000_000)["id"], customerEmail="buyer@example.com"
    )
    assert again.status_code == 201, again.json()
    allowed = EmailNotification.objects.filter(kind="refund_claim_link").exclude(pk=link.pk).get()
    assert allowed.to == "buyer@example.com"
    mail.outbox.clear()
    emails_send_due(limit=100)
    [message] = [m for m in mail.outbox if m.to == ["buyer@example.com"]]
    assert message.subject.startswith("[TEST] ")


def test_a_live_refunds_emails_are_unchanged(api_client, paid_draft):
    issue(api_client, str(paid_draft().id), customerEmail="buyer@example.com")
    mail.outbox.clear()
    emails_send_due(limit=100)
    [message] = [m for m in mail.outbox if m.to == ["buyer@example.com"]]
    assert not message.subject.startswith("[TEST]")
    assert "X-Test-Mode" not in message.extra_headers


# --- The side a refund pays out on ------------------------------------------------------------


def test_a_test_payment_never_funds_a_main_network_refund(test_client):
    draft = paid_test_draft(test_client)
    refused = issue(test_client, draft["id"], currency="BTC", network="Mainnet")
    assert refused.status_code == 400, refused.json()
    assert refused.json()["code"] == "refund_network_mismatch"
    assert refused.json()["errors"][0]["field"] == "network"
    assert not Refund.objects.exists()


def test_a_live_testnet_payment_never_funds_a_mainnet_refund(api_client, paid_draft):
    live = paid_draft()  # 25 USDC on Ethereum
    # 0.12 Sepolia ETH, paid to a live draft (a live key keeps the test networks)
    draft = paid_draft(network="Sepolia", currency="ETH", receiverAddress=ADDRESSES["Sepolia"],
                       amountSats=120_000_000_000_000_000)  # fmt: skip
    refused = issue(api_client, str(draft.id), currency="BTC", network="Mainnet", fiatCurrency="USD", fiatAmount="500")
    assert refused.status_code == 400, refused.json()
    assert refused.json()["code"] == "refund_network_mismatch"
    assert refused.json()["errors"][0]["field"] == "network"
    # and the reverse: a main-network payment is refunded on main networks only
    reverse = issue(api_client, str(live.id), network="Sepolia")
    assert reverse.status_code == 400 and reverse.json()["code"] == "refund_network_mismatch"
    assert issue(api_client, str(live.id), network="Base").status_code == 201  # another main network is fine
    assert Refund.objects.count() == 1


def test_a_claim_with_an_address_of_the_other_side_is_a_network_mismatch(test_client, anon_client):
    body = {"network": "Testnet", "currency": "BTC", "receiverAddress": ADDRESSES["Testnet"], "amountSats": 150_000}
    created = test_client.post("/api/v1/drafts", body, format="json").json()
    test_client.post(f"/api/v1/test-helpers/drafts/{created['id']}/pay", {}, format="json")
    refund = issue(test_client, created["id"]).json()

    refused = claim(anon_client, refund, CUSTOMER["Mainnet"])  # a real Bitcoin address for a Testnet refund
    assert refused.status_code == 400, refused.json()
    assert refused.json()["code"] == "refund_network_mismatch"
    assert refused.json()["errors"][0]["field"] == "refundAddress"
    assert Refund.objects.get(pk=refund["id"]).status == "Claimable"
    assert claim(anon_client, refund, TESTNET_CUSTOMER).json()["status"] == "Claimed"


def test_approval_refuses_a_refund_issued_on_the_other_side_before_the_rule(test_client, anon_client):
    refund = issue(test_client, paid_test_draft(test_client)["id"]).json()
    claim(anon_client, refund, SEPOLIA_CUSTOMER)
    Refund.objects.filter(pk=refund["id"]).update(network="Ethereum")  # as the old code let a test key do
    row = Refund.objects.get(pk=refund["id"])
    with pytest.raises(Problem) as refused:
        refund_approve(refund=row)
    assert refused.value.code == "refund_network_mismatch"
    assert Refund.objects.get(pk=refund["id"]).status == "Claimed"
    assert not Draft.objects.filter(origin="Refund").exists()
    answer = test_client.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "network"


def test_the_claim_page_and_api_say_a_test_refund_is_a_test(api_client, test_client, anon_client, paid_draft):
    test = issue(test_client, paid_test_draft(test_client)["id"]).json()
    live = issue(api_client, str(paid_draft().id)).json()
    for refund, livemode in ((test, False), (live, True)):
        token = refund["claimUrl"].rsplit("/", 1)[1]
        assert anon_client.get(f"/api/v1/refund-claims/{token}").json()["livemode"] is livemode
        html = Client().get(f"/refund/{token}").content.decode()
        assert ("Test mode: no real funds move." in html) is not livemode
    token = test["claimUrl"].rsplit("/", 1)[1]
    german = Client().get(f"/refund/{token}", HTTP_ACCEPT_LANGUAGE="de").content.decode()
    assert 'class="testmode"' in german and "Test mode: no real funds move." not in german  # translated


def test_the_dashboard_in_test_mode_issues_and_approves_a_test_refund_into_a_test_payout(owner, test_client):
    draft = paid_test_draft(test_client)
    merchant = Client()
    merchant.force_login(owner)
    merchant.post("/dashboard/mode", {"testMode": "on"})
    form = {"kind": "full", "currency": "BTC", "network": "Mainnet", "expiryHours": 336}
    wrong_side = merchant.post(f"/dashboard/drafts/{draft['id']}/refund", form)
    assert wrong_side.status_code == 200 and "a test network" in wrong_side.content.decode()
    assert not Refund.objects.exists()

    issued = merchant.post(f"/dashboard/drafts/{draft['id']}/refund", form | {"currency": "USDC", "network": "Sepolia"})
    assert issued.status_code == 302, issued.content.decode()[:2000]
    refund = Refund.objects.get()
    assert refund.livemode is False
    refund_claim(token=refund.token, refund_address=SEPOLIA_CUSTOMER)
    assert merchant.post(f"/dashboard/refunds/{refund.id}/approve").status_code == 302
    refund.refresh_from_db()
    assert refund.status == "Approved" and refund.payout_draft.livemode is False
    assert merchant.get(f"/dashboard/drafts/{refund.payout_draft_id}/").status_code == 200
