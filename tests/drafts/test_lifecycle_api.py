"""Reading, listing, cancelling, requoting and expiring drafts through the API."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from drafts.models import Draft
from drafts.tasks import expire_drafts
from tests.drafts.conftest import ADDRESSES
from tests.factories import draft_payment_observed
from tests.openapi import errors_against
from webhooks.models import Event

pytestmark = pytest.mark.django_db


def usdc_on_base(create, **extra):
    response = create(
        {
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": ADDRESSES["Base"],
            "amountSats": extra.pop("amountSats", 10_000_000),
            **extra,
        }
    )
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_draft_can_be_read_back_and_polled_for_status(api_client, create):
    draft = usdc_on_base(create)
    assert api_client.get(f"/api/v1/drafts/{draft['id']}").json() == draft
    status = api_client.get(f"/api/v1/drafts/{draft['id']}/status").json()
    assert status == {
        "id": draft["id"],
        "status": "Pending",
        "txId": None,
        "txIds": [],
        "receivedAmountSats": None,
        "confirmations": 0,
        "requiredConfirmations": draft["requiredConfirmations"],
        "updatedAt": draft["updatedAt"],
    }


def test_another_accounts_draft_is_404(create, client_with_scopes, other_account):
    draft = usdc_on_base(create)
    stranger = client_with_scopes("drafts:read", "drafts:write", user=other_account)
    for path in ("", "/status", "/fees", "/tx-template"):
        assert stranger.get(f"/api/v1/drafts/{draft['id']}{path}").status_code == 404
    assert stranger.post(f"/api/v1/drafts/{draft['id']}/cancel").status_code == 404
    assert stranger.get("/api/v1/drafts").json()["total"] == 0


def test_reading_needs_drafts_read_and_writing_drafts_write(create, client_with_scopes):
    draft = usdc_on_base(create)
    reader = client_with_scopes("drafts:read")
    assert reader.get(f"/api/v1/drafts/{draft['id']}").status_code == 200
    assert reader.post(f"/api/v1/drafts/{draft['id']}/cancel").status_code == 403
    writer = client_with_scopes("drafts:write")
    assert writer.get("/api/v1/drafts").status_code == 403


def test_the_list_is_newest_first_paged_and_filtered(api_client, create):
    ids = [usdc_on_base(create, amountSats=1_000_000 + i, memo=f"order {i}")["id"] for i in range(5)]
    solana = create(
        {"network": "Solana", "currency": "SOL", "receiverAddress": ADDRESSES["Solana"], "amountSats": 77}
    ).json()
    page = api_client.get("/api/v1/drafts", {"page": 1, "pageSize": 2}).json()
    assert page["total"] == 6 and page["page"] == 1 and page["pageSize"] == 2
    assert [d["id"] for d in page["items"]] == [solana["id"], ids[4]]
    assert [d["id"] for d in api_client.get("/api/v1/drafts", {"page": 3, "pageSize": 2}).json()["items"]] == ids[1::-1]
    assert api_client.get("/api/v1/drafts", {"network": "Solana"}).json()["total"] == 1
    assert api_client.get("/api/v1/drafts", {"currency": "USDC", "method": "SingleOutput"}).json()["total"] == 5
    assert [d["id"] for d in api_client.get("/api/v1/drafts", {"q": "order 3"}).json()["items"]] == [ids[3]]
    assert [d["id"] for d in api_client.get("/api/v1/drafts", {"q": ids[2]}).json()["items"]] == [ids[2]]
    assert api_client.get("/api/v1/drafts", {"status": "Cancelled"}).json()["total"] == 0
    future = (timezone.now() + timedelta(hours=1)).isoformat()
    assert api_client.get("/api/v1/drafts", {"from": future}).json()["total"] == 0
    assert api_client.get("/api/v1/drafts", {"to": future}).json()["total"] == 6


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"pageSize": 101}, "pageSize"),
        ({"page": 0}, "page"),
        ({"status": "Paid"}, "status"),
        ({"from": "yesterday"}, "from"),
    ],
)
def test_bad_list_parameters_are_400_naming_them(api_client, params, field):
    response = api_client.get("/api/v1/drafts", params)
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == field


def test_cancelling_a_pending_draft_emits_draft_cancelled_once(api_client, create):
    draft = usdc_on_base(create)
    response = api_client.post(f"/api/v1/drafts/{draft['id']}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "Cancelled"
    again = api_client.post(f"/api/v1/drafts/{draft['id']}/cancel")
    assert again.status_code == 409 and again.json()["code"] == "cancel_not_allowed"
    assert Event.objects.filter(draft_id=draft["id"], type="draft.cancelled").count() == 1


def test_accept_received_is_only_for_amount_mismatch(api_client, create):
    draft = usdc_on_base(create)
    assert "amountMismatch" not in draft  # not nullable in the spec: absent until a mismatch arrives
    assert api_client.post(f"/api/v1/drafts/{draft['id']}/accept-received").status_code == 409
    draft_payment_observed(draft_id=draft["id"], tx_id="0xfeed", received_base_units=9_500_000, confirmations=0)
    body = api_client.get(f"/api/v1/drafts/{draft['id']}").json()
    assert body["status"] == "AmountMismatch"
    mismatch = body["amountMismatch"]
    assert mismatch["expectedBaseUnits"] == 10_000_000 and mismatch["receivedBaseUnits"] == 9_500_000
    assert mismatch["differenceBaseUnits"] == -500_000 and mismatch["differenceFormatted"] == "-0.500000 USDC"
    accepted = api_client.post(f"/api/v1/drafts/{draft['id']}/accept-received").json()
    assert accepted["status"] == "Seen" and accepted["amountMismatch"]["acceptedAt"] is not None
    assert errors_against(body, "DraftResponse") == errors_against(accepted, "DraftResponse") == []


def test_requote_needs_an_expired_quote_on_a_pending_fiat_draft(api_client, create):
    exact = usdc_on_base(create)
    assert api_client.post(f"/api/v1/drafts/{exact['id']}/requote").json()["code"] == "requote_not_allowed"
    fiat = create(
        {
            "network": "Ethereum",
            "currency": "ETH",
            "receiverAddress": ADDRESSES["Ethereum"],
            "fiatCurrency": "EUR",
            "fiatAmount": 49.99,
        }
    ).json()
    early = api_client.post(f"/api/v1/drafts/{fiat['id']}/requote")
    assert early.status_code == 409 and early.json()["code"] == "requote_not_allowed"
    with time_machine.travel(timezone.now() + timedelta(minutes=16)):
        requoted = api_client.post(f"/api/v1/drafts/{fiat['id']}/requote")
    assert requoted.status_code == 200, requoted.json()
    body = requoted.json()
    assert body["quote"]["lockedAt"] > fiat["quote"]["lockedAt"]
    assert body["quote"]["expiresAt"] > fiat["quote"]["expiresAt"]
    assert body["fiatAmount"] == 49.99 and body["status"] == "Pending"


def test_the_fee_breakdown_adds_the_fee_output_to_the_total(api_client, create):
    draft = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000_000}).json()
    fees = api_client.get(f"/api/v1/drafts/{draft['id']}/fees").json()
    assert fees["platformFee"] == draft["platformFee"]
    assert fees["totalToSendSats"] == 10_000_000 + draft["platformFeeSats"]


def test_expiry_moves_unpaid_pending_drafts_to_expired_with_an_event(create):
    short = usdc_on_base(create, expiryHours=1, amountSats=1)
    long = usdc_on_base(create, expiryHours=48, amountSats=2)
    with time_machine.travel(timezone.now() + timedelta(hours=2)):
        assert expire_drafts() == 1
        assert expire_drafts() == 0
    assert Draft.objects.get(pk=short["id"]).status == "Expired"
    assert Draft.objects.get(pk=long["id"]).status == "Pending"
    assert Event.objects.filter(draft_id=short["id"], type="draft.expired").count() == 1


def test_expiry_hours_default_to_24(create):
    draft = usdc_on_base(create)
    created = Draft.objects.get(pk=draft["id"])
    assert created.expires_at - created.created_at == timedelta(hours=24)
