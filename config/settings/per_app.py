"""Each app's settings (payments, fees, drafts, chain watching, pay links, webhooks, accounts,
recurring templates, demo, suggestions), with their beat entries."""

from __future__ import annotations

import json
import os

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import CELERY_BEAT_SCHEDULE, DEBUG
from core.env import (
    env_bool,
    env_decimal,
    env_int,
    env_list,
    env_rate,
    env_secret,
    env_str,
    network_env_suffix,
)

# --- Payments ---------------------------------------------------------------------
MAINNET_NETWORKS = ["Mainnet", "Solana", "Ethereum", "Base"]
TEST_NETWORKS = ["Testnet", "SolanaDevnet", "Sepolia", "BaseSepolia"]
# Bitcoin signet and regtest (a developer's own node): off unless ENABLED_NETWORKS names them.
DEVELOPER_NETWORKS = ["Signet", "Regtest"]
ENABLED_NETWORKS = env_list("ENABLED_NETWORKS", MAINNET_NETWORKS + (TEST_NETWORKS if DEBUG else []))
_unknown_networks = set(ENABLED_NETWORKS) - set(MAINNET_NETWORKS + TEST_NETWORKS + DEVELOPER_NETWORKS)
if _unknown_networks:
    raise ImproperlyConfigured(f"ENABLED_NETWORKS names unknown networks: {sorted(_unknown_networks)}")


# --- Money core: rates, quotes, fees (payments/, fees/) ---------------------------
def _json_setting(name: str, default: str):
    raw = env_str(name, default)
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not valid JSON: {exc}") from exc


# {"USDC": {"Ethereum": "0x..."}}: overrides the registry's token addresses (payments/registry.py).
TOKEN_ADDRESSES = _json_setting("TOKEN_ADDRESSES", "{}")
if not isinstance(TOKEN_ADDRESSES, dict) or not all(
    isinstance(per_network, dict) and all(isinstance(a, str) for a in per_network.values())
    for per_network in TOKEN_ADDRESSES.values()
):
    raise ImproperlyConfigured('TOKEN_ADDRESSES must look like {"USDC": {"Ethereum": "0x..."}}.')

# Rate feed. Every listed provider is asked on each refresh and their prices are combined
# per pair (median, outliers dropped): "name" or "name=base URL" (payments/rates/providers.py).
RATES_CRYPTO_PROVIDERS = env_list("RATES_CRYPTO_PROVIDERS", ["kraken", "coinbase", "bitstamp", "coingecko"])
RATES_FX_PROVIDERS = env_list("RATES_FX_PROVIDERS", ["ecb", "open-er-api"])
RATES_KRAKEN_URL = env_str("RATES_KRAKEN_URL", "https://api.kraken.com").rstrip("/")
RATES_COINBASE_URL = env_str("RATES_COINBASE_URL", "https://api.coinbase.com").rstrip("/")
RATES_BITSTAMP_URL = env_str("RATES_BITSTAMP_URL", "https://www.bitstamp.net").rstrip("/")
RATES_COINGECKO_URL = env_str("RATES_COINGECKO_URL", "https://api.coingecko.com").rstrip("/")
RATES_COINGECKO_API_KEY = env_secret("RATES_COINGECKO_API_KEY") or ""
RATES_ECB_URL = env_str("RATES_ECB_URL", "https://www.ecb.europa.eu").rstrip("/")
RATES_OPEN_ER_API_URL = env_str("RATES_OPEN_ER_API_URL", "https://open.er-api.com").rstrip("/")
RATES_HTTP_TIMEOUT_SECONDS = env_int("RATES_HTTP_TIMEOUT_SECONDS", 5, minimum=1)
RATES_REFRESH_SECONDS = env_int("RATES_REFRESH_SECONDS", 60, minimum=5)
RATES_MAX_AGE_SECONDS = env_int("RATES_MAX_AGE_SECONDS", 600, minimum=10)
# A source farther than this from the median of the others is dropped (and counted).
RATES_OUTLIER_PERCENT = env_decimal("RATES_OUTLIER_PERCENT", "3")
RATES_MIN_SOURCES = env_int("RATES_MIN_SOURCES", 2, minimum=1)  # agreeing sources per crypto price
RATES_FX_MIN_SOURCES = env_int("RATES_FX_MIN_SOURCES", 1, minimum=1)  # the ECB quotes ~30 currencies only
# Stablecoins priced at their peg instead of their own markets: only when the operator says so.
RATES_STABLECOINS_AT_PAR = env_list("RATES_STABLECOINS_AT_PAR", [])
# The bundled, dated snapshot prices a pair with no fresh live price only when this is true
# (`make run` sets it, for trying without internet); every surface then says "not live".
RATES_BUNDLED_ALLOWED = env_bool("RATES_BUNDLED_ALLOWED", False)
# Each process keeps the parsed rate tables this long before reading the shared cache again.
RATES_LOCAL_CACHE_SECONDS = env_int("RATES_LOCAL_CACHE_SECONDS", 2, minimum=0)
if RATES_MAX_AGE_SECONDS <= RATES_REFRESH_SECONDS:
    raise ImproperlyConfigured("RATES_MAX_AGE_SECONDS must be longer than RATES_REFRESH_SECONDS.")
