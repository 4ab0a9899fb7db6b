"""The payer's side: anonymous checkout by token, option choice, status, and how the
request follows its draft to Paid, Expired or Cancelled."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from drafts.models import Draft
from drafts.tasks import expire_drafts
from notifications.services import emails_send_due
from paylinks.models import PaymentRequest
from paylinks.tasks import expire_due
from tests.concurrency import run_at_once
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import pay
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def events(type_: str) -> list[Event]:
    return list(Event.objects.filter(type=type_).order_by("created_at"))


def test_the_checkout_shows_what_a_payer_needs_and_nothing_of_the_owner(anon_client, create_link, owner):
    link = create_link()

    response = anon_client.get(f"/api/v1/checkout/{link['token']}")

    assert response.status_code == 200
    body = response.json()
    assert body["fiatCurrency"] == "EUR" and body["fiatAmount"] == 25 and body["memo"] == "Two coffees"
    assert body["status"] == "Open" and body["expiresAt"] == link["expiresAt"] and body["selection"] is None
    assert body["options"][0] == {
        "currency": "USDC",
        "network": "Ethereum",
        "method": "SingleOutput",
        "label": "USDC on Ethereum",
    }
    text = response.content.decode()
    for secret in (owner.email, link["id"], *[o["receiverAddress"] for o in link["options"]]):
        assert secret not in text
    assert not {"id", "user", "userId", "email", "token", "drafts"} & set(body)


def test_an_unknown_or_malformed_token_is_404(anon_client, create_link):
    create_link()

    assert anon_client.get("/api/v1/checkout/" + "A" * 43).status_code == 404
    assert anon_client.get("/api/v1/checkout/short").status_code == 404
    assert anon_client.post("/api/v1/checkout/" + "A" * 43 + "/select", {}, format="json").status_code == 404


def test_choosing_an_option_creates_a_draft_for_the_request_with_the_rate_locked_now(create_link, select):
    link = create_link()
    at = timezone.now()

    response = select(link["token"])

    assert response.status_code == 200, response.json()
    chosen = response.json()
    draft = Draft.objects.get(pk=chosen["draftId"])
    assert str(draft.payment_request_id) == link["id"] and draft.order_id == "order-1001"
    assert draft.fiat_currency == "EUR" and draft.fiat_amount == 25 and draft.method == "SingleOutput"
    assert at - timedelta(seconds=5) < draft.quote_locked_at <= timezone.now()
    assert chosen["receiverAddress"] == ADDRESSES["Ethereum"]
    assert chosen["amount"] == f"{draft.amount_base_units / 10**6:.6f}"
    assert chosen["paymentUri"] == draft.payment_uri and chosen["paymentUri"].startswith("ethereum:")
    assert chosen["qrSvg"].startswith("data:image/svg+xml;base64,")
    created = events("draft.created")[0].data
    assert created["paymentRequestId"] == link["id"] and created["orderId"] == "order-1001"
    assert PaymentRequest.objects.get().draft_id == draft.id


def test_choosing_the_same_option_again_returns_the_same_pending_draft(create_link, select):
    link = create_link()

    first = select(link["token"]).json()
    again = select(link["token"], method="SingleOutput").json()

    assert again["draftId"] == first["draftId"]
    assert Draft.objects.count() == 1 and len(events("draft.created")) == 1


def test_switching_option_cancels_the_previous_draft_and_creates_a_new_one(create_link, select):
    link = create_link()
    first = select(link["token"]).json()

    second = select(link["token"], "BTC", "Mainnet").json()

    assert second["draftId"] != first["draftId"] and second["paymentUri"].startswith("bitcoin:")
    assert Draft.objects.get(pk=first["draftId"]).status == "Cancelled"
    assert [e.draft_id for e in events("draft.cancelled")] == [Draft.objects.get(pk=first["draftId"]).id]
    assert Draft.objects.filter(status="Pending").count() == 1
    assert str(PaymentRequest.objects.get().draft_id) == second["draftId"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("same_option", [True, False])
def test_two_payers_racing_one_link_end_with_one_pending_draft(create_link, same_option, settings):
    from rest_framework.test import APIClient

    settings.CHECKOUT_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}
    token = create_link()["token"]
    choices = iter([("USDC", "Ethereum"), ("USDC", "Ethereum" if same_option else "Base")] * 2)

    def choose():
        currency, network = next(choices)
        body = {"currency": currency, "network": network}
        return APIClient().post(f"/api/v1/checkout/{token}/select", body, format="json")

    responses = run_at_once(2, choose)

    assert all(r.status_code == 200 for r in responses), [r.json() for r in responses]
    pending = Draft.objects.filter(status="Pending")
    assert pending.count() == 1
    assert PaymentRequest.objects.get().draft_id == pending.get().id
    if same_option:
        assert {r.json()["draftId"] for r in responses} == {str(pending.get().id)}
        assert Draft.objects.count() == 1  # the loser's draft was rolled back, with its event
        assert len(events("draft.created")) == 1


def test_an_option_the_request_does_not_offer_is_refused(create_link, select):
    link = create_link()

    response = select(link["token"], "USDT", "Ethereum")

    assert response.status_code == 400 and response.json()["code"] == "option_not_offered"
    assert {e["field"] for e in response.json()["errors"]} == {"currency", "network"}
    assert not Draft.objects.exists()


def test_a_lightning_option_fetches_the_invoice_through_the_lightning_address(api_client, anon_client, lnurl_server):
    body = {
        "fiatCurrency": "USD",
        "fiatAmount": 10.00,
        "options": [{"currency": "BTC", "network": "Mainnet", "receiverAddress": lnurl_server.address}],
    }
    link = api_client.post("/api/v1/payment-requests", body, format="json").json()

    chosen = anon_client.post(
        f"/api/v1/checkout/{link['token']}/select",
        {"currency": "BTC", "network": "Mainnet", "method": "Lightning"},
        format="json",
    ).json()

    assert chosen["method"] == "Lightning" and chosen["bolt11"].startswith("lnbc")
    assert chosen["paymentUri"] == f"lightning:{chosen['bolt11']}"
    assert lnurl_server.callbacks == [chosen["amountSats"] * 1000]


def test_the_status_endpoint_follows_the_payers_draft(anon_client, create_link, select):
    link = create_link()
    url = f"/api/v1/checkout/{link['token']}/status"
    assert anon_client.get(url).json() == {
        "status": "Open",
        "draftId": None,
        "draftStatus": None,
        "confirmations": 0,
        "requiredConfirmations": None,
        "paidTxId": None,
    }
    draft_id = select(link["token"]).json()["draftId"]

    pay(draft_id, confirmations=3)
    seen = anon_client.get(url).json()
    pay(draft_id, confirmations=12)
    paid = anon_client.get(url).json()

    assert seen == {
        "status": "Open",
        "draftId": draft_id,
        "draftStatus": "Seen",
        "confirmations": 3,
        "requiredConfirmations": 12,
        "paidTxId": "0xpaid",
    }
    assert paid["status"] == "Paid" and paid["draftStatus"] == "Confirmed" and paid["confirmations"] == 12


def test_the_request_is_paid_in_the_same_transaction_as_its_draft_confirms(api_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"], "USDC", "Base").json()["draftId"]

    pay(draft_id, confirmations=12)

    request = api_client.get(f"/api/v1/payment-requests/{link['id']}").json()
    assert request["status"] == "Paid" and request["draftId"] == draft_id
    confirmed = events("draft.confirmed")[0]
    paid = events("payment_request.paid")[0]
    assert confirmed.data["paymentRequestId"] == link["id"] and confirmed.data["orderId"] == "order-1001"
    assert paid.data["paymentRequestId"] == link["id"] and paid.data["draftId"] == draft_id
    assert paid.data["status"] == "Paid" and paid.data["txId"] == "0xpaid" and paid.data["paidLate"] is False
    assert paid.data["sentCurrency"] == "USDC" and paid.data["network"] == "Base"
    # The request's row changed with the draft's: a rollback of one would have undone both.
    assert PaymentRequest.objects.get().paid_at == Draft.objects.get(pk=draft_id).confirmed_at


def test_the_owner_is_emailed_when_the_request_is_paid(create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]

    pay(draft_id, confirmations=12)
    emails_send_due()

    owner_mail = [m for m in mail.outbox if m.subject.startswith("Payment request paid")]
    assert len(owner_mail) == 1 and owner_mail[0].to == ["owner@example.com"]
    assert "order-1001" in owner_mail[0].body and link["id"] in owner_mail[0].body


def test_a_payer_who_asked_for_a_receipt_gets_one_when_it_is_paid(anon_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    asked = anon_client.post(f"/api/v1/checkout/{link['token']}/receipt", {"email": "payer@example.net"}, format="json")
    assert asked.status_code == 200
    emails_send_due()
    assert not [m for m in mail.outbox if m.to == ["payer@example.net"]]

    pay(draft_id, confirmations=12)
    emails_send_due()

    (receipt,) = [m for m in mail.outbox if m.to == ["payer@example.net"]]
    assert receipt.subject.startswith("Receipt: €25.00 paid")
    assert "0xpaid" in receipt.body and "owner@example.com" not in receipt.body


def test_a_bad_receipt_address_is_a_400(anon_client, create_link):
    link = create_link()

    response = anon_client.post(f"/api/v1/checkout/{link['token']}/receipt", {"email": "nope"}, format="json")

    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "email"


def test_a_request_expires_at_its_expiry_and_then_refuses_new_choices(api_client, create_link, select):
    link = create_link(expiryHours=2)

    with time_machine.travel(timezone.now() + timedelta(hours=1, minutes=59)):
        assert expire_due() == 0
    with time_machine.travel(timezone.now() + timedelta(hours=2, seconds=1)):
        assert expire_due() == 1
        assert expire_due() == 0  # safe to run twice
        refused = select(link["token"])

    assert api_client.get(f"/api/v1/payment-requests/{link['id']}").json()["status"] == "Expired"
    assert refused.status_code == 409 and refused.json()["code"] == "payment_request_expired"
    assert refused.json()["paymentRequestStatus"] == "Expired"
    (expired,) = events("payment_request.expired")
    assert expired.data["paymentRequestId"] == link["id"] and expired.data["orderId"] == "order-1001"
    assert not Draft.objects.exists()


def test_a_request_past_its_expiry_refuses_choices_before_the_beat_task_runs(create_link, select, anon_client):
    link = create_link(expiryHours=1)

    with time_machine.travel(timezone.now() + timedelta(hours=1, seconds=1)):
        refused = select(link["token"])
        shown = anon_client.get(f"/api/v1/checkout/{link['token']}").json()

    assert refused.status_code == 409 and refused.json()["code"] == "payment_request_expired"
    assert shown["status"] == "Expired"


@pytest.mark.parametrize(("close", "code"), [("cancel", "payment_request_cancelled"), ("pay", "payment_request_paid")])
def test_a_paid_or_cancelled_request_refuses_new_choices(api_client, create_link, select, close, code):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    if close == "cancel":
        api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")
    else:
        pay(draft_id, confirmations=12)

    refused = select(link["token"], "USDC", "Base")

    assert refused.status_code == 409 and refused.json()["code"] == code
    assert Draft.objects.count() == 1


def test_switching_is_refused_once_a_payment_for_the_first_choice_was_seen(create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    pay(draft_id, confirmations=1)

    refused = select(link["token"], "USDC", "Base")

    assert refused.status_code == 409 and refused.json()["code"] == "payment_in_progress"
    assert Draft.objects.get(pk=draft_id).status == "Seen"


def test_a_late_payment_after_the_draft_and_the_request_expired_still_marks_the_request_paid(
    api_client, create_link, select
):
    link = create_link(expiryHours=1)
    draft_id = select(link["token"]).json()["draftId"]

    with time_machine.travel(timezone.now() + timedelta(hours=3)):
        expire_drafts()
        expire_due()
        assert Draft.objects.get(pk=draft_id).status == "Expired"
        assert PaymentRequest.objects.get().status == "Expired"
        pay(draft_id, confirmations=12)

    request = api_client.get(f"/api/v1/payment-requests/{link['id']}").json()
    assert request["status"] == "Paid" and request["draftId"] == draft_id
    draft = Draft.objects.get(pk=draft_id)
    assert draft.status == "Confirmed" and draft.paid_late
    (paid,) = events("payment_request.paid")
    assert paid.data["paidLate"] is True
    assert events("draft.confirmed")[0].data["paidLate"] is True


def test_a_late_payment_of_an_earlier_choice_cancels_the_newer_pending_draft(create_link, select):
    link = create_link()
    first = select(link["token"]).json()["draftId"]
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        expire_drafts()  # the first choice's draft expired unpaid; the payer picks again
        second = select(link["token"], "USDC", "Base").json()["draftId"]
        pay(first, confirmations=12)  # ...but the first payment was on its way after all

    assert PaymentRequest.objects.get().status == "Paid"
    assert str(PaymentRequest.objects.get().draft_id) == first
    assert Draft.objects.get(pk=second).status == "Cancelled"


def test_webhook_payloads_of_the_requests_drafts_carry_its_id_and_order_id(create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    pay(draft_id, confirmations=1)
    pay(draft_id, confirmations=12)

    for event in Event.objects.filter(draft_id=draft_id, type__startswith="draft."):
        assert event.data["paymentRequestId"] == link["id"], event.type
        assert event.data["orderId"] == "order-1001", event.type
    assert {e.type for e in Event.objects.filter(draft_id=draft_id)} >= {
        "draft.created",
        "draft.seen",
        "draft.confirmed",
        "payment_request.paid",
    }


def test_checkout_calls_are_rate_limited_per_ip(anon_client, create_link, settings):
    link = create_link()
    settings.CHECKOUT_RATE_LIMITS = {"read": "3/min", "write": "2/min"}
    url = f"/api/v1/checkout/{link['token']}"

    reads = [anon_client.get(url).status_code for _ in range(4)]
    writes = [
        anon_client.post(f"{url}/select", {"currency": "USDC", "network": "Base"}, format="json").status_code
        for _ in range(3)
    ]

    assert reads == [200, 200, 200, 429]
    assert writes == [200, 200, 429]


def test_a_blocked_owner_makes_the_link_unpayable_without_telling_the_payer_why(create_link, select, settings):
    from decimal import Decimal

    link = create_link()
    other = create_link(orderId="order-2")
    pay(select(other["token"]).json()["draftId"], confirmations=12)
    settings.FEE_MAX_OUTSTANDING_USD = Decimal("0.01")

    refused = select(link["token"])

    assert refused.status_code == 409 and refused.json()["code"] == "payment_request_unavailable"
    assert "outstanding" not in json.dumps(refused.json()).lower()


def test_choosing_again_after_the_drafts_time_ran_out_expires_it_so_a_late_payment_still_counts(create_link, select):
    link = create_link()
    first = select(link["token"]).json()["draftId"]

    with time_machine.travel(timezone.now() + timedelta(hours=1, minutes=1)):  # before the expiry task ran
        second = select(link["token"]).json()["draftId"]
        assert second != first
        assert Draft.objects.get(pk=first).status == "Expired"  # still watched, not cancelled
        pay(first, confirmations=12)

    assert PaymentRequest.objects.get().status == "Paid"
    assert Draft.objects.get(pk=second).status == "Cancelled"
    assert Draft.objects.get(pk=first).paid_late
