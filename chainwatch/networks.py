"""Per-network facts the watchers need: which watchers run, and where their nodes are.

Asset facts (families, chain ids, token contracts and mints, decimals) come from
payments/registry.py; only node endpoints are configured here.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from payments.registry import all_assets, network_info

BITCOIN, EVM, SOLANA, LIGHTNING = "bitcoin", "evm", "solana", "lightning"


def family_of(network: str) -> str:
    return network_info(network).family


def chain_id_of(network: str) -> int | None:
    return network_info(network).chain_id


def token_addresses(network: str) -> dict[str, str]:
    """Currency -> contract/mint on `network`, as the registry has it (TOKEN_ADDRESSES included)."""
    return {a.currency: a.token_address for a in all_assets() if a.network == network and a.kind == "token"}


def token_address(network: str, currency: str) -> str | None:
    return token_addresses(network).get(currency)


@dataclass(frozen=True)
class Endpoints:
    rpc_url: str
    esplora_url: str
    bitcoin_rpc_url: str
    ws_url: str = ""
    zmq_url: str = ""


def endpoints(network: str) -> Endpoints:
    configured = settings.CHAINWATCH_ENDPOINTS.get(network, {})
    return Endpoints(
        rpc_url=configured.get("rpc_url", ""),
        esplora_url=configured.get("esplora_url", ""),
        bitcoin_rpc_url=configured.get("bitcoin_rpc_url", ""),
        ws_url=configured.get("ws_url", "") or websocket_url_of(configured.get("rpc_url", "")),
        zmq_url=configured.get("zmq_url", ""),
    )


def websocket_url_of(rpc_url: str) -> str:
    """The WebSocket address a JSON-RPC node serves beside its HTTP one (same host and port, as
    anvil and Solana's validator do; geth and most providers need WS_URL_<NETWORK> instead)."""
    if rpc_url.startswith("https://"):
        return "wss://" + rpc_url.removeprefix("https://")
    if rpc_url.startswith("http://"):
        return "ws://" + rpc_url.removeprefix("http://")
    return ""


def bitcoin_source(network: str) -> str | None:
    """'core' or 'esplora' for a Bitcoin network, or None when neither is configured."""
    chosen = settings.CHAINWATCH_BITCOIN_SOURCE.get(network, "")
    ends = endpoints(network)
    if chosen == "esplora" or (not chosen and not ends.bitcoin_rpc_url):
        return "esplora" if ends.esplora_url else None
    return "core" if ends.bitcoin_rpc_url else None


def lightning_configured() -> bool:
    # LUD-21 verify URLs come with each draft, so Lightning watching needs no endpoint.
    return settings.CHAINWATCH_LIGHTNING_ENABLED


def watchers(*, with_endpoint: bool = False) -> list[tuple[str, str]]:
    """(network, family) of every watcher that is enabled and configured. Lightning needs no
    endpoint of ours (LUD-21 verify URLs come with each draft); `with_endpoint` leaves it out
    unless an LND or LNbits node is configured."""
    found = []
    for network in settings.ENABLED_NETWORKS:
        family = family_of(network)
        ends = endpoints(network)
        if family == BITCOIN:
            if bitcoin_source(network):
                found.append((network, BITCOIN))
            has_node = bool(settings.LND_REST_URL or settings.LNBITS_URL)
            if lightning_configured() and (has_node or not with_endpoint):
                found.append((network, LIGHTNING))
        elif ends.rpc_url:
            found.append((network, family))
    return found
