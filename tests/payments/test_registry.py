from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ImproperlyConfigured
from web3 import Web3

from core.problems import Problem
from payments.enums import Currency, Method, Network
from payments.registry import (
    all_assets,
    default_method,
    format_amount,
    get_asset,
    require_network_enabled,
    to_base_units,
)

# The spec's matrix (interface-spec.md "Asset and network support matrix" + decisions.md).
MAINNET_SUPPORTED = {
    ("BTC", "Mainnet"),
    ("BTC", "Solana"),
    ("BTC", "Ethereum"),
    ("USDC", "Solana"),
    ("USDC", "Ethereum"),
    ("USDC", "Base"),
    ("USDT", "Solana"),
    ("USDT", "Ethereum"),
    ("EURC", "Solana"),
    ("EURC", "Ethereum"),
    ("EURC", "Base"),
    ("SOL", "Solana"),
    ("ETH", "Ethereum"),
    ("ETH", "Base"),
}
MAINNETS = ["Mainnet", "Solana", "Ethereum", "Base"]


def test_the_mainnet_matrix_is_exactly_the_specs():
    found = {(a.currency.value, a.network.value) for a in all_assets() if not a.is_testnet}
    assert found == MAINNET_SUPPORTED


@pytest.mark.parametrize("currency", [c.value for c in Currency])
@pytest.mark.parametrize("network", MAINNETS)
def test_every_unsupported_mainnet_combination_is_a_400(currency, network):
    if (currency, network) in MAINNET_SUPPORTED:
        assert get_asset(currency, network).currency == currency
        return
    with pytest.raises(Problem) as caught:
        get_asset(currency, network)
    assert caught.value.status_code == 400
    assert caught.value.code == "unsupported_combination"
    assert {e["field"] for e in caught.value.errors} == {"currency", "network"}


@pytest.mark.parametrize(
    "currency,network,address",
    [
        ("USDC", "Solana", "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"),
        ("USDC", "Ethereum", "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"),
        ("USDC", "Base", "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"),
        ("USDT", "Solana", "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB"),
        ("USDT", "Ethereum", "0xdAC17F958D2ee523a2206206994597C13D831ec7"),
        ("EURC", "Solana", "HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr"),
        ("EURC", "Ethereum", "0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c"),
        ("EURC", "Base", "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42"),
        ("BTC", "Ethereum", "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599"),
        ("BTC", "Solana", "cbbtcf3aa214zXHbiAZQwf4122FBYbraNdFqgw4iMij"),
    ],
)
def test_mainnet_tokens_carry_the_issuers_addresses(currency, network, address):
    asset = get_asset(currency, network)
    assert asset.kind == "token"
    assert asset.token_address == address


def test_evm_token_addresses_are_in_eip55_form():
    for asset in all_assets():
        if asset.family == "evm" and asset.token_address:
            assert Web3.is_checksum_address(asset.token_address), asset


@pytest.mark.parametrize(
    "currency,network,decimals",
    [
        ("BTC", "Mainnet", 8),
        ("BTC", "Ethereum", 8),
        ("BTC", "Solana", 8),
        ("USDC", "Base", 6),
        ("USDT", "Solana", 6),
        ("EURC", "Ethereum", 6),
        ("SOL", "Solana", 9),
        ("ETH", "Ethereum", 9),
        ("ETH", "Base", 9),
    ],
)
def test_base_unit_decimals_follow_the_spec_with_eth_in_gwei(currency, network, decimals):
    assert get_asset(currency, network).decimals == decimals


def test_native_coins_and_wrapped_btc_are_priced_as_what_they_are():
    assert get_asset("SOL", "Solana").kind == "native"
    assert get_asset("ETH", "Base").kind == "native"
    assert get_asset("BTC", "Mainnet").kind == "native"
    assert get_asset("BTC", "Ethereum").price_currency == Currency.BTC
    assert get_asset("USDC", "Base").price_currency == Currency.USDC


def test_chain_ids_and_default_confirmations_per_network():
    assert get_asset("ETH", "Ethereum").chain_id == 1
    assert get_asset("ETH", "Sepolia").chain_id == 11155111
    assert get_asset("ETH", "Base").chain_id == 8453
    assert get_asset("ETH", "BaseSepolia").chain_id == 84532
    assert get_asset("BTC", "Mainnet").chain_id is None
    assert get_asset("BTC", "Mainnet").default_confirmations == 2
    assert get_asset("USDC", "Ethereum").default_confirmations == 12
    assert get_asset("USDC", "Base").default_confirmations == 12
    assert get_asset("SOL", "Solana").default_confirmations == 1


