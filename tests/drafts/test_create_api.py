"""POST /api/v1/drafts for every supported combination, exact or fiat-priced."""

from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import parse_qs, urlsplit

import pytest

from drafts.api.serializers import DraftResponseSerializer
from drafts.models import Draft
from payments.rates import get_rate
from payments.registry import all_assets, get_asset
from tests.drafts.conftest import ADDRESSES, FEE_ADDRESSES
from tests.openapi import errors_against
from tests.payments.test_registry import MAINNET_SUPPORTED
from webhooks.models import Event

pytestmark = pytest.mark.django_db

ON_CHAIN = [(a.currency.value, a.network.value, m.value) for a in all_assets() for m in a.methods if m != "Lightning"]


def test_drafts_are_tried_for_every_mainnet_combination_of_the_spec():
    assert MAINNET_SUPPORTED <= {(c, n) for c, n, _ in ON_CHAIN}


@pytest.mark.parametrize(("currency", "network", "method"), ON_CHAIN)
def test_an_exact_amount_draft_can_be_created_for_every_combination(create, owner, settings, currency, network, method):
    if network not in settings.ENABLED_NETWORKS:  # Signet and Regtest are off unless named
        settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, network]
    response = create(
        {
            "network": network,
            "currency": currency,
            "paymentMethod": method,
            "receiverAddress": ADDRESSES[network],
            "amountSats": 1_234_567,
        }
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert set(body) == set(DraftResponseSerializer().fields) - {"amountMismatch"}
    assert errors_against(body, "DraftResponse") == []
    assert (body["currency"], body["network"], body["paymentMethod"]) == (currency, network, method)
    assert body["amountSats"] == 1_234_567 and body["status"] == "Pending"
    assert body["receiverAddress"] == ADDRESSES[network]
    draft = Draft.objects.get(pk=body["id"])
    assert draft.user == owner
    assert list(Event.objects.filter(draft_id=draft.id).values_list("type", flat=True)) == ["draft.created"]
    asset = get_asset(currency, network)
    assert body["tokenAddress"] == (asset.token_address if asset.kind == "token" else None)
    assert (
        body["paymentUri"].split(":")[0] == {"bitcoin": "bitcoin", "solana": "solana", "evm": "ethereum"}[asset.family]
    )


@pytest.mark.parametrize(
    ("currency", "network"),
    [("USDC", "Base"), ("EURC", "Ethereum"), ("SOL", "Solana"), ("BTC", "Mainnet"), ("ETH", "Ethereum")],
)
def test_a_fiat_priced_draft_locks_a_quote_and_converts_half_up(create, currency, network):
    response = create(
        {
            "network": network,
            "currency": currency,
            "receiverAddress": ADDRESSES[network],
            "fiatCurrency": "EUR",
            "fiatAmount": 25,
        }
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    asset = get_asset(currency, network)
    rate = get_rate(asset.price_currency, "EUR").rate
    expected = int((Decimal(25) / rate * 10**asset.decimals).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    assert body["amountSats"] == expected
    assert body["fiatCurrency"] == "EUR" and body["fiatAmount"] == 25
    quote = body["quote"]
    assert quote["fiatCurrency"] == "EUR" and quote["asset"] == currency
    assert Decimal(str(quote["rate"])) == rate
    assert quote["expiresAt"] > quote["lockedAt"]
    assert body["sek"]["amount"] > 0


def test_a_multi_output_bitcoin_draft_carries_the_fee_as_an_output(create):
    body = create(
        {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "fiatCurrency": "USD", "fiatAmount": 1000}
    ).json()
    assert body["paymentMethod"] == "MultiOutput"
    fee = body["platformFee"]
    assert fee["placement"] == "Output" and not fee["accrued"] and not fee["waived"]
    assert fee["percent"] == 0.14 and fee["feeUsd"] == 1.4
    assert body["platformFeeAddress"] == FEE_ADDRESSES["Mainnet"]
    assert body["feeOutputs"] == [
        {"address": FEE_ADDRESSES["Mainnet"], "amountSats": body["platformFeeSats"], "purpose": "PlatformFee"}
    ]
    assert body["platformFeeSats"] == fee["feeBaseUnits"] > 546
    assert body["feeAccrued"] is False


def test_single_output_drafts_accrue_their_fee(create):
    body = create(
        {"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 25_000_000}
    ).json()
    assert body["feeAccrued"] is True and body["feeOutputs"] is None and body["platformFeeSats"] == 0
    assert body["platformFee"]["placement"] == "Accrued"
    assert body["platformFee"]["feeBaseUnits"] == 97_500  # 0.39% of 25 USDC, exact at a USD peg of 1


def test_a_dust_fee_is_waived_within_the_daily_allowance(create, settings):
    settings.FEE_DUST_WAIVERS_PER_DAY = 2
    placements = []
    for sats in (10_000, 10_001, 10_002):
        body = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": sats}).json()
        placements.append(body["platformFee"]["placement"])
    assert placements == ["Waived", "Waived", "Accrued"]


def test_without_an_operator_fee_address_the_fee_accrues(create, settings):
    settings.PLATFORM_FEE_ADDRESSES = {}
    body = create({"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 5_000_000}).json()
    assert body["platformFee"]["placement"] == "Accrued" and body["feeOutputs"] is None


def test_single_output_true_means_single_output_for_bitcoin(create):
    body = create(
        {"network": "Mainnet", "receiverAddress": ADDRESSES["Mainnet"], "amountSats": 5_000_000, "singleOutput": True}
    ).json()
    assert body["paymentMethod"] == "SingleOutput" and body["feeAccrued"] is True


def test_bip21_uri_carries_the_exact_btc_amount(create):
    body = create(
        {
            "network": "Mainnet",
            "receiverAddress": ADDRESSES["Mainnet"],
            "amountSats": 123_456_789,
            "memo": "Invoice #42 & more",
        }
    ).json()
    parts = urlsplit(body["paymentUri"])
    assert parts.scheme == "bitcoin" and parts.path == ADDRESSES["Mainnet"]
    query = parse_qs(parts.query)
    assert query["amount"] == ["1.23456789"] and query["message"] == ["Invoice #42 & more"]
    assert body["amountBtc"] == "1.23456789"


def test_solana_drafts_carry_a_unique_reference_in_their_uri(create):
    first = create(
        {"network": "Solana", "currency": "USDC", "receiverAddress": ADDRESSES["Solana"], "amountSats": 1_500_000}
    ).json()
    second = create(
        {"network": "Solana", "currency": "USDC", "receiverAddress": ADDRESSES["Solana"], "amountSats": 1_500_000}
    ).json()
    assert first["solanaReference"] != second["solanaReference"]
    query = parse_qs(urlsplit(first["paymentUri"]).query)
    assert query["reference"] == [first["solanaReference"]]
    assert query["amount"] == ["1.5"] and query["spl-token"] == [get_asset("USDC", "Solana").token_address]


def test_eip681_converts_gwei_to_wei_exactly(create):
    body = create(
        {"network": "Base", "currency": "ETH", "receiverAddress": ADDRESSES["Base"], "amountSats": 1_234_567_891}
    ).json()
    parts = urlsplit(body["paymentUri"])
    assert parts.path == f"{ADDRESSES['Base']}@8453"
    assert parse_qs(parts.query)["value"] == [str(1_234_567_891 * 10**9)]


def test_an_erc20_uri_names_the_token_contract_and_the_units(create):
    body = create(
        {"network": "Ethereum", "currency": "USDT", "receiverAddress": ADDRESSES["Ethereum"], "amountSats": 42_000_000}
    ).json()
    parts = urlsplit(body["paymentUri"])
    assert parts.path == f"{get_asset('USDT', 'Ethereum').token_address}@1/transfer"
    query = parse_qs(parts.query)
    assert query["address"] == [ADDRESSES["Ethereum"]] and query["uint256"] == ["42000000"]


def test_a_created_draft_answers_201_with_a_location_that_reads_it_back(create, api_client):
    response = create({"network": "Base", "currency": "USDC", "receiverAddress": ADDRESSES["Base"], "amountSats": 5})

    assert response.status_code == 201
    assert response["Location"] == f"http://testserver/api/v1/drafts/{response.json()['id']}"
    assert api_client.get(urlsplit(response["Location"]).path).json() == response.json()


REGTEST_ADDRESS = "bcrt1q50rtrmj2f8vl9tem8qpfw36ylw5jg9j2dkku3w"


def test_a_regtest_draft_is_refused_until_enabled_networks_names_regtest(create, settings):
    body = {"network": "Regtest", "receiverAddress": REGTEST_ADDRESS, "amountSats": 50_000}
    refused = create(body)
    assert refused.status_code == 400 and refused.json()["code"] == "network_disabled"

    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Regtest"]
    made = create(body)
    assert made.status_code == 201, made.json()
    assert made.json()["paymentUri"].startswith(f"bitcoin:{REGTEST_ADDRESS}?amount=")


def test_a_signet_draft_takes_a_tb1_address_and_refuses_a_bcrt1_one(create, settings):
    settings.ENABLED_NETWORKS = [*settings.ENABLED_NETWORKS, "Signet"]
    ok = create({"network": "Signet", "receiverAddress": ADDRESSES["Signet"], "amountSats": 50_000})
    assert ok.status_code == 201, ok.json()
    wrong = create({"network": "Signet", "receiverAddress": REGTEST_ADDRESS, "amountSats": 50_000})
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["field"] == "receiverAddress"
