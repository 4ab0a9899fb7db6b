"""Where a person can look a transaction up: one public block explorer per network."""

from __future__ import annotations

from urllib.parse import quote

from payments.enums import Method

_TX_URLS = {
    "Mainnet": "https://mempool.space/tx/{}",
    "Testnet": "https://mempool.space/testnet4/tx/{}",
    "Signet": "https://mempool.space/signet/tx/{}",
    "Ethereum": "https://etherscan.io/tx/{}",
    "Sepolia": "https://sepolia.etherscan.io/tx/{}",
    "Base": "https://basescan.org/tx/{}",
    "BaseSepolia": "https://sepolia.basescan.org/tx/{}",
    "Solana": "https://explorer.solana.com/tx/{}",
    "SolanaDevnet": "https://explorer.solana.com/tx/{}?cluster=devnet",
}


def tx_url(*, network: str, method: str, tx_id: str) -> str | None:
    """The explorer page of an on-chain transaction; None for Lightning (a payment hash is on
    no chain) and for regtest (a local chain)."""
    template = _TX_URLS.get(network)
    if template is None or method == Method.LIGHTNING or not tx_id:
        return None
    return template.format(quote(tx_id, safe=""))
