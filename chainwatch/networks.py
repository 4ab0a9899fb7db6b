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
    return {
        a.currency: a.token_address
        for a in all_assets()
        if a.network == network and a.kind == "token" and a.token_address is not None
    }


def token_address(network: str, currency: str) -> str | None:
    return token_addresses(network).get(currency)


@dataclass(frozen=True)
class Endpoints:
    rpc_url: str
    esplora_url: str
    bitcoin_rpc_url: str
    ws_url: str = ""
    zmq_url: str = ""


def url_list(value: str) -> list[str]:
    """The endpoints of a comma-separated setting (RPC_URL_<NETWORK> and the like), in order."""
    return [url.strip() for url in (value or "").split(",") if url.strip()]


def endpoints(network: str, choice: int = 0) -> Endpoints:
    """The network's endpoints; with several configured per kind (a comma-separated list),
    the `choice`-th of each (the first when a kind has fewer)."""
    configured = settings.CHAINWATCH_ENDPOINTS.get(network, {})

    def pick(kind: str) -> str:
        urls = url_list(configured.get(kind, ""))
        return urls[min(choice, len(urls) - 1)] if urls else ""

    rpc_url = pick("rpc_url")
    return Endpoints(
        rpc_url=rpc_url,
        esplora_url=pick("esplora_url"),
        bitcoin_rpc_url=pick("bitcoin_rpc_url"),
        ws_url=configured.get("ws_url", "") or websocket_url_of(rpc_url),
        zmq_url=configured.get("zmq_url", ""),
    )


def chain_urls(network: str) -> list[str]:
    """Every endpoint the network's block watcher may read (the kind it uses: RPC_URL for EVM
    and Solana, BITCOIN_RPC_URL or ESPLORA_URL for Bitcoin, whichever bitcoin_source picks)."""
    configured = settings.CHAINWATCH_ENDPOINTS.get(network, {})
    if family_of(network) == BITCOIN:
        kind = {"core": "bitcoin_rpc_url", "esplora": "esplora_url"}.get(bitcoin_source(network) or "", "")
        return url_list(configured.get(kind, "")) if kind else []
    return url_list(configured.get("rpc_url", ""))


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
