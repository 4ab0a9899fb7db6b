"""Refunds through the REST API: issue (full, partial, another asset, fiat-priced), claim,
approve into a payout draft, paid when the chain shows the payout, cancel, expire."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from drafts.models import Draft
from notifications.models import EmailNotification
from refunds.models import Refund
from refunds.services import refunds_expire_due
from tests.refunds.conftest import CUSTOMER, pay
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def claim(anon_client, refund: dict, address: str):
    token = refund["claimUrl"].rsplit("/", 1)[1]
    return anon_client.post(f"/api/v1/refund-claims/{token}", {"refundAddress": address}, format="json")


def test_a_full_refund_walks_from_claim_link_to_paid_through_the_payout_draft(
    api_client, anon_client, paid_draft, issue
):
    draft = paid_draft()
    created = issue(draft, full=True, reason="Order cancelled", customerEmail="buyer@example.com")
    assert created.status_code == 201, created.json()
    refund = created.json()
    assert created["Location"].endswith(f"/api/v1/refunds/{refund['id']}")
    assert (refund["status"], refund["currency"], refund["network"]) == ("Claimable", "USDC", "Ethereum")
    assert (refund["amountSats"], refund["amount"], refund["shareBaseUnits"]) == (25_000_000, "25.000000", 25_000_000)
    link_email = EmailNotification.objects.get(kind="refund_claim_link")
    assert link_email.to == "buyer@example.com" and link_email.context["url"] == refund["claimUrl"]

    claimed = claim(anon_client, refund, CUSTOMER["Ethereum"].lower())
    assert claimed.status_code == 200, claimed.json()
    assert claimed.json()["status"] == "Claimed"
    assert claimed.json()["refundAddress"] == CUSTOMER["Ethereum"]  # checksummed by the validator
    assert EmailNotification.objects.filter(kind="refund_claimed").count() == 1

    approved = api_client.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert approved.status_code == 200, approved.json()
    payout = approved.json()["payout"]
    assert approved.json()["status"] == "Approved"
    assert approved.json()["amountSats"] == 25_000_000 and approved.json()["refundAddress"] == CUSTOMER["Ethereum"]
    assert payout["paymentUri"].startswith("ethereum:") and CUSTOMER["Ethereum"].lower() in payout["paymentUri"].lower()
    assert payout["txTemplateUrl"] is None  # Bitcoin only
    outgoing = Draft.objects.get(pk=payout["draftId"])
    assert (outgoing.receiver_address, outgoing.amount_base_units) == (CUSTOMER["Ethereum"], 25_000_000)
    assert (outgoing.origin, outgoing.method, outgoing.status) == ("Refund", "SingleOutput", "Pending")
    assert outgoing.fee_base_units in (None, 0) and outgoing.platform_fee["placement"] == "Waived"  # no fee on a refund

    pay(outgoing, tx_id="0x" + "cd" * 32)  # the watcher's door
    shown = api_client.get(f"/api/v1/refunds/{refund['id']}").json()
    assert shown["status"] == "Paid" and shown["payout"]["txId"] == "0x" + "cd" * 32 and shown["paidAt"]
    types = list(Event.objects.filter(type__startswith="refund.").order_by("created_at").values_list("type", flat=True))
    assert types == ["refund.created", "refund.claimed", "refund.approved", "refund.paid"]
    assert EmailNotification.objects.filter(kind="refund_paid").count() == 1


def test_partial_refunds_may_not_together_exceed_the_payment(paid_draft, issue):
    draft = paid_draft()
    assert issue(draft, amountSats=20_000_000).status_code == 201
    over = issue(draft, amountSats=5_000_001)
    assert over.status_code == 400
    problem = over.json()
    assert problem["code"] == "exceeds_refundable" and problem["refundableBaseUnits"] == 5_000_000
    assert problem["errors"][0]["field"] == "amountSats"
    assert issue(draft, amountSats=5_000_000).status_code == 201
    assert issue(draft, full=True).json()["code"] == "exceeds_refundable"
    assert Refund.objects.count() == 2  # nothing written by the refused ones


def test_a_cancelled_refund_frees_its_share(api_client, paid_draft, issue):
    draft = paid_draft()
    first = issue(draft, full=True).json()
    assert api_client.post(f"/api/v1/refunds/{first['id']}/cancel").json()["status"] == "Cancelled"
    assert issue(draft, full=True).status_code == 201


def test_a_refund_in_another_asset_is_valued_in_the_paid_asset(api_client, anon_client, paid_draft, issue):
    draft = paid_draft()
    created = issue(draft, currency="USDC", network="Base", amountSats=10_000_000)
    assert created.status_code == 201, created.json()
    refund = created.json()
    assert refund["network"] == "Base"
    assert 9_000_000 < refund["shareBaseUnits"] < 11_000_000  # USDC is about USDC, through USD quotes
    claim(anon_client, refund, CUSTOMER["Base"])
    payout = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()["payout"]
    assert Draft.objects.get(pk=payout["draftId"]).network == "Base"


def test_a_fiat_priced_refund_is_converted_when_the_merchant_approves(api_client, anon_client, paid_draft, issue):
    draft = paid_draft()
    created = issue(draft, fiatCurrency="eur", fiatAmount="5.00")
    assert created.status_code == 201, created.json()
    refund = created.json()
    assert (refund["fiatCurrency"], refund["fiatAmount"], refund["amountSats"]) == ("EUR", 5, None)
    assert refund["shareBaseUnits"] > 0
    claim(anon_client, refund, CUSTOMER["Ethereum"])
    approved = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()
    outgoing = Draft.objects.get(pk=approved["payout"]["draftId"])
    assert outgoing.fiat_currency == "EUR" and outgoing.rate is not None  # the quote locked at approval
    assert approved["amountSats"] == outgoing.amount_base_units


def test_a_bitcoin_refund_offers_the_tx_template(api_client, anon_client, paid_draft, issue):
    from tests.drafts.conftest import ADDRESSES

    draft = paid_draft(network="Mainnet", currency="BTC", receiverAddress=ADDRESSES["Mainnet"], amountSats=150_000)
    refund = issue(draft, amountSats=100_000).json()
    claim(anon_client, refund, CUSTOMER["Mainnet"])
    payout = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()["payout"]
    assert payout["paymentUri"] == f"bitcoin:{CUSTOMER['Mainnet']}?amount=0.001&message=Refund"
    template = api_client.get(payout["txTemplateUrl"])
    assert template.status_code == 200, template.json()
    outputs = template.json()["outputs"]
    assert [(o["address"], o["amountSats"]) for o in outputs] == [(CUSTOMER["Mainnet"], 100_000)]  # single output


@pytest.mark.parametrize(
    "body, field, code",
    [
        ({}, "amountSats", "required"),
        ({"full": True, "amountSats": 5}, "amountSats", "ambiguous"),
        ({"amountSats": 0}, "amountSats", "min_value"),
        ({"fiatAmount": "5"}, "fiatCurrency", "required"),
        ({"fiatCurrency": "XXQ", "fiatAmount": "5"}, "fiatCurrency", "unknown_fiat_currency"),
        ({"fiatCurrency": "EUR", "fiatAmount": "5.001"}, "fiatAmount", "too_precise"),
        ({"currency": "USDT", "network": "Solana", "amountSats": 5}, "network", "network_disabled"),
        ({"currency": "ETH", "network": "Mainnet", "amountSats": 5}, "network", "unsupported_combination"),
        ({"amountSats": 5, "extra": 1}, "extra", None),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(paid_draft, issue, settings, body, field, code):
    settings.ENABLED_NETWORKS = [n for n in settings.ENABLED_NETWORKS if n != "Solana"]
    response = issue(paid_draft(), **body)
    assert response.status_code == 400, response.json()
    assert response["Content-Type"].startswith("application/problem+json")
    fields = {e["field"]: e["code"] for e in response.json()["errors"]}
    assert field in fields
    if code:
        assert fields[field] == code
    assert Refund.objects.count() == 0


def test_only_a_confirmed_draft_of_ones_own_can_be_refunded(
    api_client, paid_draft, issue, client_with_scopes, other_account
):
    from tests.drafts.conftest import ADDRESSES

    pending = api_client.post(
        "/api/v1/drafts",
        {"network": "Ethereum", "currency": "USDC", "receiverAddress": ADDRESSES["Ethereum"], "amountSats": 7},
        format="json",
    ).json()
    refused = api_client.post("/api/v1/refunds", {"draftId": pending["id"], "full": True}, format="json")
    assert refused.status_code == 409 and refused.json()["code"] == "refund_not_allowed"
    stranger = client_with_scopes("refunds:write", user=other_account)
    unknown = stranger.post("/api/v1/refunds", {"draftId": str(paid_draft().id), "full": True}, format="json")
    assert unknown.status_code == 404 and unknown.json()["errors"][0]["field"] == "draftId"


def test_scopes_guard_the_endpoints(paid_draft, issue, client_with_scopes, anon_client):
    refund = issue(paid_draft(), full=True).json()
    reader = client_with_scopes("refunds:read")
    assert reader.get("/api/v1/refunds").status_code == 200
    assert reader.get(f"/api/v1/refunds/{refund['id']}").status_code == 200
    assert reader.post(f"/api/v1/refunds/{refund['id']}/cancel").status_code == 403
    drafts_only = client_with_scopes("drafts:read", "drafts:write")
    assert drafts_only.get("/api/v1/refunds").status_code == 403
    assert anon_client.get("/api/v1/refunds").status_code == 401


def test_another_accounts_refund_is_not_found(paid_draft, issue, client_with_scopes, other_account):
    refund = issue(paid_draft(), full=True).json()
    stranger = client_with_scopes("refunds:read", "refunds:write", user=other_account)
    assert stranger.get(f"/api/v1/refunds/{refund['id']}").status_code == 404
    assert stranger.post(f"/api/v1/refunds/{refund['id']}/approve").status_code == 404
    assert stranger.get("/api/v1/refunds").json()["items"] == []


def test_the_list_filters_by_status_and_draft(api_client, paid_draft, issue):
    first, second = paid_draft(), paid_draft(amountSats=30_000_000)
    issue(first, amountSats=1_000)
    cancelled = issue(second, amountSats=2_000).json()
    api_client.post(f"/api/v1/refunds/{cancelled['id']}/cancel")
    listed = api_client.get("/api/v1/refunds").json()
    assert listed["total"] == 2 and listed["next"] is None
    assert [r["status"] for r in api_client.get("/api/v1/refunds?status=Cancelled").json()["items"]] == ["Cancelled"]
    by_draft = api_client.get(f"/api/v1/refunds?draftId={first.id}").json()["items"]
    assert [r["draftId"] for r in by_draft] == [str(first.id)]


def test_the_claim_validates_the_address_for_the_network(anon_client, paid_draft, issue):
    refund = issue(paid_draft(), full=True).json()
    wrong = claim(anon_client, refund, CUSTOMER["Mainnet"])
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["field"] == "refundAddress"
    assert Refund.objects.get().status == "Claimable"
    assert claim(anon_client, refund, CUSTOMER["Ethereum"]).status_code == 200
    again = claim(anon_client, refund, CUSTOMER["Base"])
    assert again.status_code == 409 and again.json()["code"] == "refund_closed"
    assert Refund.objects.get().refund_address == CUSTOMER["Ethereum"]  # the first claim stands


def test_approval_needs_a_claim_and_cancel_refuses_a_seen_payout(api_client, anon_client, paid_draft, issue):
    refund = issue(paid_draft(), full=True).json()
    early = api_client.post(f"/api/v1/refunds/{refund['id']}/approve")
    assert early.status_code == 409 and early.json()["code"] == "approve_not_allowed"
    claim(anon_client, refund, CUSTOMER["Ethereum"])
    payout = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()["payout"]
    assert api_client.post(f"/api/v1/refunds/{refund['id']}/approve").status_code == 409
    pay(Draft.objects.get(pk=payout["draftId"]), confirmations=0)  # seen, not yet confirmed
    busy = api_client.post(f"/api/v1/refunds/{refund['id']}/cancel")
    assert busy.status_code == 409 and busy.json()["code"] == "payment_in_progress"


def test_cancelling_an_approved_refund_cancels_its_unpaid_payout(api_client, anon_client, paid_draft, issue):
    refund = issue(paid_draft(), full=True).json()
    claim(anon_client, refund, CUSTOMER["Ethereum"])
    payout = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()["payout"]
    assert api_client.post(f"/api/v1/refunds/{refund['id']}/cancel").json()["status"] == "Cancelled"
    assert Draft.objects.get(pk=payout["draftId"]).status == "Cancelled"


def test_an_unclaimed_refund_expires_and_its_link_says_so(anon_client, paid_draft, issue):
    refund = issue(paid_draft(), full=True, expiryHours=1).json()
    assert refunds_expire_due(now=timezone.now() + timedelta(minutes=30)) == 0
    assert refunds_expire_due(now=timezone.now() + timedelta(hours=2)) == 1
    assert refunds_expire_due(now=timezone.now() + timedelta(hours=2)) == 0  # safe to run twice
    assert Refund.objects.get().status == "Expired"
    assert Event.objects.filter(type="refund.expired").count() == 1
    late = claim(anon_client, refund, CUSTOMER["Ethereum"])
    assert late.status_code == 409 and late.json()["refundStatus"] == "Expired"


def test_refund_events_are_opt_in_for_webhooks(api_client, paid_draft, issue, fake_dns):
    from webhooks.models import Delivery

    fake_dns.answers = {"hooks.example.com": ["93.184.216.34"]}
    everything = api_client.post("/api/v1/webhooks", {"url": "https://hooks.example.com/all"}, format="json")
    named = api_client.post(
        "/api/v1/webhooks", {"url": "https://hooks.example.com/refunds", "events": ["refund.created"]}, format="json"
    )
    assert everything.status_code == named.status_code == 200, (everything.json(), named.json())
    issue(paid_draft(), full=True)
    event = Event.objects.get(type="refund.created")
    assert [str(d.webhook_id) for d in Delivery.objects.filter(event=event)] == [named.json()["id"]]
    assert not mail.outbox  # emails go through the email outbox, not inline


def test_an_idempotency_key_replays_the_first_answer(api_client, paid_draft):
    draft = paid_draft()
    body = {"draftId": str(draft.id), "amountSats": 1_000}
    first = api_client.post("/api/v1/refunds", body, format="json", HTTP_IDEMPOTENCY_KEY="refund-1")
    again = api_client.post("/api/v1/refunds", body, format="json", HTTP_IDEMPOTENCY_KEY="refund-1")
    assert first.status_code == again.status_code == 201
    assert again["Idempotent-Replayed"] == "true" and again.json()["id"] == first.json()["id"]
    assert Refund.objects.count() == 1


def test_the_refund_emails_render_what_each_reader_needs(api_client, anon_client, paid_draft, issue):
    from notifications.emails import email_render

    refund = issue(paid_draft(), fiatCurrency="EUR", fiatAmount="7.50", reason="Late", customerEmail="c@example.com")
    refund = refund.json()
    claim(anon_client, refund, CUSTOMER["Ethereum"])
    approved = api_client.post(f"/api/v1/refunds/{refund['id']}/approve").json()
    pay(Draft.objects.get(pk=approved["payout"]["draftId"]), tx_id="0x" + "ef" * 32)

    subject, text, html = email_render(EmailNotification.objects.get(kind="refund_claim_link"))
    assert "tell us where to send it" in subject
    assert refund["claimUrl"] in text and refund["claimUrl"] in html and "€7.50" in text and "Late" in text
    subject, text, _ = email_render(EmailNotification.objects.get(kind="refund_claimed"))
    assert refund["id"] in subject and CUSTOMER["Ethereum"] in text and f"/refunds/{refund['id']}/approve" in text
    subject, text, html = email_render(EmailNotification.objects.get(kind="refund_paid"))
    assert approved["amount"] in subject and "0x" + "ef" * 32 in text and "0x" + "ef" * 32 in html
