"""Chain watching cost per pass and per block for 10 to 10,000 open drafts, per backend.

Runs each watcher against anvil (EVM) and local fake servers (Bitcoin Core, Esplora,
Solana, Lightning) in a throwaway test database, and prints HTTP requests, JSON-RPC calls
and wall time of one steady-state pass (10 new blocks / slots, one payment in them), and the
JSON-RPC calls of a pass over one new block with a payment in it: what the chain listener
spends per block, since it runs a pass as each block is announced. Solana runs with one
shared receiver and with a receiver per draft; Lightning with LUD-21 verify URLs (budgeted
per pass), an LND node and an LNbits node (no blocks: no per-block figure).

It then checks that the calls per pass and per block stay within 2x of those at the smallest
size from 10 drafts up (exit status 1 when not), and runs the listener's own pass loop on a fast chain (a block
every --block-seconds, each announced as a node would) for --fast-seconds, without and with
the spacing between passes (CHAINWATCH_MIN_PASS_SPACING_MS), beside the beat's polling.

    DATABASE_URL=... .venv/bin/python bench/chainwatch_bench.py [--sizes 10,100,1000,10000] [--endpoints 2]

With --endpoints 2 each network has its node twice over as two endpoints, so the figures include
the quorum's checks (chainwatch/quorum.py); compare them with a run without it.

The rate limit is switched off so the numbers show the work, not the throttle.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
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

logging.getLogger("chainwatch.listener").setLevel(logging.WARNING)  # not its "subscribed" notes

COUNT = {"http": 0, "rpc": 0}
ONLY_THREADS = {"prefix": ""}  # while set, only requests made on threads so named are counted
BOUND = 2.0  # calls at any size from FLAT_FROM drafts / calls at the smallest such size
FLAT_FROM = 10  # below, a watcher may ask less (Esplora polls each of a few addresses)
NOT_A_NODE = {"lightning": "LUD-21: one request per draft to its own server, at most CHAINWATCH_LUD21_CHECKS_PER_PASS"}
_request = urllib3.connection.HTTPConnection.request


def _counting_request(self, method, url, body=None, *args, **kwargs):
    """Every HTTP request, whether sent through requests (node RPC) or the outbound guard (LUD-21)."""
    if threading.current_thread().name.startswith(ONLY_THREADS["prefix"]):
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


@dataclass
class Chain:
    """A watcher with n open drafts: `pay(i)` pays draft i (in a block of its own where the chain
    makes one per transaction), `blocks(k)` makes k more blocks (the mempool goes in)."""

    network: str
    family: str
    n: int
    pay: object
    blocks: object = None  # None: no blocks (Lightning)
    pay_makes_block: bool = False
    closers: list = field(default_factory=list)

    def step(self, blocks: int, i: int) -> None:
        self.pay(i % self.n)
        if self.blocks:
            self.blocks(blocks - self.pay_makes_block)

    def close(self) -> None:
        for close in self.closers:
            close()


def measure(network: str, family: str) -> tuple[int, int, float]:
    from chainwatch.tasks import watcher_pass

    COUNT["http"] = COUNT["rpc"] = 0
    started = time.perf_counter()
    watcher_pass(network, family)
    return COUNT["http"], COUNT["rpc"], time.perf_counter() - started


def evm_chain(user, n: int, native: bool = False, internal: bool = False) -> Chain:
    """`internal`: native payments come from a contract wallet's internal call (read from traces)."""
    from eth_account import Account

    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import Anvil, _start_anvil

    process, url = _start_anvil(1)
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

    def pay(i: int) -> None:
        if wallet:
            node.pay_through_wallet(wallet, [(receivers[i], (1_000_000 + i) * 10**9, b"")])
        elif native:
            node.pay_eth(receivers[i], (1_000_000 + i) * 10**9)
        else:
            node.pay_token(node.token, receivers[i], 1_000_000 + i)

    def stop() -> None:
        process.kill()
        process.wait()

    blocks = lambda k: k and node.mine(k)  # noqa: E731
    return Chain("Ethereum", "evm", n, pay, blocks, pay_makes_block=True, closers=[stop])


def bitcoin_chain(user, n: int, backend: str) -> Chain:
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes import FakeBitcoin

    chain = FakeBitcoin()
    chain.mine(20)
    server = FakeServer(chain.core_handler if backend == "core" else chain.esplora_handler)
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
    pay = lambda i: chain.pay((f"bc1qbench{i:06d}", 100_000 + i))  # noqa: E731
    return Chain("Mainnet", "bitcoin", n, pay, chain.mine, closers=[server.close])