if not 0 < RATES_OUTLIER_PERCENT < 100:
    raise ImproperlyConfigured("RATES_OUTLIER_PERCENT must be between 0 and 100.")
if set(RATES_STABLECOINS_AT_PAR) - {"USDC", "USDT", "EURC"}:
    raise ImproperlyConfigured(f"RATES_STABLECOINS_AT_PAR may list USDC, USDT, EURC; got {RATES_STABLECOINS_AT_PAR}.")
for _setting, _providers, _known in (
    ("RATES_CRYPTO_PROVIDERS", RATES_CRYPTO_PROVIDERS, {"kraken", "coinbase", "bitstamp", "coingecko"}),
    ("RATES_FX_PROVIDERS", RATES_FX_PROVIDERS, {"ecb", "open-er-api"}),
):
    _names = [item.partition("=")[0].strip() for item in _providers]
    if "snapshot" in _names:
        raise ImproperlyConfigured(
            f"{_setting} lists snapshot: the bundled table is no provider; set RATES_BUNDLED_ALLOWED=true instead."
        )
    if set(_names) - _known or (not _names and not RATES_BUNDLED_ALLOWED):
        raise ImproperlyConfigured(f"{_setting} must list providers among {sorted(_known)}; got {_providers}.")
CELERY_BEAT_SCHEDULE["payments-rates-refresh"] = {
    "task": "payments.rates_refresh",
    "schedule": float(RATES_REFRESH_SECONDS),
    "options": {"expires": float(RATES_REFRESH_SECONDS)},
}

# Quotes
QUOTE_LOCK_MINUTES = env_int("QUOTE_LOCK_MINUTES", 15, minimum=1)

# Fees (defaults are the spec's schedule)
FEE_TIERS = _json_setting(
    "FEE_TIERS",
    '[{"upToUsd": 10, "percent": "0.49"}, {"upToUsd": 50, "percent": "0.39"}, {"upToUsd": 100, "percent": "0.29"},'
    ' {"upToUsd": 500, "percent": "0.19"}, {"upToUsd": 2000, "percent": "0.14"},'
    ' {"upToUsd": 10000, "percent": "0.09"}, {"upToUsd": 50000, "percent": "0.04"},'
    ' {"upToUsd": 100000, "percent": "0.02"}, {"upToUsd": null, "percent": "0.01"}]',
)
FEE_MIN_USD = env_decimal("FEE_MIN_USD", "0.01")
FEE_MAX_USD = env_decimal("FEE_MAX_USD", "100")
FEE_DUST_LIMIT_SATS = env_int("FEE_DUST_LIMIT_SATS", 546, minimum=0)
FEE_DUST_WAIVERS_PER_DAY = env_int("FEE_DUST_WAIVERS_PER_DAY", 10, minimum=0)
# Accrued fees: an account is blocked from fee-accruing drafts at either cap.
FEE_MAX_OUTSTANDING_USD = env_decimal("FEE_MAX_OUTSTANDING_USD", "25")
FEE_MAX_AGE_DAYS = env_int("FEE_MAX_AGE_DAYS", 30, minimum=1)

# --- Drafts (drafts/) ----------------------------------------------------------------
DRAFT_LATE_PAYMENT_GRACE_HOURS = env_int("DRAFT_LATE_PAYMENT_GRACE_HOURS", 72, minimum=0)
# Receiving wallets (wallets/, drafts/wallets.py): how many addresses handed out and never paid a
# wallet may have after its last paid one; a draft past it is refused (409 gap_limit_reached).
# Wallets look this far ahead of their last used address (Electrum, Sparrow: 20 by default).
RECEIVING_WALLET_GAP_LIMIT = env_int("RECEIVING_WALLET_GAP_LIMIT", 20, minimum=1)
# How long a matched-by-amount draft's amount stays reserved at its address once the draft is
# paid, expired or cancelled, so a repeated payment can only be that draft's (docs/decisions.md).
AMOUNT_RESERVATION_DAYS = env_int("AMOUNT_RESERVATION_DAYS", 7, minimum=0)
# How deep a Confirmed payment is followed for reorgs (docs/decisions.md, Finality): a reversal
# before then takes the draft back with draft.payment_reverted. FINALITY_DEPTH_<NETWORK> in
# blocks: Bitcoin 6; EVM 64, the depth of the `finalized` tag (two epochs of 32 slots; Base
# follows its L1's finality and is watched as deep as CHAINWATCH_REORG_DEPTH remembers), used
# only where the node answers the `finalized` tag with an error: otherwise that block decides. Solana
# (`finalized` commitment) and Lightning (settled) are final when Confirmed.
_FINALITY_DEFAULTS = {"Mainnet": 6, "Testnet": 6, "Signet": 6, "Regtest": 6}
FINALITY_DEPTHS = {
    _n: env_int(f"FINALITY_DEPTH_{network_env_suffix(_n)}", _FINALITY_DEFAULTS.get(_n, 64), minimum=0)
    for _n in ("Mainnet", "Testnet", "Signet", "Regtest", "Ethereum", "Base", "Sepolia", "BaseSepolia")
}


