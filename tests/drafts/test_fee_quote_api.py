"""POST /api/v1/fees/quote: the fee a draft of an amount would get, with nothing created."""

import pytest

from drafts.models import Draft

pytestmark = pytest.mark.django_db


def quote(client, body):
    return client.post("/api/v1/fees/quote", body, format="json")


def test_it_prices_a_fiat_amount_as_a_draft_would_and_creates_nothing(api_client, create):
    body = {"network": "Base", "currency": "USDC", "fiatCurrency": "EUR", "fiatAmount": 25}
    response = quote(api_client, body)
    assert response.status_code == 200, response.json()
    estimate = response.json()
    assert Draft.objects.count() == 0
    draft = create(body | {"receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D"}).json()
    assert estimate["amountSats"] == draft["amountSats"]
    assert estimate["platformFee"] == draft["platformFee"]
    assert estimate["paymentMethod"] == "SingleOutput" and estimate["platformFee"]["placement"] == "Accrued"


def test_a_bitcoin_fee_is_an_output_or_waived_as_dust(api_client):
    big = quote(api_client, {"network": "Testnet", "currency": "BTC", "amountSats": 5_000_000}).json()
    assert big["paymentMethod"] == "MultiOutput" and big["platformFee"]["placement"] == "Output"
    small = quote(api_client, {"network": "Testnet", "currency": "BTC", "amountSats": 10_000}).json()
    assert small["platformFee"]["placement"] == "Waived" and small["platformFee"]["feeBaseUnits"] < 546


def test_a_dust_fee_is_quoted_waived_only_while_todays_allowance_lasts(api_client, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 1
    small = {"network": "Testnet", "currency": "BTC", "amountSats": 10_000}
    assert quote(api_client, small).json()["platformFee"]["placement"] == "Waived"
    receiver = {"receiverAddress": "tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx"}
    first = api_client.post("/api/v1/drafts", small | receiver, format="json").json()
    assert first["platformFee"]["placement"] == "Waived"  # the day's one waiver, spent
    estimate = quote(api_client, small).json()["platformFee"]
    assert estimate["placement"] == "Accrued"
    second = api_client.post("/api/v1/drafts", small | {**receiver, "amountSats": 10_001}, format="json").json()
    assert second["platformFee"]["placement"] == estimate["placement"]


def test_bad_input_names_the_field(api_client):
    missing = quote(api_client, {"network": "Base", "currency": "USDC"})
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "amountSats"
    unsupported = quote(api_client, {"network": "Base", "currency": "USDT", "amountSats": 5})
    assert unsupported.status_code == 400 and unsupported.json()["code"] == "unsupported_combination"
    address = quote(api_client, {"network": "Base", "currency": "USDC", "amountSats": 5, "receiverAddress": "0x1"})
    assert address.status_code == 400 and address.json()["errors"][0] == {
        "field": "receiverAddress",
        "code": "unknown_field",
        "message": "Unknown field.",
    }


def test_it_needs_the_fees_read_scope(client_with_scopes):
    body = {"network": "Base", "currency": "USDC", "amountSats": 5_000_000}
    assert quote(client_with_scopes("drafts:read"), body).status_code == 403
    assert quote(client_with_scopes("fees:read"), body).status_code == 200