def solana_chain(user, n: int, own_receivers: bool = False) -> Chain:
    """`own_receivers`: every draft has its own receiver address (else all share one)."""
    from solders.keypair import Keypair

    from drafts.models import Draft
    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes import FakeSolana

    cluster = FakeSolana()
    server = FakeServer(cluster.handler)
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

    def pay(i: int) -> None:
        draft = Draft.objects.get(amount_base_units=10**9 + i)
        cluster.pay_sol(reference=draft.solana_reference, receiver=draft.receiver_address, lamports=10**9 + i)

    def blocks(k: int) -> None:
        cluster.slot += k

    return Chain("Solana", "solana", n, pay, blocks, pay_makes_block=True, closers=[server.close])


def lightning_chain(user, n: int, node: str = "lud21") -> Chain:
    """`node`: "lud21" (each draft has a verify URL on the receiver's server), "lnd" or "lnbits"."""
    import hashlib

    from payments.enums import Currency, Method, Network
    from tests.chainwatch.conftest import FakeServer
    from tests.chainwatch.fakes_lightning import FakeLightning

    provider = FakeLightning()
    server = FakeServer(provider.handler)
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

    def stop() -> None:
        settings.LND_REST_URL = settings.LNBITS_URL = ""
        server.close()

    pay = lambda i: provider.settle(hashes[i], secrets[i].hex())  # noqa: E731
    return Chain("Mainnet", "lightning", n, pay, closers=[stop])


CHAINS = {
    "evm": evm_chain,
    "evm-eth": lambda u, n: evm_chain(u, n, native=True),
    "evm-internal": lambda u, n: evm_chain(u, n, internal=True),
    "core": lambda u, n: bitcoin_chain(u, n, "core"),
    "esplora": lambda u, n: bitcoin_chain(u, n, "esplora"),
    "solana": solana_chain,
    "solana-receivers": lambda u, n: solana_chain(u, n, own_receivers=True),
    "lightning": lightning_chain,
    "lightning-lnd": lambda u, n: lightning_chain(u, n, "lnd"),
    "lightning-lnbits": lambda u, n: lightning_chain(u, n, "lnbits"),
}


def per_pass_and_block(user, backend: str, n: int) -> tuple[int, int, float, int | None]:
    """(http, rpc, seconds) of a pass over 10 blocks, then the rpc calls of a pass over 1 block."""
    from chainwatch.tasks import watcher_pass

    reset()
    chain = CHAINS[backend](user, n)
    repeat_endpoints(ENDPOINTS["count"])
    try:
        watcher_pass(chain.network, chain.family)
        chain.step(10, 0)
        http, rpc, seconds = measure(chain.network, chain.family)
        if not chain.blocks:
            return http, rpc, seconds, None
        chain.step(1, 1)
        return http, rpc, seconds, measure(chain.network, chain.family)[1]
    finally:
        chain.close()


ENDPOINTS = {"count": 1}


def repeat_endpoints(count: int) -> None:
    """--endpoints N: each configured node URL N times over, as N endpoints of one network
    (chainwatch/quorum.py): the calls then include the quorum's checks of every endpoint."""
    if count > 1:
        settings.CHAINWATCH_ENDPOINTS = {
            network: {kind: ",".join([url] * count) if url and kind != "ws_url" else url for kind, url in kinds.items()}
            for network, kinds in settings.CHAINWATCH_ENDPOINTS.items()
        }


def flat_check(rows: dict[str, list[tuple[int, int, int | None]]]) -> bool:
    """Calls per pass and per block at every size from FLAT_FROM drafts within BOUND times those
    at the smallest such size."""
    print(f"\nCalls by open drafts, from {FLAT_FROM}: largest / at the smallest size (bound {BOUND:g}x)")
    print(f"{'backend':<16} {'per pass':>9} {'per block':>10}  verdict")
    flat = True
    for backend, sizes in rows.items():
        ratios = []
        for column in (1, 2):
            values = [row[column] for row in sizes if row[column] is not None and row[0] >= FLAT_FROM]
            ratios.append(max(values) / values[0] if values else None)
        shown = [f"x{r:.2f}" if r is not None else "-" for r in ratios]
        over = any(r is not None and r > BOUND for r in ratios)
        if backend in NOT_A_NODE:
            verdict = f"not node calls ({NOT_A_NODE[backend]})"
        else:
            verdict = f"OVER {BOUND:g}x" if over else f"within {BOUND:g}x"
            flat = flat and not over
        print(f"{backend:<16} {shown[0]:>9} {shown[1]:>10}  {verdict}")
    return flat


