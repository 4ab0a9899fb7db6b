"""Per-network facts the watchers need.

TEMPORARY: this small table stands in for payments/registry.py (asset matrix, token
addresses, decimals, chain ids, default confirmations), which is being written in
parallel. Replace the lookups below with the registry's once it lands; keep the
settings-driven endpoints here.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from payments.enums import Currency, Network

BITCOIN, EVM, SOLANA, LIGHTNING = "bitcoin", "evm", "solana", "lightning"

FAMILY = {
    Network.MAINNET: BITCOIN,
    Network.TESTNET: BITCOIN,
    Network.ETHEREUM: EVM,
    Network.SEPOLIA: EVM,
    Network.BASE: EVM,
    Network.BASE_SEPOLIA: EVM,
    Network.SOLANA: SOLANA,
    Network.SOLANA_DEVNET: SOLANA,
}

CHAIN_IDS = {
    Network.ETHEREUM: 1,
    Network.SEPOLIA: 11155111,
    Network.BASE: 8453,
    Network.BASE_SEPOLIA: 84532,
}

# decisions.md: Bitcoin 2, Ethereum 12, Base 12; Solana: finalized commitment counts.
DEFAULT_CONFIRMATIONS = {
    Network.MAINNET: 2,
    Network.TESTNET: 2,
    Network.ETHEREUM: 12,
    Network.SEPOLIA: 12,
    Network.BASE: 12,
    Network.BASE_SEPOLIA: 12,
    Network.SOLANA: 1,
    Network.SOLANA_DEVNET: 1,
}

# Mainnet token contracts / mints from decisions.md (issuers' docs). Test networks come
# from TOKEN_ADDRESSES until the registry lands.
_TOKEN_ADDRESSES: dict[str, dict[str, str]] = {
    Network.ETHEREUM: {
        Currency.USDC: "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48",
        Currency.USDT: "0xdAC17F958D2ee523a2206206994597C13D831ec7",
        Currency.EURC: "0x1aBaEA1f7C830bD89Acc67eC4af516284b1bC33c",
        Currency.BTC: "0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599",
    },
    Network.BASE: {
        Currency.USDC: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
        Currency.EURC: "0x60a3E35Cc302bFA44Cb288Bc5a4F316Fdb1adb42",
    },
    Network.SOLANA: {
        Currency.USDC: "EPjFWdd5AufqSSqeM2qN1xyybapC8G4wEGGkZwyTDt1v",
        Currency.USDT: "Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB",
        Currency.EURC: "HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr",
    },
}

NATIVE = {EVM: Currency.ETH, SOLANA: Currency.SOL, BITCOIN: Currency.BTC}


def env_suffix(network: str) -> str:
    """Network name as it appears in setting names: BaseSepolia -> BASE_SEPOLIA."""
    out = ""
    for i, ch in enumerate(network):
        if ch.isupper() and i:
            out += "_"
        out += ch.upper()
    return out


def token_addresses(network: str) -> dict[str, str]:
    """Currency -> contract/mint on `network`, with TOKEN_ADDRESSES overriding the defaults."""
    table = dict(_TOKEN_ADDRESSES.get(network, {}))
    table.update(settings.TOKEN_ADDRESSES.get(network, {}))
    return table


def token_address(network: str, currency: str) -> str | None:
    return token_addresses(network).get(currency)


def is_native(network: str, currency: str) -> bool:
    return NATIVE.get(FAMILY.get(network)) == currency


@dataclass(frozen=True)
class Endpoints:
    rpc_url: str
    esplora_url: str
    bitcoin_rpc_url: str


def endpoints(network: str) -> Endpoints:
    configured = settings.CHAINWATCH_ENDPOINTS.get(network, {})
    return Endpoints(
        rpc_url=configured.get("rpc_url", ""),
        esplora_url=configured.get("esplora_url", ""),
        bitcoin_rpc_url=configured.get("bitcoin_rpc_url", ""),
    )


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
        family = FAMILY[network]
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