def _fee_address(network: str) -> tuple[str, str]:
    """(variable, address) of FEE_ADDRESS_<NETWORK>; the joined spelling (FEE_ADDRESS_BASESEPOLIA)
    of earlier versions is still read."""
    name, legacy = f"FEE_ADDRESS_{network_env_suffix(network)}", f"FEE_ADDRESS_{network.upper()}"
    address, old = env_str(name, ""), env_str(legacy, "") if legacy != name else ""
    if address and old and address != old:
        raise ImproperlyConfigured(f"{name} and {legacy} name different addresses; set only {name}.")
    return (name, address) if address or not old else (legacy, old)


# The operator's fee addresses per network: FEE_ADDRESS_MAINNET, FEE_ADDRESS_BASE_SEPOLIA, ...
# (FEE_ADDRESS_SIGNET and FEE_ADDRESS_REGTEST too: every network ENABLED_NETWORKS may name).
PLATFORM_FEE_ADDRESS_VARIABLES = {
    network: _fee_address(network) for network in MAINNET_NETWORKS + TEST_NETWORKS + DEVELOPER_NETWORKS
}
PLATFORM_FEE_ADDRESSES = {
    network: address for network, (_, address) in PLATFORM_FEE_ADDRESS_VARIABLES.items() if address
}
PAYMENT_URI_LABEL = env_str("PAYMENT_URI_LABEL", "")
# Block-explorer links on the pay page and receipts: BLOCK_EXPLORER_URL_<NETWORK> overrides the
# default of payments/explorers.py, with {txid} where the transaction id goes; empty turns it off.
BLOCK_EXPLORER_URLS = {
    _n: env_str(f"BLOCK_EXPLORER_URL_{network_env_suffix(_n)}", "")
    for _n in MAINNET_NETWORKS + TEST_NETWORKS + ["Signet", "Regtest"]
    if f"BLOCK_EXPLORER_URL_{network_env_suffix(_n)}" in os.environ
}
for _n, _url in BLOCK_EXPLORER_URLS.items():
    if _url and not (_url.startswith("https://") and "{txid}" in _url):
        raise ImproperlyConfigured(
            f"BLOCK_EXPLORER_URL_{network_env_suffix(_n)} must be an https:// URL with {{txid}} in it (or empty)."
        )
IDEMPOTENCY_KEY_TTL_HOURS = env_int("IDEMPOTENCY_KEY_TTL_HOURS", 24, minimum=1)
CELERY_BEAT_SCHEDULE["drafts-expire"] = {"task": "drafts.expire_drafts", "schedule": 60.0}
CELERY_BEAT_SCHEDULE["drafts-idempotency-cleanup"] = {"task": "drafts.purge_idempotency_keys", "schedule": 3600.0}
LNURL_TIMEOUT_SECONDS = env_int("LNURL_TIMEOUT_SECONDS", 10, minimum=1)


# --- Chain watching (chainwatch/) --------------------------------------------------------
# Endpoints per network: RPC_URL_<NETWORK> (EVM and Solana JSON-RPC), ESPLORA_URL_<NETWORK> and
# BITCOIN_RPC_URL_<NETWORK> (Bitcoin; user:password@ in the URL for Core). <NETWORK> is the
# network name in upper snake case: MAINNET, TESTNET, SIGNET, REGTEST, ETHEREUM, BASE, SEPOLIA,
# BASE_SEPOLIA, SOLANA, SOLANA_DEVNET.
CHAINWATCH_ENDPOINTS = {
    _n: {
        "rpc_url": env_secret(f"RPC_URL_{network_env_suffix(_n)}") or "",
        "esplora_url": env_str(f"ESPLORA_URL_{network_env_suffix(_n)}", ""),
        "bitcoin_rpc_url": env_secret(f"BITCOIN_RPC_URL_{network_env_suffix(_n)}") or "",
        # Push notifications (chainwatch/listener.py): EVM and Solana WebSocket, Bitcoin Core ZMQ.
        # Empty: EVM and Solana derive ws(s):// from RPC_URL (anvil, Solana's validator serve both).
        "ws_url": env_secret(f"WS_URL_{network_env_suffix(_n)}") or "",
        "zmq_url": env_str(f"BITCOIN_ZMQ_URL_{network_env_suffix(_n)}", ""),
    }
    for _n in MAINNET_NETWORKS + TEST_NETWORKS + DEVELOPER_NETWORKS
}
# "core" or "esplora" per Bitcoin network; empty picks Core when BITCOIN_RPC_URL_<NETWORK> is set.
CHAINWATCH_BITCOIN_SOURCE = {
    _n: env_str(f"BITCOIN_SOURCE_{network_env_suffix(_n)}", "") for _n in ("Mainnet", "Testnet", "Signet", "Regtest")
}
for _n, _source in CHAINWATCH_BITCOIN_SOURCE.items():
    if _source not in ("", "core", "esplora"):
        raise ImproperlyConfigured(f"BITCOIN_SOURCE_{network_env_suffix(_n)} must be core or esplora.")