def test_only_bitcoin_on_chain_offers_multi_output_and_lightning():
    for asset in all_assets():
        if asset.network in (Network.MAINNET, Network.TESTNET, Network.SIGNET, Network.REGTEST):
            assert asset.methods == (Method.MULTI_OUTPUT, Method.SINGLE_OUTPUT, Method.LIGHTNING)
            assert default_method(asset) == Method.MULTI_OUTPUT
        else:
            assert asset.methods == (Method.SINGLE_OUTPUT,)
            assert default_method(asset) == Method.SINGLE_OUTPUT


def test_test_networks_mirror_their_mainnet_with_the_issuers_testnet_tokens():
    assert get_asset("BTC", "Testnet").is_testnet
    assert get_asset("USDC", "Sepolia").token_address == "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
    assert get_asset("USDC", "BaseSepolia").token_address == "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
    assert get_asset("USDC", "SolanaDevnet").token_address == "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
    assert get_asset("EURC", "Sepolia").token_address == "0x08210F9170F89Ab7658F0B5E3fF39b0E03C594D4"
    with pytest.raises(Problem):
        get_asset("USDT", "Base")  # unsupported on the mainnet, so on its test network too
    with pytest.raises(Problem):
        get_asset("USDT", "BaseSepolia")


def test_a_test_token_without_an_issuer_deployment_needs_a_configured_address(settings):
    with pytest.raises(Problem) as caught:
        get_asset("USDT", "Sepolia")
    assert caught.value.code == "unsupported_combination"
    settings.TOKEN_ADDRESSES = {"USDT": {"Sepolia": "0x5fbdb2315678afecb367f032d93f642f64180aa3"}}
    asset = get_asset("USDT", "Sepolia")
    assert asset.token_address == "0x5FbDB2315678afecb367f032d93F642f64180aa3"
    assert asset in all_assets()


def test_token_addresses_can_be_overridden_for_a_local_test_token(settings):
    settings.TOKEN_ADDRESSES = {"USDC": {"Ethereum": "0x5FbDB2315678afecb367f032d93F642f64180aa3"}}
    assert get_asset("USDC", "Ethereum").token_address == "0x5FbDB2315678afecb367f032d93F642f64180aa3"


@pytest.mark.parametrize(
    "override",
    [
        {"USDC": {"Ethereum": "0x5FbDB2315678afecb367f032d93F642f64180aA3"}},  # bad checksum
        {"SOL": {"Solana": "So11111111111111111111111111111111111111112"}},  # native coin takes no address
        {"USDT": {"Base": "0x5FbDB2315678afecb367f032d93F642f64180aa3"}},  # unsupported combination
    ],
)
def test_a_bad_token_override_stops_the_service_loudly(settings, override):
    settings.TOKEN_ADDRESSES = override
    with pytest.raises(ImproperlyConfigured):
        get_asset("BTC", "Mainnet")


def test_a_disabled_network_is_a_400_naming_the_field(settings):
    settings.ENABLED_NETWORKS = ["Mainnet", "Ethereum"]
    require_network_enabled("Mainnet")
    with pytest.raises(Problem) as caught:
        require_network_enabled("Testnet")
    assert caught.value.code == "network_disabled"
    assert caught.value.errors[0]["field"] == "network"


@pytest.mark.parametrize(
    "currency,network,units,text",
    [
        ("BTC", "Mainnet", 12345, "0.00012345"),
        ("BTC", "Mainnet", 100_000_000, "1.00000000"),
        ("BTC", "Mainnet", 0, "0.00000000"),
        ("USDC", "Base", 1_500_000, "1.500000"),
        ("ETH", "Ethereum", 1, "0.000000001"),
        ("SOL", "Solana", 2_000_000_001, "2.000000001"),
        ("BTC", "Mainnet", -5, "-0.00000005"),
    ],
)
def test_amounts_format_exactly_and_convert_back(currency, network, units, text):
    asset = get_asset(currency, network)
    assert format_amount(units, asset) == text
    assert to_base_units(Decimal(text), asset) == units


def test_an_amount_more_precise_than_the_asset_is_refused():
    with pytest.raises(Problem) as caught:
        to_base_units(Decimal("0.000000001"), get_asset("BTC", "Mainnet"))
    assert caught.value.code == "invalid_amount"
