"""End to end on a real Ethereum node (anvil): a draft made through the API is paid on
chain, seen and confirmed by the watcher with no manual step; fees accrue and settle;
the confirmation reaches a local receiver as a signed webhook."""

import hashlib
import hmac
import json
from urllib.parse import parse_qs, urlsplit

import pytest
from standardwebhooks import Webhook

from chainwatch.tasks import chainwatch_run
from fees.models import AccruedFee
from tests.webhooks.conftest import deliver_due
from webhooks.models import Event

pytestmark = pytest.mark.django_db

OPERATOR_ETHEREUM = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"


@pytest.fixture(autouse=True)
def _operator(settings):
    settings.PLATFORM_FEE_ADDRESSES = {"Ethereum": OPERATOR_ETHEREUM}
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}


def create_usdc_draft(api_client, receiver: str, amount: int) -> dict:
    response = api_client.post(
        "/api/v1/drafts",
        {
            "network": "Ethereum",
            "currency": "USDC",
            "receiverAddress": receiver,
            "amountSats": amount,
            "requiredConfirmations": 3,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_draft_created_through_the_api_is_confirmed_by_a_real_payment(api_client, ethereum):
    receiver = ethereum.new_address()
    chainwatch_run("Ethereum", "evm")  # the watcher starts before the payment, as in production
    draft = create_usdc_draft(api_client, receiver, 25_000_000)
    uri = urlsplit(draft["paymentUri"])
    assert uri.path == f"{ethereum.token.address}@1/transfer"  # the wallet is told the token and chain
    assert parse_qs(uri.query)["uint256"] == ["25000000"]

    tx = ethereum.pay_token(ethereum.token, receiver, 25_000_000)
    ethereum.mine(1)
    chainwatch_run("Ethereum", "evm")
    status = api_client.get(f"/api/v1/drafts/{draft['id']}/status").json()
    assert status["status"] == "Seen" and status["txId"] == tx

    ethereum.mine(2)
    chainwatch_run("Ethereum", "evm")
    status = api_client.get(f"/api/v1/drafts/{draft['id']}/status").json()
    assert status["status"] == "Confirmed" and status["confirmations"] >= 3
    events = list(Event.objects.filter(draft_id=draft["id"]).order_by("created_at").values_list("type", flat=True))
    assert events == ["draft.created", "draft.seen", "draft.confirmed"]
    confirmed = Event.objects.get(draft_id=draft["id"], type="draft.confirmed").data
    assert confirmed["txId"] == tx and confirmed["amountSats"] == 25_000_000 and confirmed["status"] == "Confirmed"


def test_fees_accrue_from_a_confirmed_payment_and_a_settlement_paid_on_chain_clears_them(api_client, ethereum):
    receiver = ethereum.new_address()
    chainwatch_run("Ethereum", "evm")
    draft = create_usdc_draft(api_client, receiver, 40_000_000)
    ethereum.pay_token(ethereum.token, receiver, 40_000_000)
    ethereum.mine(3)
    chainwatch_run("Ethereum", "evm")
    balance = api_client.get("/api/v1/fees/accrued").json()
    assert balance["draftCount"] == 1 and balance["outstandingUsd"] == draft["platformFee"]["feeUsd"]

    settlement = api_client.post(
        "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Ethereum"}, format="json"
    ).json()
    assert settlement["isFeeSettlement"] and settlement["receiverAddress"] == OPERATOR_ETHEREUM
    assert settlement["tokenAddress"] == ethereum.token.address
    ethereum.pay_token(ethereum.token, OPERATOR_ETHEREUM, settlement["amountSats"])
    ethereum.mine(12)
    chainwatch_run("Ethereum", "evm")

    assert api_client.get(f"/api/v1/drafts/{settlement['id']}").json()["status"] == "Confirmed"
    balance = api_client.get("/api/v1/fees/accrued").json()
    assert balance["outstandingUsd"] == 0 and balance["blocked"] is False and balance["activeSettlementDraftId"] is None
    assert AccruedFee.objects.get().status == "Settled"


def test_a_payment_confirmed_on_chain_reaches_a_local_receiver_as_a_signed_draft_confirmed(
    api_client, ethereum, make_receiver, settings
):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    receiver = make_receiver()
    created = api_client.post("/api/v1/webhooks", {"url": receiver.url, "events": ["draft.confirmed"]}, format="json")
    assert created.status_code == 200, created.json()
    secret = created.json()["secret"]

    address = ethereum.new_address()
    chainwatch_run("Ethereum", "evm")
    draft = create_usdc_draft(api_client, address, 12_340_000)
    tx = ethereum.pay_token(ethereum.token, address, 12_340_000)
    ethereum.mine(3)
    chainwatch_run("Ethereum", "evm")
    deliver_due()

    assert len(receiver.requests) == 1
    request = receiver.requests[0]
    body = json.loads(request.body)
    assert body["event"] == "draft.confirmed"
    assert (
        body["data"]["draftId"] == draft["id"] and body["data"]["txId"] == tx and body["data"]["status"] == "Confirmed"
    )
    headers = {name.lower(): value for name, value in request.headers.items()}
    expected = "sha256=" + hmac.new(secret.encode(), request.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["x-service-signature"], expected)
    assert headers["x-service-event"] == "draft.confirmed"
    Webhook(secret).verify(
        request.body, {k: headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    )