# Several endpoints per network: RPC_URL_, BITCOIN_RPC_URL_ and ESPLORA_URL_<NETWORK> take a
# comma-separated list, each URL with its own credentials. Seen comes from any one of them (the
# first that answers); Confirmed needs CHAINWATCH_QUORUM_<NETWORK> of them to agree on the same
# transaction, output or log, amount, receiver and block hash at the required depth
# (chainwatch/quorum.py). Default: all of them when 2 or 3 are configured, a majority above.
# One endpoint behaves as it always did.
def _endpoint_count(network: str, kind: str) -> int:
    return len([u for u in CHAINWATCH_ENDPOINTS[network][kind].split(",") if u.strip()])


CHAINWATCH_QUORUM: dict[str, int] = {}
for _n in CHAINWATCH_ENDPOINTS:
    _name = f"CHAINWATCH_QUORUM_{network_env_suffix(_n)}"
    _count = max(_endpoint_count(_n, _kind) for _kind in ("rpc_url", "esplora_url", "bitcoin_rpc_url"))
    if _name in os.environ:
        CHAINWATCH_QUORUM[_n] = env_int(_name, 1, minimum=1)
        if _count and CHAINWATCH_QUORUM[_n] > _count:
            raise ImproperlyConfigured(
                f"{_name}={CHAINWATCH_QUORUM[_n]} asks for more endpoints than the {_count} configured."
            )
# At most this many transfers waiting for the quorum's confirmations are checked a pass (the
# oldest first; the rest the next pass). Each endpoint is asked about them in one batch.
CHAINWATCH_QUORUM_TRANSFERS_PER_PASS = env_int("CHAINWATCH_QUORUM_TRANSFERS_PER_PASS", 500, minimum=1)
# Where the service emails its operator (endpoints that disagree on a payment). Empty: no email;
# /healthz and the chainwatch_quorum_disagreements metric still show it.
OPERATOR_EMAIL = env_str("OPERATOR_EMAIL", "")
# Token contracts and mints: TOKEN_ADDRESSES in the money-core section (the registry).

CHAINWATCH_INTERVAL_SECONDS = env_int("CHAINWATCH_INTERVAL_SECONDS", 15, minimum=1)
CHAINWATCH_BLOCKS_PER_PASS = env_int("CHAINWATCH_BLOCKS_PER_PASS", 100, minimum=1)
CHAINWATCH_LOG_BLOCKS_PER_CALL = env_int("CHAINWATCH_LOG_BLOCKS_PER_CALL", 2000, minimum=1)
CHAINWATCH_ADDRESSES_PER_LOG_CALL = env_int("CHAINWATCH_ADDRESSES_PER_LOG_CALL", 1000, minimum=1)
CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL = env_int("CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL", 100, minimum=1)
CHAINWATCH_PASSES_PER_RUN = env_int("CHAINWATCH_PASSES_PER_RUN", 20, minimum=1)
CHAINWATCH_RUN_SECONDS = env_int("CHAINWATCH_RUN_SECONDS", 60, minimum=1)
CHAINWATCH_START_LOOKBACK_BLOCKS = env_int("CHAINWATCH_START_LOOKBACK_BLOCKS", 100, minimum=0)
CHAINWATCH_REORG_DEPTH = env_int("CHAINWATCH_REORG_DEPTH", 64, minimum=1)
CHAINWATCH_HTTP_TIMEOUT_SECONDS = env_int("CHAINWATCH_HTTP_TIMEOUT_SECONDS", 10, minimum=1)
CHAINWATCH_MAX_REQUESTS_PER_SECOND = env_int("CHAINWATCH_MAX_REQUESTS_PER_SECOND", 50, minimum=0)
CHAINWATCH_JSONRPC_BATCH_SIZE = env_int("CHAINWATCH_JSONRPC_BATCH_SIZE", 100, minimum=1)
CHAINWATCH_MEMPOOL_TXS_PER_PASS = env_int("CHAINWATCH_MEMPOOL_TXS_PER_PASS", 5000, minimum=1)
CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS = env_int("CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS", 20, minimum=1)
CHAINWATCH_SOLANA_SIGNATURES_PER_CALL = env_int("CHAINWATCH_SOLANA_SIGNATURES_PER_CALL", 1000, minimum=1)
CHAINWATCH_SOLANA_RELIST_SLOTS = env_int("CHAINWATCH_SOLANA_RELIST_SLOTS", 150, minimum=0)
CHAINWATCH_SOLANA_TRANSACTIONS_PER_PASS = env_int("CHAINWATCH_SOLANA_TRANSACTIONS_PER_PASS", 2000, minimum=1)
# Age of a watcher's last successful pass (it runs every CHAINWATCH_INTERVAL_SECONDS) at which
# /healthz turns red: a dead node or a stopped watcher shows within a minute.
CHAINWATCH_STALE_AFTER_SECONDS = env_int("CHAINWATCH_STALE_AFTER_SECONDS", 60, minimum=1)
# Lightning: LUD-21 verify URLs travel with each draft; LND REST or LNbits check the rest.
CHAINWATCH_LIGHTNING_ENABLED = env_bool("CHAINWATCH_LIGHTNING_ENABLED", True)
LND_REST_URL = env_str("LND_REST_URL", "")
LND_MACAROON_HEX = env_secret("LND_MACAROON_HEX") or ""
LNBITS_URL = env_str("LNBITS_URL", "")
LNBITS_API_KEY = env_secret("LNBITS_API_KEY") or ""
CHAINWATCH_LND_INVOICES_PER_CALL = env_int("CHAINWATCH_LND_INVOICES_PER_CALL", 1000, minimum=1)
CHAINWATCH_LND_STREAM_IDLE_MS = env_int("CHAINWATCH_LND_STREAM_IDLE_MS", 1000, minimum=1)
CHAINWATCH_LND_STREAM_SECONDS = env_int("CHAINWATCH_LND_STREAM_SECONDS", 20, minimum=1)
CHAINWATCH_LND_RELIST_SECONDS = env_int("CHAINWATCH_LND_RELIST_SECONDS", 300, minimum=0)
CHAINWATCH_LNBITS_PAYMENTS_PER_CALL = env_int("CHAINWATCH_LNBITS_PAYMENTS_PER_CALL", 500, minimum=1)
CHAINWATCH_LNBITS_RELIST_SECONDS = env_int("CHAINWATCH_LNBITS_RELIST_SECONDS", 300, minimum=0)
CHAINWATCH_LUD21_CHECKS_PER_PASS = env_int("CHAINWATCH_LUD21_CHECKS_PER_PASS", 200, minimum=1)
# The listener (`manage.py chainwatch_listen`): a pass as soon as a node announces a block or a
# payment; while a subscription is down, and for sources with nothing to subscribe to (Esplora,
# LUD-21), it polls from CHAINWATCH_POLL_MIN_SECONDS, backing off to CHAINWATCH_INTERVAL_SECONDS
# while nothing new turns up.
CHAINWATCH_POLL_MIN_SECONDS = env_int("CHAINWATCH_POLL_MIN_SECONDS", 2, minimum=1)
# Two passes of one watcher in the listener start at least this far apart (ms): notifications
# faster than that (Solana slots, sub-second L2 blocks) share a pass. 500 ms adds at most half a
# second to Seen (target: median <= 1 s) and caps a watcher at 120 passes a minute.
CHAINWATCH_MIN_PASS_SPACING_MS = env_int("CHAINWATCH_MIN_PASS_SPACING_MS", 500, minimum=0)
# One beat entry per enabled network and chain family; a watcher without an endpoint skips itself.
_CHAINWATCH_FAMILIES = {
    "Mainnet": ("bitcoin", "lightning"),
    "Testnet": ("bitcoin", "lightning"),
    "Signet": ("bitcoin", "lightning"),
    "Regtest": ("bitcoin", "lightning"),
    "Solana": ("solana",),
    "SolanaDevnet": ("solana",),
}
for _n in ENABLED_NETWORKS:
    for _family in _CHAINWATCH_FAMILIES.get(_n, ("evm",)):
        CELERY_BEAT_SCHEDULE[f"chainwatch-{_n.lower()}-{_family}"] = {
            "task": "chainwatch.run",
            "schedule": float(CHAINWATCH_INTERVAL_SECONDS),
            "args": (_n, _family),
            "options": {"expires": float(CHAINWATCH_INTERVAL_SECONDS)},
        }

