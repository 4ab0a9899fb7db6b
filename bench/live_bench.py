"""Ten thousand payers waiting on their pay pages: what one ASGI process holds, and how soon each
payer hears of the payment.

Run from the repository root (PostgreSQL only; DATABASE_URL names the server):

    .venv/bin/python bench/live_bench.py [--waiters 10000] [--accounts 100]

It builds a fresh database (dropped at the end) with `--waiters` pay links, each with a Pending
draft, across `--accounts` accounts, and starts one uvicorn process on it as `make run` does
(mcp_server.asgi). Then `--waiters` clients each hold the page's long poll
(`GET /pay/{token}/live?since=...`, asked again when it answers unchanged, as pay.js does),
opened `--ramp` at a time. Once the process holds them all it prints the process's memory
(RSS, and per waiter above the idle process), and the database's transactions per second
while they wait (pg_stat_database: no waiter reads on a timer; those that reach the end of
their wait ask again and read once). Then `--seen` of the drafts are marked Seen through the
drafts door the watchers use, `--committers` at a time, while every payer waits, and each of
those payers' answers is timed from the commit of its draft: p50, p99, the slowest and the
share within 1 s. The targets (issue 46): memory under 1 GB, every payer told within 1 s.
Clients and server share this machine: the load average is printed beside the figures.

The clients talk to uvicorn directly; behind nginx each waiter is two connections of an nginx
worker (NGINX_WORKER_CONNECTIONS, docs/production.md).
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import secrets
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from urllib.request import urlopen

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files

import django  # noqa: E402

django.setup()

import aiohttp  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import User  # noqa: E402
from bench.common import free_port, load_average, own_database  # noqa: E402
from core.runtime import open_files_raised  # noqa: E402
from drafts.models import Draft  # noqa: E402
from drafts.services import PaymentObservation, draft_payment_apply  # noqa: E402
from paylinks.models import PaymentRequest  # noqa: E402
from payments.enums import Currency, FeePlacement, Method, Network  # noqa: E402

BIN = ROOT / ".venv" / "bin"
WAITING = "Open:Pending:0"


def links(waiters: int, accounts: int) -> list[tuple[str, str]]:
    """`waiters` pay links with a Pending draft each: [(token, draft id)]."""
    users = [User.objects.create_user(f"live-{n}@example.com") for n in range(accounts)]
    now = timezone.now()
    rows = []
    for n in range(waiters):
        request_id, draft_id = uuid.uuid4(), uuid.uuid4()
        draft = Draft(
            id=draft_id,
            user=users[n % accounts],
            network=Network.ETHEREUM,
            currency=Currency.USDC,
            method=Method.SINGLE_OUTPUT,
            receiver_address="0x5ca1e" + f"{n:035x}",
            amount_base_units=1_000_000 + n,
            fee_placement=FeePlacement.ACCRUED,
            platform_fee={},
            required_confirmations=12,
            expires_at=now + timedelta(hours=2),
            payment_request_id=request_id,
        )
        request = PaymentRequest(
            id=request_id,
            user=users[n % accounts],
            token=secrets.token_urlsafe(32),
            fiat_currency="EUR",
            fiat_amount=1,
            options=[{"currency": "USDC", "network": "Ethereum", "receiverAddress": draft.receiver_address}],
            expires_at=now + timedelta(hours=2),
            draft=draft,
        )
        rows.append((draft, request))
    Draft.objects.bulk_create([d for d, _ in rows], batch_size=2000)
    PaymentRequest.objects.bulk_create([r for _, r in rows], batch_size=2000)
    return [(r.token, str(d.id)) for d, r in rows]


def start_uvicorn(port: int) -> subprocess.Popen:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "PYTHONPATH": str(ROOT),
        "CHECKOUT_RATE_LIMIT_READS": "100000000/min",
    }
    command = [str(BIN / "uvicorn"), "mcp_server.asgi:application", "--host", "127.0.0.1", "--port", str(port)]
    command += ["--no-access-log", "--backlog", "4096", "--timeout-keep-alive", "60"]
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603


def sockets(pid: int) -> int:
    fd = Path(f"/proc/{pid}/fd")
    count = 0
    for entry in fd.iterdir():
        try:
            count += os.readlink(entry).startswith("socket:")
        except OSError:
            continue
    return count


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User and system CPU the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def transactions() -> int:
    """The database's transactions so far (statistics as the server last flushed them)."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()"
            )
            return int(cursor.fetchone()[0])
    finally:
        connection.close()


