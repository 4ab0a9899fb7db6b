"""Chain watching cost per pass for 10, 1,000 and 10,000 open drafts, per backend.

Runs each watcher against anvil (EVM) and local fake servers (Bitcoin Core, Esplora,
Solana, Lightning) in a throwaway test database, and prints HTTP requests, JSON-RPC calls
and wall time of one steady-state pass (10 new blocks / slots, one payment in them).
Solana runs with one shared receiver and with a receiver per draft; Lightning with LUD-21
verify URLs (budgeted per pass), an LND node and an LNbits node.

    DATABASE_URL=... .venv/bin/python bench/chainwatch_bench.py [--sizes 10,1000,10000]

The rate limit is switched off so the numbers show the work, not the throttle.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ["OUTBOUND_ALLOW_LOOPBACK"] = "true"  # the LUD-21 verify URLs point at the local fake server

import django  # noqa: E402

django.setup()

import urllib3.connection  # noqa: E402
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

COUNT = {"http": 0, "rpc": 0}
_request = urllib3.connection.HTTPConnection.request


def _counting_request(self, method, url, body=None, *args, **kwargs):
    """Every HTTP request, whether sent through requests (node RPC) or the outbound guard (LUD-21)."""
    COUNT["http"] += 1
    try:
        parsed = json.loads(body) if body else None
        COUNT["rpc"] += len(parsed) if isinstance(parsed, list) else 1
    except (ValueError, TypeError):
        COUNT["rpc"] += 1
    return _request(self, method, url, body, *args, **kwargs)


urllib3.connection.HTTPConnection.request = _counting_request  # instrumentation of the HTTP library, not our code


def reset() -> None:
    from chainwatch.models import Cursor, ObservedTransfer, SeenBlock
    from drafts.models import Draft
    from webhooks.models import Event

    ObservedTransfer.objects.all().delete()
    SeenBlock.objects.all().delete()
    Cursor.objects.all().delete()
    Event.objects.all().delete()
    Draft.objects.all().delete()


def make_drafts(user, n: int, **common) -> list:
    from drafts.models import Draft
    from payments.enums import FeePlacement

    now = timezone.now()
    per_draft = common.pop("per_draft")
    rows = [
        Draft(
            user=user,
            fee_placement=FeePlacement.ACCRUED,
            platform_fee={},
            required_confirmations=common.get("required_confirmations", 2),
            expires_at=now + timedelta(hours=24),
            created_at=now - timedelta(minutes=1),
            **{k: v for k, v in common.items() if k != "required_confirmations"},
            **per_draft(i),
        )
        for i in range(n)
    ]
    return Draft.objects.bulk_create(rows, batch_size=2000)


def measure(network: str, family: str) -> tuple[int, int, float]:
    from chainwatch.tasks import watcher_pass

    COUNT["http"] = COUNT["rpc"] = 0
    started = time.perf_counter()
    watcher_pass(network, family)
    return COUNT["http"], COUNT["rpc"], time.perf_counter() - started


def bench_evm(user, n: int, native: bool = False, internal: bool = False) -> tuple[int, int, float]:
    """`internal`: the native payment comes from a contract wallet's internal call (read from traces)."""
    from eth_account import Account

    from chainwatch.tasks import watcher_pass
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import Anvil, _start_anvil

    process, url = _start_anvil(1)
    try:
        node = Anvil(url, 1)
        node.token = node.deploy_token()
        settings.CHAINWATCH_ENDPOINTS = {"Ethereum": {"rpc_url": url}}
        settings.TOKEN_ADDRESSES = {"USDC": {"Ethereum": node.token.address}}
        wallet = node.deploy_wallet() if internal else None
        receivers = [Account.create().address for _ in range(n)]
        make_drafts(
            user,
            n,
            network=Network.ETHEREUM,
            currency=Currency.ETH if native or internal else Currency.USDC,
            method=Method.SINGLE_OUTPUT,
            required_confirmations=12,
            per_draft=lambda i: {"receiver_address": receivers[i], "amount_base_units": 1_000_000 + i},
        )
        watcher_pass("Ethereum", "evm")
        if wallet:
            node.pay_through_wallet(wallet, [(receivers[0], 1_000_000 * 10**9, b"")])
        elif native:
            node.pay_eth(receivers[0], 1_000_000 * 10**9)
        else:
            node.pay_token(node.token, receivers[0], 1_000_000)
        node.mine(9)
        return measure("Ethereum", "evm")
    finally:
        process.kill()
        process.wait()


def bench_bitcoin(user, n: int, backend: str) -> tuple[int, int, float]:
    from chainwatch.tasks import watcher_pass
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes import FakeBitcoin

    chain = FakeBitcoin()
    chain.mine(20)
    server = FakeServer(chain.core_handler if backend == "core" else chain.esplora_handler)
    try:
        key = "bitcoin_rpc_url" if backend == "core" else "esplora_url"
        settings.CHAINWATCH_ENDPOINTS = {"Mainnet": {key: server.url}}
        make_drafts(
            user,
            n,
            network=Network.MAINNET,
            currency=Currency.BTC,
            method=Method.SINGLE_OUTPUT,
            per_draft=lambda i: {"receiver_address": f"bc1qbench{i:06d}", "amount_base_units": 100_000 + i},
        )
        watcher_pass("Mainnet", "bitcoin")
        chain.pay(("bc1qbench000000", 100_000))
        chain.mine(10)
        return measure("Mainnet", "bitcoin")
    finally:
        server.close()