# --- Pay links (paylinks/) -------------------------------------------------------------
# How long the draft created when a payer picks an option stays payable (whole hours; its
# rate is locked for QUOTE_LOCK_MINUTES, and a late payment is still matched in the grace window).
PAYLINKS_DRAFT_EXPIRY_HOURS = env_int("PAYLINKS_DRAFT_EXPIRY_HOURS", 1, minimum=1)
# How many of a receiving wallet's addresses one pay link may take (one per draft a payer's choice makes):
# an anonymous payer switching options back and forth cannot use up the wallet's gap.
PAYLINKS_WALLET_ADDRESSES_PER_LINK = env_int("PAYLINKS_WALLET_ADDRESSES_PER_LINK", 3, minimum=1)
# The pay page's long poll hears changes through PostgreSQL's LISTEN (core/sql/notify.py) on a
# session connection of its own: behind PgBouncer in transaction mode, a direct address of the
# server (empty: the default database's).
LIVE_LISTEN_DATABASE_URL = env_secret("LIVE_LISTEN_DATABASE_URL") or ""
# Per client IP on the anonymous checkout endpoints and the pay page.
CHECKOUT_RATE_LIMITS = {
    "read": env_str("CHECKOUT_RATE_LIMIT_READS", "120/min"),
    "write": env_str("CHECKOUT_RATE_LIMIT_WRITES", "20/min"),
}
PAYLINKS_EXPIRE_INTERVAL_SECONDS = env_int("PAYLINKS_EXPIRE_INTERVAL_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE["paylinks-expire-due"] = {
    "task": "paylinks.expire_due",
    "schedule": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS),
    "options": {"expires": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS)},
}

# --- Refunds (refunds/) -------------------------------------------------------------------
CELERY_BEAT_SCHEDULE["refunds-expire-due"] = {
    "task": "refunds.expire_due",
    "schedule": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS),
    "options": {"expires": float(PAYLINKS_EXPIRE_INTERVAL_SECONDS)},
}

