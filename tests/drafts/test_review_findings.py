"""Findings of the hostile review of draft creation and matching, kept fixed."""

from __future__ import annotations

import pytest

from chainwatch.matching import match_network
from chainwatch.models import ObservedTransfer
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.enums import Currency, Network
from tests.drafts.conftest import ADDRESSES
from tests.factories import make_draft

pytestmark = pytest.mark.django_db
USDC_BASE = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"]}


def test_a_lightning_address_draft_without_an_amount_is_a_400_naming_the_amount(create, lnurl_server):
    response = create({"network": "Mainnet", "lightningAddress": lnurl_server.address})
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "required" and body["errors"][0]["field"] == "amountSats"
    assert lnurl_server.callbacks == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 9223372036854775807},
            "amountSats",
        ),
        (
            {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 2_100_000_000_000_001},
            "amountSats",
        ),
        ({**USDC_BASE, "amountSats": 10**18 + 1}, "amountSats"),
        ({**USDC_BASE, "fiatCurrency": "USD", "fiatAmount": 999999999999}, "fiatAmount"),
        (
            {
                "network": "Ethereum",
                "currency": "ETH",
                "receiverAddress": ADDRESSES["Ethereum"],
                "amountSats": 10**18 + 1,
            },
            "amountSats",
        ),
    ],
)
def test_an_amount_above_the_asset_supply_is_refused_at_creation(create, body, field):
    response = create(body)
    assert response.status_code == 400, response.json()
    assert response.json()["code"] == "amount_too_large"
    assert response.json()["errors"][0]["field"] == field
    assert not Draft.objects.exists()


def test_an_amount_whose_fee_output_would_pass_the_supply_is_refused(create):
    response = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 21_000_000 * 10**8})
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "amountSats"


def test_a_huge_but_possible_bitcoin_draft_still_has_a_tx_template(create, api_client):
    response = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 20_999_999 * 10**8})
    assert response.status_code == 201
    template = api_client.get(f"/api/v1/drafts/{response.json()['id']}/tx-template")
    assert template.status_code == 200
    assert template.json()["outputs"][0]["amountBtc"] == "20999999.00000000"


def test_an_exact_collision_names_only_the_callers_own_draft(create):
    body = {**USDC_BASE, "amountSats": 5_000_000}
    first = create(body).json()
    clash = create(body)
    assert clash.status_code == 409
    assert clash.json()["openDraftId"] == first["id"] and first["id"] in clash.json()["detail"]


def test_another_account_cannot_block_an_exact_amount_or_learn_its_draft(create, client_with_scopes, other_account):
    body = {**USDC_BASE, "amountSats": 5_000_000}
    theirs = client_with_scopes("drafts:write", user=other_account).post("/api/v1/drafts", body, format="json")
    assert theirs.status_code == 201
    mine = create(body)
    assert mine.status_code == 201, mine.json()
    assert theirs.json()["id"] not in mine.content.decode()


def test_fiat_drafts_are_nudged_past_every_accounts_open_amounts(create, client_with_scopes, other_account):
    body = {**USDC_BASE, "fiatCurrency": "USD", "fiatAmount": 12.34}
    theirs = client_with_scopes("drafts:write", user=other_account).post("/api/v1/drafts", body, format="json")
    mine = create(body).json()
    assert mine["amountSats"] == theirs.json()["amountSats"] + 1
    assert theirs.json()["id"] not in str(mine)


def test_a_collision_inside_a_batch_is_that_items_outcome(api_client):
    item = {"draft": {**USDC_BASE, "amountSats": 7_000_000}}
    response = api_client.post("/api/v1/drafts/batch", {"items": [item, item]}, format="json")
    assert response.status_code == 200
    first, second = response.json()
    assert first["error"] is None and first["draft"]["amountSats"] == 7_000_000
    assert "draft" not in second and second["error"].startswith("amount_collision")
    assert Draft.objects.count() == 1


def test_a_transfer_that_fits_drafts_of_two_accounts_pays_neither(owner, other_account):
    mine = make_draft(owner, required_confirmations=1)
    theirs = make_draft(other_account, required_confirmations=1)
    ObservedTransfer.objects.create(
        network=Network.ETHEREUM,
        txid="0xboth",
        index=0,
        currency=Currency.USDC,
        token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        receiver_address=mine.receiver_address.lower(),
        amount_base_units=mine.amount_base_units,
        block_height=100,
        block_hash="0xblock",
    )
    match_network(network=Network.ETHEREUM, head=100)
    mine.refresh_from_db()
    theirs.refresh_from_db()
    assert mine.status == theirs.status == DraftStatus.PENDING
    assert ObservedTransfer.objects.get(txid="0xboth").draft_id is None


def test_a_transfer_that_fits_one_accounts_draft_still_pays_it(owner, other_account):
    mine = make_draft(owner, required_confirmations=1)
    make_draft(other_account, amount_base_units=mine.amount_base_units + 5, required_confirmations=1)
    ObservedTransfer.objects.create(
        network=Network.ETHEREUM,
        txid="0xmine",
        index=0,
        currency=Currency.USDC,
        token_address="0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        receiver_address=mine.receiver_address.lower(),
        amount_base_units=mine.amount_base_units,
        block_height=100,
        block_hash="0xblock",
    )
    match_network(network=Network.ETHEREUM, head=100)
    mine.refresh_from_db()
    assert mine.status == DraftStatus.CONFIRMED