def bench_solana(user, n: int, own_receivers: bool = False) -> tuple[int, int, float]:
    """`own_receivers`: every draft has its own receiver address (else all share one)."""
    from solders.keypair import Keypair

    from chainwatch.tasks import watcher_pass
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes import FakeSolana

    cluster = FakeSolana()
    server = FakeServer(cluster.handler)
    try:
        settings.CHAINWATCH_ENDPOINTS = {"Solana": {"rpc_url": server.url}}
        shared = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin"
        receivers = [str(Keypair().pubkey()) if own_receivers else shared for _ in range(n)]
        make_drafts(
            user,
            n,
            network=Network.SOLANA,
            currency=Currency.SOL,
            method=Method.SINGLE_OUTPUT,
            required_confirmations=1,
            per_draft=lambda i: {
                "receiver_address": receivers[i],
                "amount_base_units": 10**9 + i,
                "solana_reference": str(Keypair().pubkey()),
            },
        )
        from drafts.models import Draft

        first = Draft.objects.get(amount_base_units=10**9)
        watcher_pass("Solana", "solana")
        cluster.pay_sol(reference=first.solana_reference, receiver=first.receiver_address, lamports=10**9)
        cluster.slot += 10
        return measure("Solana", "solana")
    finally:
        server.close()


def bench_lightning(user, n: int, node: str = "lud21") -> tuple[int, int, float]:
    """`node`: "lud21" (each draft has a verify URL on the receiver's server), "lnd" or "lnbits"."""
    import hashlib
    import os

    from chainwatch.tasks import watcher_pass
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes_lightning import FakeLightning

    provider = FakeLightning()
    server = FakeServer(provider.handler)
    try:
        if node == "lnd":
            settings.LND_REST_URL, settings.LND_MACAROON_HEX = server.url, "0201abcd"
        elif node == "lnbits":
            settings.LNBITS_URL, settings.LNBITS_API_KEY = server.url, "invoice-key"
        if node == "lnd":  # a node in use has paid invoices from earlier days: passes follow its settle_index
            earlier = os.urandom(32)
            provider.settle(hashlib.sha256(earlier).hexdigest(), earlier.hex())
            provider.settled_at[hashlib.sha256(earlier).hexdigest()] -= timedelta(days=1)
        secrets = [os.urandom(32) for _ in range(n)]
        hashes = [hashlib.sha256(s).hexdigest() for s in secrets]
        for payment_hash in hashes:
            provider.add(payment_hash)
        make_drafts(
            user,
            n,
            network=Network.MAINNET,
            currency=Currency.BTC,
            method=Method.LIGHTNING,
            per_draft=lambda i: {
                "amount_base_units": 1000 + i,
                "payment_hash": hashes[i],
                "lnurl_verify_url": f"{server.url}/verify/{hashes[i]}" if node == "lud21" else None,
            },
        )
        watcher_pass("Mainnet", "lightning")
        provider.settle(hashes[0], secrets[0].hex())
        return measure("Mainnet", "lightning")
    finally:
        settings.LND_REST_URL = settings.LNBITS_URL = ""
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,1000,10000")
    parser.add_argument(
        "--backends",
        default="evm,evm-eth,evm-internal,core,esplora,solana,solana-receivers,lightning,lightning-lnd,lightning-lnbits",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = args.backends.split(",")

    settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND = 0
    settings.CHAINWATCH_START_LOOKBACK_BLOCKS = 5
    settings.LND_REST_URL = settings.LNBITS_URL = ""
    old_name = connection.settings_dict["NAME"]
    # Its own throwaway database, so a test run on the same DATABASE_URL is not disturbed.
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_{old_name}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from accounts.models import User

        user = User.objects.create_user("bench@example.com", "bench passphrase")
        runners = {
            "evm": bench_evm,
            "evm-eth": lambda u, n: bench_evm(u, n, native=True),
            "evm-internal": lambda u, n: bench_evm(u, n, internal=True),
            "core": lambda u, n: bench_bitcoin(u, n, "core"),
            "esplora": lambda u, n: bench_bitcoin(u, n, "esplora"),
            "solana": bench_solana,
            "solana-receivers": lambda u, n: bench_solana(u, n, own_receivers=True),
            "lightning": bench_lightning,
            "lightning-lnd": lambda u, n: bench_lightning(u, n, "lnd"),
            "lightning-lnbits": lambda u, n: bench_lightning(u, n, "lnbits"),
        }
        print(f"{'backend':<16} {'drafts':>7} {'http':>7} {'rpc calls':>10} {'seconds':>8}")
        for backend in backends:
            for n in sizes:
                reset()
                http, rpc, seconds = runners[backend](user, n)
                print(f"{backend:<16} {n:>7} {http:>7} {rpc:>10} {seconds:>8.2f}", flush=True)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