# --- Outbound requests to user-supplied URLs (outbound/) ---------------------------------
# One guard for webhook endpoints, Lightning addresses (LNURL-pay) and LUD-21 verify URLs,
# so one setting: admit http(s)://127.0.0.1, [::1] and localhost on any port. Local
# development and tests only; no API call can turn it on. The earlier per-feature names
# (WEBHOOKS_ALLOW_LOOPBACK, LNURL_ALLOW_HTTP_LOOPBACK) are still read.
OUTBOUND_ALLOW_LOOPBACK = env_bool(
    "OUTBOUND_ALLOW_LOOPBACK",
    env_bool("WEBHOOKS_ALLOW_LOOPBACK", False) or env_bool("LNURL_ALLOW_HTTP_LOOPBACK", False),
)
OUTBOUND_RESOLVER = env_str("OUTBOUND_RESOLVER", env_str("WEBHOOKS_RESOLVER", "outbound.guard.SystemResolver"))
# CA bundle for server certificates; empty means certifi's Mozilla bundle.
OUTBOUND_CA_BUNDLE = env_str("OUTBOUND_CA_BUNDLE", env_str("WEBHOOKS_CA_BUNDLE", ""))

# --- Webhooks and email notifications (webhooks/) ----------------------------------------
WEBHOOKS_TIMEOUT_SECONDS = env_int("WEBHOOKS_TIMEOUT_SECONDS", 15, minimum=1)
WEBHOOKS_RESPONSE_MAX_BYTES = env_int("WEBHOOKS_RESPONSE_MAX_BYTES", 4096, minimum=0)
WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT = env_int("WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT", 2, minimum=1)
WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES = env_int("WEBHOOKS_DISABLE_AFTER_FAILED_DELIVERIES", 10, minimum=1)
WEBHOOKS_DISPATCH_INTERVAL_SECONDS = env_int("WEBHOOKS_DISPATCH_INTERVAL_SECONDS", 5, minimum=1)
WEBHOOKS_DISPATCH_BATCH = env_int("WEBHOOKS_DISPATCH_BATCH", 200, minimum=1)
# A dispatcher pass (webhooks/passes.py): how long it claims, how many requests it has in flight
# at once; an endpoint that took WEBHOOKS_SLOW_SECONDS or more is slow (one attempt in flight,
# no lane, at most 3/4 of a pass's slots for all slow endpoints together) and one that timed out
# gets WEBHOOKS_SLOW_TIMEOUT_SECONDS until it answers in time again.
WEBHOOKS_PASS_SECONDS = env_int("WEBHOOKS_PASS_SECONDS", 20, minimum=1)
WEBHOOKS_PASS_IN_FLIGHT = env_int("WEBHOOKS_PASS_IN_FLIGHT", 200, minimum=4)
# A healthy endpoint's lane in a pass has up to this many requests in flight (never two of one
# object's events at once): the endpoint's throughput without more worker processes.
WEBHOOKS_PER_ENDPOINT_CONCURRENCY = env_int("WEBHOOKS_PER_ENDPOINT_CONCURRENCY", 8, minimum=1)
WEBHOOKS_SLOW_SECONDS = env_int("WEBHOOKS_SLOW_SECONDS", 2, minimum=1)
WEBHOOKS_SLOW_TIMEOUT_SECONDS = env_int("WEBHOOKS_SLOW_TIMEOUT_SECONDS", 5, minimum=1)
# After a secret rotation, deliveries are signed with both secrets this long.
WEBHOOKS_SECRET_OVERLAP_HOURS = env_int("WEBHOOKS_SECRET_OVERLAP_HOURS", 24, minimum=0)
# A list's `total` is counted exactly up to LIST_TOTAL_EXACT_UP_TO rows (a bounded count per
# request); a longer list's whole count is made at most once per LIST_TOTAL_CACHE_SECONDS for
# the same account, mode and filters (core/api/pagination.py).
LIST_TOTAL_EXACT_UP_TO = env_int("LIST_TOTAL_EXACT_UP_TO", 10_000, minimum=1)
LIST_TOTAL_CACHE_SECONDS = env_int("LIST_TOTAL_CACHE_SECONDS", 60, minimum=1)
# The drafts list's search reads memos among the account's newest DRAFT_SEARCH_MEMO_WITHIN drafts;
# ids, addresses, transactions and order ids among all (drafts.selectors.draft_list).
DRAFT_SEARCH_MEMO_WITHIN = env_int("DRAFT_SEARCH_MEMO_WITHIN", 5_000, minimum=1)
# Long polls of GET /api/v1/events/stream (manage.py listen) waiting at once, over every web
# process: each holds a WSGI worker while it waits; beyond it a poll answers at once.
EVENTS_STREAM_MAX_WAITERS = env_int("EVENTS_STREAM_MAX_WAITERS", 1, minimum=0)
NOTIFICATIONS_EMAIL_INTERVAL_SECONDS = env_int("NOTIFICATIONS_EMAIL_INTERVAL_SECONDS", 30, minimum=1)
NOTIFICATIONS_EMAIL_MAX_ATTEMPTS = env_int("NOTIFICATIONS_EMAIL_MAX_ATTEMPTS", 5, minimum=1)
# Retention (docs/settings.md, "Retention"; docs/decisions.md): purged hourly in small batches.
EVENTS_RETENTION_DAYS = env_int("EVENTS_RETENTION_DAYS", 30, minimum=1)
WEBHOOKS_DELIVERY_RETENTION_DAYS = env_int("WEBHOOKS_DELIVERY_RETENTION_DAYS", 30, minimum=1)
WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS = env_int("WEBHOOKS_DELIVERY_ATTEMPT_RETENTION_DAYS", 15, minimum=1)
UNMATCHED_TRANSFERS_RETENTION_DAYS = env_int("UNMATCHED_TRANSFERS_RETENTION_DAYS", 180, minimum=1)
RETENTION_PURGE_INTERVAL_SECONDS = env_int("RETENTION_PURGE_INTERVAL_SECONDS", 3600, minimum=60)
# After each batch the purge waits this many times as long as the batch took (core/retention.py).
RETENTION_PURGE_PAUSE_RATIO = env_decimal("RETENTION_PURGE_PAUSE_RATIO", "1")
if RETENTION_PURGE_PAUSE_RATIO < 0:
    raise ImproperlyConfigured(f"RETENTION_PURGE_PAUSE_RATIO={RETENTION_PURGE_PAUSE_RATIO} is below 0.")
