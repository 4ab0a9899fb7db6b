"""Receivers that can never be paid are refused at creation with a field error."""

import pytest

from drafts.models import Draft
from tests.drafts.conftest import ADDRESSES

pytestmark = pytest.mark.django_db

USDC_SOLANA_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (
            {"network": "Base", "currency": "USDC", "receiverAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
            "USDC token contract",
        ),
        (
            {"network": "Base", "currency": "ETH", "receiverAddress": "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"},
            "USDC token contract",
        ),
        ({"network": "Solana", "currency": "USDC", "receiverAddress": USDC_SOLANA_MINT}, "USDC token mint"),
        ({"network": "Solana", "currency": "SOL", "receiverAddress": "11111111111111111111111111111111"}, "System"),
        (
            {"network": "Solana", "currency": "SOL", "receiverAddress": "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"},
            "SPL Token Program",
        ),
        (
            {"network": "Solana", "currency": "SOL", "receiverAddress": "So11111111111111111111111111111111111111112"},
            "wrapped SOL mint",
        ),
        (
            {"network": "Ethereum", "currency": "ETH", "receiverAddress": "0x0000000000000000000000000000000000000001"},
            "precompile",
        ),
    ],
)
def test_a_contract_mint_or_program_as_receiver_is_refused(create, body, says):
    response = create({**body, "amountSats": 1_000_000})
    assert response.status_code == 400
    error = response.json()["errors"][0]
    assert error["field"] == "receiverAddress" and error["code"] == "unpayable_receiver"
    assert says in error["message"]
    assert not Draft.objects.exists()


@pytest.mark.parametrize("method", ["MultiOutput", "SingleOutput"])
def test_a_bitcoin_output_below_the_dust_limit_is_refused(create, method):
    body = {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "paymentMethod": method}
    response = create({**body, "amountSats": 545})
    assert response.status_code == 400
    assert response.json()["errors"][0] | {"message": ""} == {
        "field": "amountSats",
        "code": "amount_below_dust",
        "message": "",
    }
    assert create({**body, "amountSats": 546}).status_code == 201


def test_a_fiat_priced_bitcoin_draft_worth_less_than_dust_names_the_fiat_amount(create):
    body = {"network": "Testnet", "receiverAddress": ADDRESSES["Testnet"], "fiatCurrency": "USD", "fiatAmount": 0.01}
    response = create(body)
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "fiatAmount"


def test_tiny_amounts_stay_fine_where_there_is_no_dust_rule(create):
    body = {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 1}
    assert create(body).status_code == 201