async def hold(session: aiohttp.ClientSession, base: str, token: str, told: dict[str, float]) -> None:
    """What pay.js does: wait on the live URL until the draft is no longer Pending."""
    since = WAITING
    while since == WAITING:
        async with session.get(f"{base}/pay/{token}/live", params={"since": since}) as response:
            if response.status != 200:
                raise SystemExit(
                    f"live bench: the long poll answered {response.status}: {(await response.text())[:300]}"
                )
            body = await response.json()
        since = f"{body['status']}:{body['draftStatus'] or ''}:{body['confirmations']}"
    told[token] = time.time()


def mark_seen(database: str, pairs: list[tuple[str, str]], committers: int) -> dict[str, float]:
    """Mark each pair's draft Seen through the watchers' door, `committers` at a time; returns
    the time each commit ended. Run in a process of its own (`committed_elsewhere`): the
    clients' event loop shares no interpreter with this work."""
    connection.settings_dict["NAME"] = database
    amounts = {str(i): a for i, a in Draft.objects.filter(status="Pending").values_list("id", "amount_base_units")}
    connection.close()
    committed: dict[str, float] = {}

    def seen(pair: tuple[str, str]) -> None:
        token, draft_id = pair
        try:
            seen_on_chain = PaymentObservation(
                tx_id=f"0x{draft_id.replace('-', '')}", received_base_units=amounts[draft_id], confirmations=0
            )
            draft = draft_payment_apply(draft_id=uuid.UUID(draft_id), observation=seen_on_chain)  # the watchers' door
            assert draft.status != "Pending"
            # Read when the committing thread runs again: under contention a payer may be
            # told first, so a latency can come out a few milliseconds below zero.
            committed[token] = time.time()
        finally:
            connection.close()

    with ThreadPoolExecutor(committers) as pool:
        list(pool.map(seen, pairs))
    return committed


def committed_elsewhere(pairs: list[tuple[str, str]], committers: int) -> dict[str, float]:
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as process:
        return process.submit(mark_seen, connection.settings_dict["NAME"], pairs, committers).result()