CELERY_BEAT_SCHEDULE["retention-webhooks"] = {
    "task": "webhooks.purge",
    "schedule": float(RETENTION_PURGE_INTERVAL_SECONDS),
}
CELERY_BEAT_SCHEDULE["retention-unmatched-transfers"] = {
    "task": "chainwatch.purge_unmatched",
    "schedule": float(RETENTION_PURGE_INTERVAL_SECONDS),
}
CELERY_BEAT_SCHEDULE["webhooks-dispatch-due"] = {
    "task": "webhooks.dispatch_due",
    "schedule": float(WEBHOOKS_DISPATCH_INTERVAL_SECONDS),
    "options": {"expires": float(WEBHOOKS_DISPATCH_INTERVAL_SECONDS)},
}
CELERY_BEAT_SCHEDULE["notifications-send-due-emails"] = {
    "task": "notifications.send_due_emails",
    "schedule": float(NOTIFICATIONS_EMAIL_INTERVAL_SECONDS),
    "options": {"expires": float(NOTIFICATIONS_EMAIL_INTERVAL_SECONDS)},
}

# --- Human accounts (docs/accounts.md) ----------------------------------------------
# Failed password, emailed-code and TOTP attempts (accounts/ratelimit.py): per account and
# IP address, per IP address, and per account from browsers that never signed in to it.
AUTH_ATTEMPTS_PER_MINUTE = env_int("AUTH_ATTEMPTS_PER_MINUTE", 10, minimum=1)
AUTH_ADDRESS_ATTEMPTS_PER_MINUTE = env_int("AUTH_ADDRESS_ATTEMPTS_PER_MINUTE", 20, minimum=1)
AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE = env_int("AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE", 30, minimum=1)
# Emails (codes, or the notices sent instead) to one address per purpose and hour.
AUTH_CODE_EMAILS_PER_HOUR = env_int("AUTH_CODE_EMAILS_PER_HOUR", 5, minimum=1)
if AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE <= AUTH_ATTEMPTS_PER_MINUTE:
    # Else one attacker's address could use up the pool every browser but the owner's shares.
    raise ImproperlyConfigured("AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE must be above AUTH_ATTEMPTS_PER_MINUTE.")
AUTH_EMAIL_CODE_MINUTES = env_int("AUTH_EMAIL_CODE_MINUTES", 10, minimum=1)
AUTH_EMAIL_CODE_MAX_TRIES = env_int("AUTH_EMAIL_CODE_MAX_TRIES", 5, minimum=1)
AUTH_REAUTH_MINUTES = env_int("AUTH_REAUTH_MINUTES", 5, minimum=1)
# Step-up (accounts/stepup.py): how recent a second factor must be for actions that could hand
# the account to someone else.
STEP_UP_MINUTES = env_int("STEP_UP_MINUTES", 5, minimum=1)
# The receiving-address lock (docs/accounts.md): an address added to the book while it is on,
# and turning it off, take effect this many hours later (the owner may cut an address's short).
RECEIVER_LOCK_DELAY_HOURS = env_int("RECEIVER_LOCK_DELAY_HOURS", 24, minimum=0)
# How long the undo and lock links of a security email work.
SECURITY_LINK_DAYS = env_int("SECURITY_LINK_DAYS", 14, minimum=1)
# WebAuthn: the RP ID is BASE_URL's host name and the origin its scheme, host and port.
WEBAUTHN_RP_NAME = env_str("WEBAUTHN_RP_NAME", "Payment drafts")
WEBAUTHN_CHALLENGE_SECONDS = 300
OTP_TOTP_ISSUER = env_str("OTP_TOTP_ISSUER", WEBAUTHN_RP_NAME)
# Exactly one 30-second step of drift either way; django-otp does not learn a drift (which
# would let the window creep).
OTP_TOTP_SYNC = False
LOGIN_URL = "/account/sign-in"
# Where a page that needs a recent second factor sends a session without one (accounts.stepup).
STEP_UP_URL = "/dashboard/confirm"
CELERY_BEAT_SCHEDULE["accounts-purge-email-codes"] = {"task": "accounts.purge_email_codes", "schedule": 3600.0}

