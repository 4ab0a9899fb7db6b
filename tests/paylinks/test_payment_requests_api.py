"""Payment requests through the owner's API: create, list, read, cancel."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from django.test import override_settings
from django.utils import timezone

from drafts.models import Draft
from paylinks.models import PaymentRequest
from tests.drafts.conftest import ADDRESSES
from tests.paylinks.conftest import link_body, pay
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def test_creating_a_payment_request_answers_201_with_its_location_and_a_pay_url(api_client, settings):
    response = api_client.post("/api/v1/payment-requests", link_body(expiryHours=48), format="json")

    assert response.status_code == 201, response.json()
    body = response.json()
    assert response["Location"] == f"{settings.BASE_URL}/api/v1/payment-requests/{body['id']}"
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", body["token"])  # 256 random bits, URL-safe
    assert body["payUrl"] == f"{settings.BASE_URL}/pay/{body['token']}"
    assert body["status"] == "Open" and body["draftId"] is None
    assert body["fiatCurrency"] == "EUR" and body["fiatAmount"] == 25
    assert body["options"][0] == {"currency": "USDC", "network": "Ethereum", "receiverAddress": ADDRESSES["Ethereum"]}
    assert body["orderId"] == "order-1001" and body["memo"] == "Two coffees"
    assert body["expiresAt"].endswith("Z") and body["createdAt"].endswith("Z")
    assert set(body) == {
        "id", "token", "payUrl", "fiatCurrency", "fiatAmount", "options", "orderId", "memo", "returnUrl", "status",
        "expiresAt", "createdAt", "draftId", "livemode",
    }  # fmt: skip
    assert not Draft.objects.exists()  # the draft waits for the payer's choice


def test_tokens_are_unique_per_request(create_link):
    tokens = {create_link()["token"] for _ in range(5)}
    assert len(tokens) == 5


@pytest.mark.parametrize(
    ("change", "field", "code"),
    [
        ({"fiatAmount": 0}, "fiatAmount", "min_value"),
        ({"fiatAmount": -5}, "fiatAmount", "min_value"),
        ({"fiatAmount": 25.001}, "fiatAmount", "too_precise"),
        ({"fiatCurrency": "JPY", "fiatAmount": 100.5}, "fiatAmount", "too_precise"),
        ({"fiatCurrency": "XYZ"}, "fiatCurrency", "unknown_fiat_currency"),
        ({"fiatCurrency": None}, "fiatCurrency", "null"),
        ({"options": []}, "options", "empty"),
        (
            {"options": [{"currency": "USDT", "network": "Base", "receiverAddress": ADDRESSES["Base"]}]},
            "options[0].network",
            "unsupported_combination",
        ),
        (
            {"options": [{"currency": "SOL", "network": "Solana", "receiverAddress": ADDRESSES["Solana"]}]},
            "options[0].currency",
            "invalid_choice",  # the schema's enum lists the four a pay link takes
        ),
        (
            {"options": [{"currency": "USDC", "network": "Ethereum", "receiverAddress": "0x1234"}]},
            "options[0].receiverAddress",
            "invalid_address",
        ),
        (
            {"options": [{"currency": "BTC", "network": "Mainnet", "receiverAddress": ADDRESSES["Testnet"]}]},
            "options[0].receiverAddress",
            "invalid_address",
        ),
        (
            {
                "options": [
                    {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
                    {"currency": "USDC", "network": "Base", "receiverAddress": ADDRESSES["Base"]},
                ]
            },
            "options[1]",
            "duplicate_option",
        ),
        (
            {"options": [{"currency": "BTC", "network": "Mainnet", "receiverAddress": "alice@10.0.0.7"}]},
            "options[0].receiverAddress",
            "invalid_lightning_address",
        ),
        ({"options": [{"currency": "USDC", "network": "Base"}]}, "options[0].receiverAddress", "required"),
        ({"expiryHours": 0}, "expiryHours", "min_value"),
        ({"amountSats": 5}, "amountSats", "unknown_field"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(api_client, change, field, code):
    response = api_client.post("/api/v1/payment-requests", link_body(**change), format="json")

    assert response.status_code == 400, response.json()
    assert response["Content-Type"] == "application/problem+json"
    errors = response.json()["errors"]
    assert {"field": field, "code": code} in [{"field": e["field"], "code": e["code"]} for e in errors], errors
    assert not PaymentRequest.objects.exists()


def test_the_list_is_a_plain_array_newest_first_with_the_total_in_a_header(api_client, create_link):
    ids = [create_link(orderId=f"order-{i}")["id"] for i in range(5)]

    page = api_client.get("/api/v1/payment-requests", {"page": 1, "pageSize": 2})
    assert page.status_code == 200
    assert page["X-Total-Count"] == "5"
    assert [p["id"] for p in page.json()] == [ids[4], ids[3]]
    last = api_client.get("/api/v1/payment-requests", {"page": 3, "pageSize": 2})
    assert [p["id"] for p in last.json()] == [ids[0]] and last["X-Total-Count"] == "5"


def test_the_list_filters_by_status_and_order_id(api_client, create_link):
    first, second = create_link(orderId="A-1"), create_link(orderId="B-2")
    api_client.post(f"/api/v1/payment-requests/{first['id']}/cancel")

    assert [p["id"] for p in api_client.get("/api/v1/payment-requests", {"orderId": "B-2"}).json()] == [second["id"]]
    cancelled = api_client.get("/api/v1/payment-requests", {"status": "Cancelled"})
    assert [p["id"] for p in cancelled.json()] == [first["id"]] and cancelled["X-Total-Count"] == "1"
    assert api_client.get("/api/v1/payment-requests", {"status": "Paid"}).json() == []
    assert api_client.get("/api/v1/payment-requests", {"status": "Closed"}).status_code == 400
    assert api_client.get("/api/v1/payment-requests", {"pageSize": 101}).status_code == 400


def test_a_request_can_be_read_back(api_client, create_link):
    link = create_link()

    assert api_client.get(f"/api/v1/payment-requests/{link['id']}").json() == link


def test_another_accounts_request_is_404(create_link, client_with_scopes, other_account):
    link = create_link()
    stranger = client_with_scopes("paylinks:read", "paylinks:write", user=other_account)

    assert stranger.get(f"/api/v1/payment-requests/{link['id']}").status_code == 404
    assert stranger.post(f"/api/v1/payment-requests/{link['id']}/cancel").status_code == 404
    assert stranger.get("/api/v1/payment-requests").json() == []
    assert PaymentRequest.objects.get().status == "Open"


def test_reading_needs_paylinks_read_and_writing_paylinks_write(create_link, client_with_scopes):
    link = create_link()
    reader = client_with_scopes("paylinks:read")
    writer = client_with_scopes("paylinks:write")
    drafts_only = client_with_scopes("drafts:read", "drafts:write")

    assert reader.get(f"/api/v1/payment-requests/{link['id']}").status_code == 200
    assert reader.post("/api/v1/payment-requests", link_body(), format="json").status_code == 403
    assert reader.post(f"/api/v1/payment-requests/{link['id']}/cancel").status_code == 403
    assert writer.get("/api/v1/payment-requests").status_code == 403
    assert writer.post("/api/v1/payment-requests", link_body(), format="json").status_code == 201
    assert drafts_only.get("/api/v1/payment-requests").json()["code"] == "missing_scope"


def test_anonymous_callers_cannot_use_the_owner_api(anon_client, create_link):
    link = create_link()

    assert anon_client.get("/api/v1/payment-requests").status_code == 401
    assert anon_client.get(f"/api/v1/payment-requests/{link['id']}").status_code == 401


def test_cancelling_an_open_request_answers_200_and_a_second_cancel_is_409(api_client, create_link):
    link = create_link()

    cancelled = api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")
    again = api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")

    assert cancelled.status_code == 200 and cancelled.json()["status"] == "Cancelled"
    assert again.status_code == 409
    assert again.json()["code"] == "cancel_not_allowed" and again.json()["status"] == 409
    assert again.json()["paymentRequestStatus"] == "Cancelled"


def test_cancelling_a_request_cancels_the_payers_pending_draft(api_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]

    api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")

    assert Draft.objects.get(pk=draft_id).status == "Cancelled"
    assert Event.objects.filter(draft_id=draft_id, type="draft.cancelled").count() == 1


def test_a_request_whose_payment_was_seen_cannot_be_cancelled(api_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    pay(draft_id, confirmations=1)

    refused = api_client.post(f"/api/v1/payment-requests/{link['id']}/cancel")

    assert refused.status_code == 409 and refused.json()["code"] == "payment_in_progress"
    assert PaymentRequest.objects.get().status == "Open"


def test_the_same_idempotency_key_and_body_replays_the_first_response(api_client):
    first = api_client.post("/api/v1/payment-requests", link_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = api_client.post("/api/v1/payment-requests", link_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-1")

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"
    assert again["Location"] == first["Location"]
    assert PaymentRequest.objects.count() == 1


def test_an_idempotency_key_reused_with_another_body_or_on_drafts_is_a_422(api_client):
    api_client.post("/api/v1/payment-requests", link_body(), format="json", HTTP_IDEMPOTENCY_KEY="k-2")

    other_body = api_client.post(
        "/api/v1/payment-requests", link_body(fiatAmount=30), format="json", HTTP_IDEMPOTENCY_KEY="k-2"
    )
    on_drafts = api_client.post(
        "/api/v1/drafts",
        {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k-2",
    )

    assert other_body.status_code == 422 and other_body.json()["code"] == "idempotency_key_reused"
    assert on_drafts.status_code == 422
    assert PaymentRequest.objects.count() == 1 and not Draft.objects.exists()


@pytest.mark.parametrize("bad", [{"fiatCurrency": "XYZ"}, {"fiatAmount": "lots"}])
def test_a_bad_request_under_an_idempotency_key_is_replayed_too(api_client, bad):
    body = link_body(**bad)
    first = api_client.post("/api/v1/payment-requests", body, format="json", HTTP_IDEMPOTENCY_KEY="k-3")
    again = api_client.post("/api/v1/payment-requests", body, format="json", HTTP_IDEMPOTENCY_KEY="k-3")

    assert first.status_code == again.status_code == 400
    assert again.json() == first.json() and again["Idempotent-Replayed"] == "true"


@override_settings(FEE_MAX_OUTSTANDING_USD=Decimal("0.01"))
def test_an_account_with_overdue_fees_cannot_create_pay_links(api_client, create_link, select):
    link = create_link()
    draft_id = select(link["token"]).json()["draftId"]
    pay(draft_id, confirmations=12)  # the pay link's fee accrues: 0.01 USD at least

    refused = api_client.post("/api/v1/payment-requests", link_body(), format="json")

    assert refused.status_code == 402 and refused.json()["code"] == "fees_outstanding"
    assert PaymentRequest.objects.count() == 1


def test_deleting_the_account_cancels_its_open_pay_links_and_clears_their_personal_fields(
    create_link, select, anon_client
):
    from accounts.closure import _closers
    from paylinks.closure import payment_requests_close_for_account

    link = create_link()
    paid = create_link(orderId="order-paid")
    pay(select(paid["token"]).json()["draftId"], confirmations=12)
    anon_client.post(f"/api/v1/checkout/{paid['token']}/receipt", {"email": "payer@example.net"}, format="json")
    owner = PaymentRequest.objects.get(pk=link["id"]).user

    assert payment_requests_close_for_account in _closers  # registered for account deletion
    payment_requests_close_for_account(user=owner, now=timezone.now())

    closed, kept = PaymentRequest.objects.get(pk=link["id"]), PaymentRequest.objects.get(pk=paid["id"])
    assert closed.status == "Cancelled" and kept.status == "Paid"
    for request in (closed, kept):
        assert (request.memo, request.order_id, request.payer_email) == (None, None, None)
    assert (
        anon_client.post(
            f"/api/v1/checkout/{link['token']}/select", {"currency": "USDC", "network": "Base"}, format="json"
        ).json()["code"]
        == "payment_request_cancelled"
    )