async def scene(args: argparse.Namespace, pairs: list[tuple[str, str]], server: subprocess.Popen, base: str) -> None:
    told: dict[str, float] = {}
    idle_rss = rss_mb(server.pid)
    idle_sockets = sockets(server.pid)
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=120)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=timeout) as session:
        started = time.perf_counter()
        tasks = []
        for first in range(0, len(pairs), args.ramp):
            tasks += [asyncio.create_task(hold(session, base, t, told)) for t, _ in pairs[first : first + args.ramp]]
            while sockets(server.pid) - idle_sockets < len(tasks) * 0.95:
                await asyncio.sleep(0.05)
                if time.perf_counter() - started > 600:
                    raise SystemExit("live bench: the process never took every waiter")
        # The last arrivals' reads done, and their counts flushed (an idle backend reports its
        # statistics up to 10 s late): what follows counts only what waiting costs.
        await asyncio.sleep(12)
        held = sockets(server.pid) - idle_sockets
        print(f"{held:,} waiters held after {time.perf_counter() - started:.1f} s (opened {args.ramp} at a time)")
        rss = rss_mb(server.pid)
        print(
            f"uvicorn RSS: {idle_rss:.0f} MB idle, {rss:.0f} MB holding them "
            f"({(rss - idle_rss) * 1024 / held:.1f} KB each)"
        )
        before, clock = await asyncio.to_thread(transactions), time.perf_counter()
        cpu_before = cpu_seconds(server.pid)
        await asyncio.sleep(args.idle)
        elapsed = time.perf_counter() - clock
        rate = (await asyncio.to_thread(transactions) - before) / elapsed
        busy = (cpu_seconds(server.pid) - cpu_before) / elapsed
        print(
            f"while they wait: database transactions {rate:.1f}/s (every transaction of the server), "
            f"uvicorn CPU {busy:.0%} of a core, over {args.idle:.0f} s"
        )
        paid = pairs[: args.seen]
        clock, server_cpu, clients_cpu = time.perf_counter(), cpu_seconds(server.pid), time.process_time()
        committed = await asyncio.to_thread(committed_elsewhere, paid, args.committers)
        commit_seconds = time.perf_counter() - clock
        paying = tasks[: len(paid)]
        done, pending = await asyncio.wait(paying, timeout=30)
        elapsed = time.perf_counter() - clock
        server_cpu = (cpu_seconds(server.pid) - server_cpu) / elapsed
        clients_cpu = (time.process_time() - clients_cpu) / elapsed
        for task in done:
            task.result()
        for task in tasks:
            task.cancel()  # the payers whose drafts stay Pending stop waiting
        await asyncio.gather(*tasks, return_exceptions=True)
    latencies = sorted(told[t] - committed[t] for t in committed if t in told)
    if len(latencies) < len(paid):
        raise SystemExit(f"live bench: {len(paid) - len(latencies)} payers never heard of their payment")
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 1 else latencies * 99
    within = sum(1 for x in latencies if x <= 1.0) / len(latencies)
    print(
        f"{len(latencies):,} of the {len(pairs):,} drafts marked Seen in {commit_seconds:.1f} s "
        f"({args.committers} at a time), the others' payers still waiting; meanwhile CPU of a core: "
        f"uvicorn {server_cpu:.0%}, the clients {clients_cpu:.0%}"
    )
    print(
        f"commit -> payer told: p50 {cuts[49] * 1000:.0f} ms  p99 {cuts[98] * 1000:.0f} ms  "
        f"slowest {latencies[-1] * 1000:.0f} ms  within 1 s: {within:.1%}"
    )
    print(load_average())


def measure(args: argparse.Namespace) -> None:
    started = time.perf_counter()
    pairs = links(args.waiters, args.accounts)
    print(f"{len(pairs):,} pay links with a Pending draft in {time.perf_counter() - started:.1f} s", flush=True)
    port = free_port()
    server = start_uvicorn(port)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urlopen(f"{base}/healthz", timeout=1) as answer:  # noqa: S310 - our own http URL
                    if answer.status == 200:
                        break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit(f"live bench: uvicorn did not start: {server.stderr.read()[-2000:]!r}") from None
                time.sleep(0.2)
        asyncio.run(scene(args, pairs, server, base))
    finally:
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--waiters", type=int, default=10_000, help="payers waiting at once")
    parser.add_argument("--accounts", type=int, default=100, help="accounts owning their pay links")
    parser.add_argument("--ramp", type=int, default=500, help="long polls opened at a time")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds the database is watched while they wait")
    parser.add_argument("--seen", type=int, default=2_000, help="drafts marked Seen while all wait")
    parser.add_argument("--committers", type=int, default=8, help="drafts marked Seen at a time")
    parser.add_argument(
        "--db-name", default=f"live_bench_{os.getpid()}", help="the fresh database (dropped at the end)"
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("The live bench measures PostgreSQL's wake-ups: set DATABASE_URL to a PostgreSQL server.")
    open_files_raised()
    with own_database(args.db_name):
        measure(args)


if __name__ == "__main__":
    main()
