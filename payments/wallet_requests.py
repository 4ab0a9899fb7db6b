"""What a payer's browser wallet is asked to send for a draft on an EVM network.

The pay page hands these to its script as data (paylinks/static/paylinks/wallet.js): the
wallet is asked for exactly the draft's transfer, built here from the registry's chain id and
token contract, never from anything the payer or the page could change.

- A token: a call of the token contract's ERC-20 `transfer(address,uint256)` (selector
  0xa9059cbb) with the receiver and the draft's base units, no value. Never an approval, never
  another contract.
- ETH: a plain value transfer to the receiver, in wei (the service counts ETH in gwei: 10**9
  wei each), no data.

The fields are those of EIP-1193's `eth_sendTransaction` (hex quantities, `chainId` included
so a wallet on another chain refuses rather than pays there). `wallet_addEthereumChain`
(EIP-3085) parameters are given for the Base networks, which a wallet may not know yet; every
wallet knows Ethereum and Sepolia.
"""

from __future__ import annotations

import re
from typing import Any

from payments.enums import Network
from payments.registry import Asset

TRANSFER_SELECTOR = "a9059cbb"  # keccak256("transfer(address,uint256)")[:4]
WEI_PER_GWEI = 10**9
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")

# EIP-3085 parameters, as Base's documentation lists its networks
# (https://docs.base.org/base-chain/quickstart/connecting-to-base).
ADD_CHAIN: dict[str, dict[str, Any]] = {
    Network.BASE: {
        "chainId": hex(8453),
        "chainName": "Base",
        "nativeCurrency": {"name": "Ether", "symbol": "ETH", "decimals": 18},
        "rpcUrls": ["https://mainnet.base.org"],
        "blockExplorerUrls": ["https://basescan.org"],
    },
    Network.BASE_SEPOLIA: {
        "chainId": hex(84532),
        "chainName": "Base Sepolia",
        "nativeCurrency": {"name": "Sepolia Ether", "symbol": "ETH", "decimals": 18},
        "rpcUrls": ["https://sepolia.base.org"],
        "blockExplorerUrls": ["https://sepolia.basescan.org"],
    },
}


def _word(value: int) -> str:
    return format(value, "064x")


def transfer_calldata(recipient: str, amount: int) -> str:
    """`transfer(recipient, amount)` ABI-encoded: the selector, then two 32-byte words."""
    if not _ADDRESS.fullmatch(recipient):
        raise ValueError(f"not an EVM address: {recipient!r}")
    if amount <= 0 or amount >= 2**256:
        raise ValueError(f"not a uint256 amount: {amount!r}")
    return "0x" + TRANSFER_SELECTOR + _word(int(recipient, 16)) + _word(amount)


def evm_wallet_request(*, asset: Asset, recipient: str, amount_base_units: int) -> dict[str, Any]:
    """The transaction a wallet is asked to send (EIP-1193 `eth_sendTransaction` parameters
    but `from`, which the wallet gives), the chain it must be on, and how to add that chain."""
    if asset.family != "evm" or asset.chain_id is None:
        raise ValueError(f"{asset.currency} on {asset.network} is not on an EVM network")
    if not _ADDRESS.fullmatch(recipient):
        raise ValueError(f"not an EVM address: {recipient!r}")
    chain_id = hex(asset.chain_id)
    if asset.kind == "token":
        if asset.token_address is None or not _ADDRESS.fullmatch(asset.token_address):
            raise ValueError(f"no token contract for {asset.currency} on {asset.network}")
        transaction = {
            "to": asset.token_address,
            "value": "0x0",
            "data": transfer_calldata(recipient, amount_base_units),
            "chainId": chain_id,
        }
    else:
        transaction = {"to": recipient, "value": hex(amount_base_units * WEI_PER_GWEI), "chainId": chain_id}
    return {"chainId": chain_id, "transaction": transaction, "addChain": ADD_CHAIN.get(asset.network)}
