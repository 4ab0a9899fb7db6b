"""The accrued-fee ledger: accrual on confirmation, caps that block, settlement drafts."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from drafts import services
from drafts.models import Draft
from fees.models import AccruedFee
from payments.quotes import fiat_to_base_units
from payments.rates import get_rate
from tests.concurrency import run_at_once
from tests.conftest import operator_sign_in
from tests.drafts.conftest import ADDRESSES
from tests.factories import draft_payment_observed

OPERATOR = {
    "Mainnet": "bc1qc7slrfxkknqcq2jevvvkdgvrt8080852dfjewde450xdlk4ugp7szw5tk9",
    "Ethereum": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
    "Base": "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
}


@pytest.fixture(autouse=True)
def _operator(settings):
    settings.PLATFORM_FEE_ADDRESSES = OPERATOR
    settings.API_RATE_LIMITS = {"read": "10000/min", "write": "10000/min"}


def usdc_draft(client, amount: int = 25_000_000, network: str = "Base") -> dict:
    response = client.post(
        "/api/v1/drafts",
        {"network": network, "currency": "USDC", "receiverAddress": ADDRESSES[network], "amountSats": amount},
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()


def pay(draft: dict, *, tx: str = "0xpaid") -> None:
    draft_payment_observed(draft_id=draft["id"], tx_id=tx, received_base_units=draft["amountSats"], confirmations=100)


@pytest.mark.django_db
def test_a_fee_accrues_only_when_its_draft_is_confirmed(api_client):
    paid, unpaid = usdc_draft(api_client, 25_000_000), usdc_draft(api_client, 30_000_000)
    assert api_client.get("/api/v1/fees/accrued").json()["draftCount"] == 0
    pay(paid)
    with time_machine.travel(timezone.now() + timedelta(days=2)):
        services.draft_expire(draft_id=unpaid["id"])
    balance = api_client.get("/api/v1/fees/accrued").json()
    assert balance["draftCount"] == 1
    assert Decimal(str(balance["outstandingUsd"])) == Decimal(str(paid["platformFee"]["feeUsd"]))
    assert set(balance) == {
        "outstandingUsd",
        "draftCount",
        "oldestAccruedAt",
        "maxOutstandingUsd",
        "maxAgeDays",
        "blocked",
        "activeSettlementDraftId",
    }
    assert balance["maxOutstandingUsd"] == 25 and balance["maxAgeDays"] == 30 and balance["blocked"] is False
    entry = AccruedFee.objects.get()
    assert str(entry.draft_id) == paid["id"] and entry.fee_base_units == paid["platformFee"]["feeBaseUnits"]


@pytest.mark.django_db
def test_a_multi_output_payment_without_its_fee_output_accrues_the_fee(api_client):
    draft = api_client.post(
        "/api/v1/drafts",
        {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000_000},
        format="json",
    ).json()
    assert draft["platformFee"]["placement"] == "Output"
    without_fee = services.PaymentObservation(
        tx_id="0xpaid", received_base_units=draft["amountSats"], confirmations=100, fee_output_present=False
    )
    services.draft_payment_apply(draft_id=draft["id"], observation=without_fee)
    entry = AccruedFee.objects.get()
    assert str(entry.draft_id) == draft["id"] and entry.fee_base_units == draft["platformFeeSats"]


@pytest.mark.django_db
def test_a_multi_output_payment_with_its_fee_output_accrues_nothing(api_client):
    draft = api_client.post(
        "/api/v1/drafts",
        {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000_000},
        format="json",
    ).json()
    pay(draft)
    assert not AccruedFee.objects.exists()


@pytest.mark.django_db
@override_settings(FEE_MAX_OUTSTANDING_USD=Decimal("0.2"))
def test_reaching_the_amount_cap_blocks_single_output_drafts_with_402_but_not_multi_output(api_client):
    pay(usdc_draft(api_client, 25_000_000))  # 0.0975 USD
    pay(usdc_draft(api_client, 26_000_000), tx="0x2")  # 0.1014 USD: 0.1989 in all
    assert api_client.get("/api/v1/fees/accrued").json()["blocked"] is False
    pay(usdc_draft(api_client, 27_000_000), tx="0x3")
    assert api_client.get("/api/v1/fees/accrued").json()["blocked"] is True
    refused = api_client.post(
        "/api/v1/drafts",
        {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5},
        format="json",
    )
    assert refused.status_code == 402
    assert refused.json()["code"] == "fees_outstanding" and refused.json()["outstandingUsd"] > 0.2
    multi = api_client.post(
        "/api/v1/drafts",
        {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 10_000_000},
        format="json",
    )
    assert multi.status_code == 201


@pytest.mark.django_db
def test_an_old_unsettled_fee_blocks_by_age(api_client):
    pay(usdc_draft(api_client))
    with time_machine.travel(timezone.now() + timedelta(days=29)):
        assert api_client.get("/api/v1/fees/accrued").json()["blocked"] is False
    with time_machine.travel(timezone.now() + timedelta(days=30, minutes=1)):
        assert api_client.get("/api/v1/fees/accrued").json()["blocked"] is True
        assert (
            api_client.post(
                "/api/v1/drafts",
                {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5},
                format="json",
            ).status_code
            == 402
        )


@pytest.mark.django_db
def test_settlement_pays_the_outstanding_amount_to_the_operator_and_unblocks_when_confirmed(api_client):
    first, second = usdc_draft(api_client, 25_000_000), usdc_draft(api_client, 50_000_000)
    pay(first)
    pay(second, tx="0x2")
    owed = AccruedFee.objects.get(draft_id=first["id"]).fee_usd + AccruedFee.objects.get(draft_id=second["id"]).fee_usd
    response = api_client.post(
        "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Ethereum"}, format="json"
    )
    assert response.status_code == 201, response.json()
    settlement = response.json()
    assert response["Location"] == f"http://testserver/api/v1/drafts/{settlement['id']}"
    assert settlement["isFeeSettlement"] is True and settlement["receiverAddress"] == OPERATOR["Ethereum"]
    assert settlement["platformFee"]["feeBaseUnits"] == 0 and settlement["feeAccrued"] is False
    usdc_usd = get_rate("USDC", "USD").rate
    assert settlement["amountSats"] == fiat_to_base_units(owed, usdc_usd, 6)
    assert api_client.get("/api/v1/fees/accrued").json()["activeSettlementDraftId"] == settlement["id"]
    again = api_client.post("/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Ethereum"}, format="json")
    assert again.status_code == 409 and again.json()["activeSettlementDraftId"] == settlement["id"]
    pay(settlement, tx="0xsettle")
    balance = api_client.get("/api/v1/fees/accrued").json()
    assert balance["outstandingUsd"] == 0 and balance["draftCount"] == 0 and balance["activeSettlementDraftId"] is None
    assert set(AccruedFee.objects.values_list("status", flat=True)) == {"Settled"}
    assert not AccruedFee.objects.filter(draft_id=settlement["id"]).exists()  # a settlement owes no fee


@pytest.mark.django_db
def test_a_cancelled_settlement_leaves_the_fees_outstanding(api_client):
    pay(usdc_draft(api_client))
    settlement = api_client.post(
        "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json"
    ).json()
    api_client.post(f"/api/v1/drafts/{settlement['id']}/cancel")
    balance = api_client.get("/api/v1/fees/accrued").json()
    assert balance["draftCount"] == 1 and balance["activeSettlementDraftId"] is None
    assert AccruedFee.objects.get().settlement_draft is None
    assert (
        api_client.post(
            "/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json"
        ).status_code
        == 201
    )


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"currency": "USDC", "network": "Base"}, 409, "nothing_to_settle"),
        ({"currency": "SOL", "network": "Solana"}, 400, "invalid_choice"),
        ({"currency": "USDC", "network": "Solana"}, 400, "settlement_network_unavailable"),
        ({"currency": "USDT", "network": "Base"}, 400, "unsupported_combination"),
    ],
)
def test_settle_refuses_what_it_cannot_do(api_client, body, status, code):
    if code != "nothing_to_settle":
        pay(usdc_draft(api_client))
    response = api_client.post("/api/v1/fees/accrued/settle", body, format="json")
    assert response.status_code == status and response.json()["code"] == code, response.json()


@pytest.mark.django_db
def test_settling_needs_fees_write(client_with_scopes):
    reader = client_with_scopes("fees:read")
    assert reader.get("/api/v1/fees/accrued").status_code == 200
    assert (
        reader.post("/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json").status_code
        == 403
    )


@pytest.mark.django_db(transaction=True)
def test_concurrent_settle_requests_make_one_draft(make_key, owner):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {make_key()}")
    pay(usdc_draft(client))
    key = make_key("fees:write")

    def settle() -> int:
        c = APIClient()
        c.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
        return c.post("/api/v1/fees/accrued/settle", {"currency": "USDC", "network": "Base"}, format="json").status_code

    statuses = run_at_once(5, settle)
    assert sorted(statuses) == [201, 409, 409, 409, 409]
    assert Draft.objects.filter(is_fee_settlement=True).count() == 1


@pytest.mark.django_db
def test_an_operator_can_waive_an_entry_with_a_reason(api_client, client):
    pay(usdc_draft(api_client))
    entry = AccruedFee.objects.get()
    operator = User.objects.create_superuser("ops@example.com", "operator passphrase")
    operator_sign_in(client, operator)
    page = client.get(reverse("admin:fees_accruedfee_changelist"))
    assert page.status_code == 200 and b"owner@example.com" in page.content and b"Outstanding balances" in page.content
    url = reverse("admin:fees_accruedfee_change", args=[entry.pk])
    response = client.post(url, {"waived_reason": "Goodwill after outage"})
    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.status == "Waived" and entry.waived_reason == "Goodwill after outage"
    assert api_client.get("/api/v1/fees/accrued").json()["draftCount"] == 0
