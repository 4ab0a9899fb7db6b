"""Links to a public block explorer for a transaction, per network.

The defaults below can be replaced per network (BLOCK_EXPLORER_URL_<NETWORK>, an https URL
with `{txid}` where the id goes; an empty value turns the link off for that network). Lightning payments have no public
transaction to link to."""

from __future__ import annotations

from urllib.parse import quote

from django.conf import settings

from payments.enums import Method, Network

DEFAULT_BLOCK_EXPLORERS: dict[str, str] = {
    Network.MAINNET: "https://mempool.space/tx/{txid}",
    Network.TESTNET: "https://mempool.space/testnet4/tx/{txid}",
    Network.SIGNET: "https://mempool.space/signet/tx/{txid}",
    Network.REGTEST: "",
    Network.ETHEREUM: "https://etherscan.io/tx/{txid}",
    Network.SEPOLIA: "https://sepolia.etherscan.io/tx/{txid}",
    Network.BASE: "https://basescan.org/tx/{txid}",
    Network.BASE_SEPOLIA: "https://sepolia.basescan.org/tx/{txid}",
    Network.SOLANA: "https://explorer.solana.com/tx/{txid}",
    Network.SOLANA_DEVNET: "https://explorer.solana.com/tx/{txid}?cluster=devnet",
}


def explorer_tx_url(*, network: str, txid: str | None, method: str | None = None) -> str | None:
    """The explorer's page of this transaction, or None (no txid, Lightning, or turned off)."""
    if not txid or method == Method.LIGHTNING:
        return None
    template = settings.BLOCK_EXPLORER_URLS.get(network, DEFAULT_BLOCK_EXPLORERS.get(network, ""))
    if not template:
        return None
    return template.replace("{txid}", quote(txid, safe=""))