# --- Recurring templates (recurring/) -------------------------------------------------------
RECURRING_INTERVAL_SECONDS = env_int("RECURRING_INTERVAL_SECONDS", 30, minimum=1)
RECURRING_BATCH = env_int("RECURRING_BATCH", 200, minimum=1)
# A claimed run is someone else's for this long (longer than a task may run); then it is claimed again.
RECURRING_CLAIM_SECONDS = env_int("RECURRING_CLAIM_SECONDS", 300, minimum=30)
RECURRING_RETRY_SECONDS = env_int("RECURRING_RETRY_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE["recurring-run-due"] = {
    "task": "recurring.run_due",
    "schedule": float(RECURRING_INTERVAL_SECONDS),
    "options": {"expires": float(RECURRING_INTERVAL_SECONDS)},
}

# --- Demo (demo/) ----------------------------------------------------------------------------
# Anyone may open a short-lived draft on a test network, paid to the operator's demo address
# for that network: DEMO_ADDRESS_TESTNET, DEMO_ADDRESS_SEPOLIA, DEMO_ADDRESS_BASE_SEPOLIA,
# DEMO_ADDRESS_SOLANA_DEVNET (`make run` sets public test-vector addresses).
DEMO_ENABLED = env_bool("DEMO_ENABLED", True)
DEMO_RECEIVING_ADDRESSES = {
    network: address
    for network in TEST_NETWORKS
    if (address := env_str(f"DEMO_ADDRESS_{network_env_suffix(network)}", "").strip())
}
DEMO_ACCOUNT_EMAIL = env_str("DEMO_ACCOUNT_EMAIL", "demo@demo.invalid")
DEMO_AMOUNT_USD = env_decimal("DEMO_AMOUNT_USD", "1")
if DEMO_AMOUNT_USD <= 0:
    raise ImproperlyConfigured("DEMO_AMOUNT_USD must be positive.")
DEMO_EXPIRY_MINUTES = env_int("DEMO_EXPIRY_MINUTES", 30, minimum=1)
DEMO_MAX_OPEN_DRAFTS = env_int("DEMO_MAX_OPEN_DRAFTS", 100, minimum=1)
DEMO_RATE_LIMIT = env_rate("DEMO_RATE_LIMIT", "10/hour")
# The payment simulator: `make run` turns it on; off otherwise.
DEMO_SIMULATE_PAYMENTS = env_bool("DEMO_SIMULATE_PAYMENTS", False)
DEMO_SIMULATE_INTERVAL_SECONDS = env_int("DEMO_SIMULATE_INTERVAL_SECONDS", 2, minimum=1)
DEMO_SIMULATE_SEEN_AFTER_SECONDS = env_int("DEMO_SIMULATE_SEEN_AFTER_SECONDS", 5, minimum=0)
DEMO_SIMULATE_BLOCK_SECONDS = env_int("DEMO_SIMULATE_BLOCK_SECONDS", 3, minimum=1)
if DEMO_SIMULATE_PAYMENTS:
    CELERY_BEAT_SCHEDULE["demo-simulate-payments"] = {
        "task": "demo.simulate_payments",
        "schedule": float(DEMO_SIMULATE_INTERVAL_SECONDS),
        "options": {"expires": float(DEMO_SIMULATE_INTERVAL_SECONDS)},
    }

# --- Suggestions (suggestions/) ------------------------------------------------------------
SUGGESTIONS_RATE_LIMIT = env_rate("SUGGESTIONS_RATE_LIMIT", "10/hour")

# --- Audit log (audit/) ----------------------------------------------------------------------
# How long audit entries are kept (default a year); older ones are purged in batches hourly.
AUDIT_RETENTION_DAYS = env_int("AUDIT_RETENTION_DAYS", 365, minimum=1)
CELERY_BEAT_SCHEDULE["audit-purge"] = {"task": "audit.purge", "schedule": 3600.0}
# How long an invitation to an organization's team may be accepted (accounts.invitations).
TEAM_INVITATION_DAYS = env_int("TEAM_INVITATION_DAYS", 7, minimum=1)

# --- Needs attention (attention/) ------------------------------------------------------------
# A payment that left the chain stays listed this long once its draft expired (no action left).
ATTENTION_REVERTED_DAYS = env_int("ATTENTION_REVERTED_DAYS", 7, minimum=1)
# An active endpoint with this many deliveries in a row given up is listed as failing.
ATTENTION_WEBHOOK_FAILURES = env_int("ATTENTION_WEBHOOK_FAILURES", 1, minimum=1)
# An API key that expires within this many days is listed (rotate it).
ATTENTION_KEY_EXPIRY_DAYS = env_int("ATTENTION_KEY_EXPIRY_DAYS", 14, minimum=1)
# At most this many items of each kind are listed (the navigation's count is not capped).
ATTENTION_ITEMS_PER_KIND = env_int("ATTENTION_ITEMS_PER_KIND", 100, minimum=1)
# The daily digest: the hourly beat entry sends each account's once a UTC day, from this hour.
ATTENTION_DIGEST_HOUR_UTC = min(env_int("ATTENTION_DIGEST_HOUR_UTC", 7, minimum=0), 23)
CELERY_BEAT_SCHEDULE["attention-digest"] = {
    "task": "attention.digest",
    "schedule": 3600.0,
    "options": {"expires": 3600.0},
}