def listener_minute(chain: Chain, block_seconds: float, seconds: float, spacing_ms: int) -> tuple[float, float]:
    """Passes and JSON-RPC calls a minute of the listener's pass loop (chainwatch.listener.Watch,
    the real pass) while the node announces a new block every `block_seconds`."""
    from chainwatch import listener

    settings.CHAINWATCH_MIN_PASS_SPACING_MS = spacing_ms

    async def announcing(wake, live) -> None:  # what newHeads / hashblock do, without a socket
        loop = asyncio.get_running_loop()
        live(True)
        wake()
        started, made = loop.time(), 0
        while True:
            made += 1
            await asyncio.sleep(max(0.0, started + made * block_seconds - loop.time()))
            await loop.run_in_executor(None, chain.blocks, 1)
            wake()

    watch = listener.Watch(chain.network, chain.family, announcing)

    async def main() -> tuple[float, float]:
        task = asyncio.create_task(watch.main())
        try:
            while watch.passes_run < 1:  # the first pass catches up first
                await asyncio.sleep(0.01)
            ONLY_THREADS["prefix"] = "watch-"  # the watch's pass thread: not the chain's own blocks
            COUNT["rpc"], passes, started = 0, watch.passes_run, time.monotonic()
            await asyncio.sleep(seconds)
            minutes = (time.monotonic() - started) / 60
            return (watch.passes_run - passes) / minutes, COUNT["rpc"] / minutes
        finally:
            ONLY_THREADS["prefix"] = ""
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    return asyncio.run(main())


def fast_chain(user, backends: list[str], n: int, block_seconds: float, seconds: float) -> None:
    interval = settings.CHAINWATCH_INTERVAL_SECONDS
    spacing = settings.CHAINWATCH_MIN_PASS_SPACING_MS
    print(f"\nA fast chain: a block every {block_seconds:g} s, {n} open drafts, {seconds:g} s per row")
    print(f"{'backend':<16} {'passes':<36} {'passes/min':>10} {'rpc/min':>8}")
    for backend in backends:
        from chainwatch.tasks import watcher_pass

        reset()
        chain = CHAINS[backend](user, n)
        try:
            watcher_pass(chain.network, chain.family)
            # Before push: a beat pass every CHAINWATCH_INTERVAL_SECONDS over the blocks made meanwhile.
            chain.blocks(round(interval / block_seconds))
            rpc = measure(chain.network, chain.family)[1]
            label = f"beat every {interval} s (polling)"
            print(f"{backend:<16} {label:<36} {60 / interval:>10.0f} {rpc * 60 / interval:>8.0f}", flush=True)
            for spacing_ms, label in ((0, "per block, no spacing"), (spacing, f"per block, {spacing} ms apart")):
                passes, calls = listener_minute(chain, block_seconds, seconds, spacing_ms)
                print(f"{backend:<16} {label:<36} {passes:>10.0f} {calls:>8.0f}", flush=True)
        finally:
            settings.CHAINWATCH_MIN_PASS_SPACING_MS = spacing
            chain.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000,10000")
    parser.add_argument("--endpoints", type=int, default=1, help="endpoints per network (a quorum of all)")
    parser.add_argument("--backends", default=",".join(CHAINS))
    parser.add_argument("--fast-backends", default="evm,solana", help="backends run as a fast chain ('' for none)")
    parser.add_argument("--block-seconds", type=float, default=0.4, help="the fast chain's block time")
    parser.add_argument("--fast-seconds", type=float, default=10, help="how long each fast-chain row runs")
    args = parser.parse_args()
    ENDPOINTS["count"] = args.endpoints
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
        print("A pass over 10 new blocks (one payment), then the rpc calls of a pass over 1 block (one payment)")
        print(f"{'backend':<16} {'drafts':>7} {'http':>7} {'rpc calls':>10} {'seconds':>8} {'rpc/block':>10}")
        rows: dict[str, list] = {}
        for backend in backends:
            for n in sizes:
                http, rpc, seconds, per_block = per_pass_and_block(user, backend, n)
                rows.setdefault(backend, []).append((n, rpc, per_block))
                shown = "-" if per_block is None else per_block
                print(f"{backend:<16} {n:>7} {http:>7} {rpc:>10} {seconds:>8.2f} {shown:>10}", flush=True)
        flat = flat_check(rows)
        fast = [b for b in args.fast_backends.split(",") if b]
        if fast:
            fast_chain(user, fast, sizes[0], args.block_seconds, args.fast_seconds)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
