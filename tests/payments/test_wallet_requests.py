"""What a browser wallet is asked to send for a draft (payments/wallet_requests.py), decoded
with eth_abi as a wallet and the chain decode it."""

import pytest
from eth_abi import decode
from eth_utils import keccak

from payments.registry import get_asset
from payments.wallet_requests import TRANSFER_SELECTOR, evm_wallet_request, transfer_calldata

RECEIVER = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"


def test_the_selector_is_erc20_transfer():
    assert TRANSFER_SELECTOR == keccak(text="transfer(address,uint256)")[:4].hex()


def test_a_token_draft_asks_for_the_registry_tokens_transfer_of_the_exact_base_units_on_its_chain():
    asset = get_asset("USDC", "Sepolia")
    request = evm_wallet_request(asset=asset, recipient=RECEIVER, amount_base_units=18_523_417)
    transaction = request["transaction"]
    assert request["chainId"] == transaction["chainId"] == hex(11155111)
    assert transaction["to"] == "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238" == asset.token_address
    assert transaction["value"] == "0x0"
    data = bytes.fromhex(transaction["data"][2:])
    assert data[:4] == keccak(text="transfer(address,uint256)")[:4] and len(data) == 4 + 64
    assert decode(["address", "uint256"], data[4:]) == (RECEIVER.lower(), 18_523_417)
    assert request["addChain"] is None  # every wallet knows Sepolia


def test_an_eth_draft_asks_for_a_plain_transfer_in_wei_with_no_data():
    asset = get_asset("ETH", "BaseSepolia")
    request = evm_wallet_request(asset=asset, recipient=RECEIVER, amount_base_units=2_412_345)  # gwei
    assert request["transaction"] == {"to": RECEIVER, "value": hex(2_412_345 * 10**9), "chainId": hex(84532)}
    assert request["addChain"]["chainId"] == hex(84532) and request["addChain"]["rpcUrls"] == [
        "https://sepolia.base.org"
    ]


def test_base_comes_with_the_parameters_to_add_it():
    request = evm_wallet_request(asset=get_asset("USDC", "Base"), recipient=RECEIVER, amount_base_units=1)
    assert request["addChain"]["chainId"] == hex(8453) and request["addChain"]["chainName"] == "Base"
    assert request["addChain"]["nativeCurrency"]["decimals"] == 18


@pytest.mark.parametrize("amount", [0, -1, 2**256])
def test_an_amount_outside_uint256_is_refused(amount):
    with pytest.raises(ValueError):
        transfer_calldata(RECEIVER, amount)


def test_a_non_evm_asset_or_receiver_is_refused():
    with pytest.raises(ValueError):
        evm_wallet_request(asset=get_asset("BTC", "Mainnet"), recipient=RECEIVER, amount_base_units=1)
    with pytest.raises(ValueError):
        evm_wallet_request(asset=get_asset("USDC", "Base"), recipient="0x1234", amount_base_units=1)
