"""Throughput and latency of the drafts API under the production server configuration.

Run from the repository root (or `make bench`):

    .venv/bin/python bench/drafts_bench.py [--seconds 10] [--rounds 2] [--clients 32] [--workers N] [-v] [--profile N]

It creates its own PostgreSQL database (dropped and recreated each run), migrates
it, issues an API key, starts gunicorn sync workers with DEBUG off on a free
127.0.0.1 port, and measures for --seconds each (split into --rounds rounds that
interleave the endpoints, so changing background load hits all three alike):

- GET  /api/v1/fees/schedule   (authenticated trivial view)
- GET  /api/v1/drafts/{id}     (one-draft read; ids created in the warm-up)
- POST /api/v1/drafts          (fiat-priced USDC on Base, varied bodies, fresh Idempotency-Key)

It prints requests/s, p50/p99 latency and errors per endpoint, the ratios
(create/read, read/trivial), the CPU spent per request by gunicorn, PostgreSQL,
Redis and the load generator, and the SQL statements of one draft creation
(counted in-process with CaptureQueriesContext against the bench database).
gunicorn is stopped and the database dropped at the end, also on Ctrl-C or error.

The load generator is asyncio on raw sockets in this process: request bytes are
prebuilt, nothing is parsed but the status line (and the ids of the warm-up drafts).
gunicorn's sync workers close the connection after every response (no keep-alive),
so each request opens a new loopback connection.
On a 2-core machine the load generator competes with the server for CPU: its
share is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
SCOPES = "drafts:read,drafts:write,fees:read"
# EIP-55 addresses on Base, derived at start from fixed seeds (valid checksums, varied receivers).
RECEIVER_COUNT = 64
REQUEST_TIMEOUT = 10.0
TARGET_CREATE_OVER_READ = 0.50
TARGET_CREATE_P99_MS = 250.0


# --- Process and database lifecycle -------------------------------------------------------


class Cleanup:
    """Everything started or created, undone in reverse order exactly once."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, object]] = []

    def add(self, label: str, action) -> None:
        self.actions.append((label, action))

    def run(self) -> None:
        while self.actions:
            label, action = self.actions.pop()
            try:
                action()
            except Exception as exc:  # cleanup goes on whatever fails
                print(f"cleanup: {label} failed: {exc}", file=sys.stderr)


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt


def admin_connect(pg_url: str):
    import psycopg

    return psycopg.connect(f"{pg_url}/postgres", autocommit=True, connect_timeout=5)


def recreate_database(pg_url: str, name: str) -> None:
    from psycopg import sql

    with admin_connect(pg_url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))


def drop_database(pg_url: str, name: str) -> None:
    from psycopg import sql

    with admin_connect(pg_url) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def clear_rate_limit_keys(cache_url: str) -> None:
    """Throttle and auth-failure counters of earlier runs (key ids restart at 1 in a new database)."""
    import redis

    client = redis.Redis.from_url(cache_url, socket_timeout=5)
    for pattern in ("*throttle:*", "*auth-failures:*"):
        keys = list(client.scan_iter(match=pattern, count=1000))
        if keys:
            client.delete(*keys)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_checked(args: list[str], env: dict[str, str], what: str, timeout: float = 300) -> str:
    result = subprocess.run(args, env=env, cwd=ROOT, capture_output=True, text=True, timeout=timeout)  # noqa: S603
    if result.returncode != 0:
        raise SystemExit(f"{what} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result.stdout


def stop_process(proc: subprocess.Popen, *, grace: float = 10.0) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def wait_healthy(port: int, proc: subprocess.Popen, log: Path, *, limit: float = 30.0) -> None:
    deadline = time.monotonic() + limit
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as response:  # noqa: S310
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.2)
    raise SystemExit(f"/healthz did not answer 200 within {limit:.0f} s ({last}):\n{log.read_text()[-3000:]}")


# --- CPU accounting from /proc (Linux) -----------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, *, reaped_children: bool = False) -> float:
    """utime + stime of a process; with reaped_children, plus cutime + cstime (the CPU of
    children that have exited), so a parent's total never goes down."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLOCK_TICKS


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


CPU_PARTS = ("gunicorn", "postgres", "redis", "client")


@dataclass
class CpuProbe:
    gunicorn_pid: int
    pg_url: str
    db_name: str
    cache_url: str
    redis_pid: int | None = None

    def __post_init__(self) -> None:
        try:
            import redis

            self.redis_pid = int(redis.Redis.from_url(self.cache_url).info("server")["process_id"])
        except Exception:  # CPU accounting is informative only
            self.redis_pid = None

    postmaster_pid: int | None = None

    def postgres_cpu(self) -> float:
        """The whole cluster: the postmaster with its exited children, plus its live ones.
        Summing only the live backends went negative when a busy backend exited."""
        if self.postmaster_pid is None:
            try:
                with admin_connect(self.pg_url) as conn:
                    backend = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
                self.postmaster_pid = parent_of(backend)
            except Exception:  # CPU accounting is informative only
                return 0.0
        if self.postmaster_pid is None:
            return 0.0
        live = children(self.postmaster_pid)
        return cpu_seconds(self.postmaster_pid, reaped_children=True) + sum(cpu_seconds(p) for p in live)

    def snapshot(self) -> dict[str, float]:  # keys: CPU_PARTS
        workers = children(self.gunicorn_pid)
        return {
            "gunicorn": sum(cpu_seconds(p) for p in [self.gunicorn_pid, *workers]),
            "postgres": self.postgres_cpu(),
            "redis": cpu_seconds(self.redis_pid) if self.redis_pid else 0.0,
            "client": sum(os.times()[:2]),
        }


# --- Load generator -------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    error_samples: dict[str, int] = field(default_factory=dict)
    elapsed: float = 0.0
    bodies: list[bytes] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors += 1
        self.error_samples[what] = self.error_samples.get(what, 0) + 1

    @property
    def ok(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.ok / self.elapsed if self.elapsed else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        rank = math.ceil(p / 100 * len(ordered))  # nearest-rank percentile
        return ordered[min(len(ordered), max(rank, 1)) - 1] * 1000


async def one_request(port: int, payload: bytes, expect: bytes, result: Result, keep_body: bool) -> None:
    started = time.perf_counter()
    writer = None
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(payload)
        data = await reader.read(-1)  # the sync worker closes the connection after the response
    except (OSError, asyncio.IncompleteReadError) as exc:
        result.error(type(exc).__name__)
        return
    finally:
        if writer is not None:
            writer.close()
    status = data[9:12]
    if status != expect:
        result.error(f"HTTP {status.decode(errors='replace') or 'none'}")
        if len(result.error_samples) <= 3 and status:
            result.error_samples.setdefault(data.partition(b"\r\n\r\n")[2][:300].decode(errors="replace"), 0)
        return
    result.latencies.append(time.perf_counter() - started)
    if keep_body:
        result.bodies.append(data.partition(b"\r\n\r\n")[2])


async def run_phase(
    *,
    name: str,
    port: int,
    clients: int,
    make_request,
    expect: bytes,
    seconds: float | None = None,
    total: int | None = None,
    keep_bodies: bool = False,
) -> Result:
    """`clients` loops each sending one request at a time, until the time or the count is used up."""
    result = Result(name)
    limit = seconds if seconds is not None else 120.0  # a count-bounded phase still stops in bounded time
    started = time.perf_counter()
    deadline = started + limit
    issued = 0

    async def client(index: int) -> None:
        nonlocal issued
        while time.perf_counter() < deadline and (total is None or issued < total):
            issued += 1
            payload = make_request(index, issued)
            try:
                async with asyncio.timeout(REQUEST_TIMEOUT):
                    await one_request(port, payload, expect, result, keep_bodies)
            except TimeoutError:
                result.error("timeout")

    async with asyncio.timeout(limit + REQUEST_TIMEOUT + 5):
        await asyncio.gather(*(client(i) for i in range(clients)))
    result.elapsed = time.perf_counter() - started
    return result


def evm_addresses(count: int) -> list[str]:
    from eth_utils import keccak, to_checksum_address

    return [to_checksum_address(keccak(f"drafts-bench-receiver-{i}".encode())[-20:]) for i in range(count)]


class Requests:
    """Request bytes, built once per shape; only the varying parts are formatted per request."""

    def __init__(self, port: int, api_key: str) -> None:
        self.head = (
            f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {api_key}\r\n"
            "Accept: application/json\r\nConnection: close\r\n"
        )
        self.trivial = f"GET /api/v1/fees/schedule HTTP/1.1\r\n{self.head}\r\n".encode()
        self.receivers = evm_addresses(RECEIVER_COUNT)
        self.run_tag = secrets.token_hex(4)
        self.draft_reads: list[bytes] = []
        self.posts = 0  # every creation of the run gets its own body and Idempotency-Key

    def read_requests(self, ids: list[str]) -> None:
        self.draft_reads = [f"GET /api/v1/drafts/{i} HTTP/1.1\r\n{self.head}\r\n".encode() for i in ids]

    def get_trivial(self, client: int, n: int) -> bytes:
        return self.trivial

    def get_draft(self, client: int, n: int) -> bytes:
        return self.draft_reads[n % len(self.draft_reads)]

    def post_draft(self, client: int, _: int) -> bytes:
        self.posts += 1
        n = self.posts
        # Receivers rotate; USD on even receivers, EUR on odd ones. Per receiver the amount grows by
        # 0.37 per request, far more than the 1000 base units (0.001 USDC) a nudge may add.
        receiver = n % RECEIVER_COUNT
        step = n // RECEIVER_COUNT
        fiat = "USD" if receiver % 2 == 0 else "EUR"
        amount = f"{5 + step * 0.37 + random.randint(0, 9) * 0.001:.3f}"  # noqa: S311
        body = (
            f'{{"network":"Base","currency":"USDC","receiverAddress":"{self.receivers[receiver]}",'
            f'"fiatCurrency":"{fiat}","fiatAmount":{amount},"memo":"bench {n}"}}'
        ).encode()
        return (
            f"POST /api/v1/drafts HTTP/1.1\r\n{self.head}Content-Type: application/json\r\n"
            f"Idempotency-Key: bench-{self.run_tag}-{n}\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode() + body


# --- In-process counting and profiling (runs in a child with the bench environment) ---------


def inprocess(mode: str, api_key: str, count: int, verbose: bool) -> None:
    """Create drafts through the whole Django stack (middleware, DRF, view) without a server."""
    sys.path.insert(0, str(ROOT))
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    receivers = evm_addresses(8)
    tag = secrets.token_hex(4)

    def create(n: int):
        body = {
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": receivers[n % len(receivers)],
            "fiatCurrency": "EUR",
            "fiatAmount": f"{1000 + n * 0.37:.2f}",
            "memo": f"in-process {n}",
        }
        response = client.post(
            "/api/v1/drafts", data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=f"{mode}-{tag}-{n}"
        )
        if response.status_code != 201:
            raise SystemExit(f"creation failed: {response.status_code} {response.content[:500]!r}")

    create(0)  # warm: imports, rate cache, the once-a-minute API key touch
    if mode == "queries":
        # Django 5 logs BEGIN and COMMIT among the captured queries (debug_transaction).
        with CaptureQueriesContext(connection) as capture:
            create(1)
        statements = [q["sql"] for q in capture.captured_queries]
        sql = [s for s in statements if s not in ("BEGIN", "COMMIT", "ROLLBACK")]
        print(json.dumps({"sql": len(sql), "statements": statements}))
    else:
        import cProfile
        import io
        import pstats

        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        for n in range(1, count + 1):
            create(n)
        profile.disable()
        elapsed = time.perf_counter() - started
        out = io.StringIO()
        stats = pstats.Stats(profile, stream=out)
        stats.sort_stats("cumulative").print_stats(45 if verbose else 30)
        stats.sort_stats("tottime").print_stats(25)
        print(f"{count} creations in-process under cProfile: {elapsed / count * 1000:.2f} ms each (with profiler)\n")
        print(out.getvalue())


# --- Main -----------------------------------------------------------------------------------


def report(results: list[Result], args, queries: dict, workers: int) -> None:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"\n{args.clients} concurrent clients, {args.seconds:g} s per endpoint, gunicorn {workers} sync workers, "
        f"load average at the end {load} on {os.cpu_count()} cores"
    )
    print(f"{'endpoint':34} {'requests':>9} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}")
    for r in results:
        print(f"{r.name:34} {r.ok:9d} {r.rate:8.0f} {r.percentile(50):8.1f} {r.percentile(99):8.1f} {r.errors:7d}")
    for r in results:
        for what, n in r.error_samples.items():
            print(f"  {r.name}: {what} ({n})" if n else f"  {r.name} sample body: {what}")
    trivial, read, create = results
    cores = os.cpu_count() or 1
    print("\nCPU per request, ms (gunicorn = master + workers; client = this load generator). 'cpu-bound req/s'")
    print(f"= {cores} cores / server CPU per request (gunicorn + postgres + redis): the rate if nothing else ran here.")
    print(f"{'endpoint':34} {'gunicorn':>9} {'postgres':>9} {'redis':>7} {'client':>7} {'cpu-bound req/s':>16}")
    capacity = {}
    for r in results:
        per = {k: v / r.ok * 1000 if r.ok else float("nan") for k, v in r.cpu.items()}
        server = per["gunicorn"] + per["postgres"] + per["redis"]
        capacity[r.name] = cores * 1000 / server if server > 0 else float("nan")
        print(
            f"{r.name:34} {per['gunicorn']:9.2f} {per['postgres']:9.2f} {per['redis']:7.2f} {per['client']:7.2f}"
            f" {capacity[r.name]:16.0f}"
        )
    client_share = max(r.cpu["client"] / r.elapsed for r in results) if results else 0
    print(
        f"\nNote: the Python load generator runs on the same {cores}-core machine and used up to "
        f"{client_share:.0%} of one core; the figures are lower than a remote load generator would see."
    )
    ratio_create = create.rate / read.rate if read.rate else 0
    ratio_read = read.rate / trivial.rate if trivial.rate else 0
    print("\nRatios:")
    print(f"  create/read    {ratio_create:.2f}  (target >= {TARGET_CREATE_OVER_READ:.2f})")
    print(f"  read/trivial   {ratio_read:.2f}")
    print(f"  create/trivial {create.rate / trivial.rate if trivial.rate else 0:.2f}")
    by_cpu = capacity[create.name] / capacity[read.name]
    print(f"  create/read by CPU per request {by_cpu:.2f} (steadier than req/s on a busy machine)")
    p99 = create.percentile(99)
    print(f"  POST p99       {p99:.0f} ms (target < {TARGET_CREATE_P99_MS:.0f} ms)")
    # Little's law: with every client always waiting on one request, mean latency = clients / throughput.
    floor = args.clients / (TARGET_CREATE_P99_MS / 1000)
    target = TARGET_CREATE_P99_MS
    print(f"  (with {args.clients} busy clients a p99 under {target:.0f} ms needs well over {floor:.0f} POST/s)")
    sql_count = queries.get("sql")
    tx = sum(1 for s in queries.get("statements", []) if s in ("BEGIN", "COMMIT", "ROLLBACK"))
    print(
        f"\nSQL per draft creation: {sql_count} statements, {tx // 2} explicit transactions (+{tx} BEGIN/COMMIT), "
        "counted in-process; the API key's last-used UPDATE adds one more at most once a minute"
    )
    if args.verbose:
        for number, statement in enumerate(queries.get("statements", []), 1):
            print(f"  {number:2d}. {statement[:400]}")
    met = ratio_create >= TARGET_CREATE_OVER_READ and p99 < TARGET_CREATE_P99_MS and not create.errors
    print(f"\nTarget {'MET' if met else 'NOT MET'}: POST >= 50% of the read's req/s and p99 < 250 ms, no errors")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="load per endpoint (default 10)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds the seconds are split into")
    parser.add_argument("--clients", type=int, default=32, help="concurrent clients (default 32)")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn sync workers")
    parser.add_argument("--warmup-drafts", type=int, default=500, help="drafts created before measuring")
    parser.add_argument("--db-name", default="pay_bench")
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--cache-url", default=os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/15"))
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="also cProfile N in-process creations")
    parser.add_argument("-v", "--verbose", action="store_true", help="list the SQL of one creation")
    parser.add_argument("--inprocess", choices=["queries", "profile"], help=argparse.SUPPRESS)
    parser.add_argument("--api-key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not (
        1 <= args.clients <= 1000 and 0 < args.seconds <= 600 and 1 <= args.workers <= 64 and 1 <= args.rounds <= 20
    ):
        parser.error("--clients 1-1000, --seconds up to 600, --workers 1-64, --rounds 1-20")

    if args.inprocess:
        inprocess(args.inprocess, args.api_key, max(args.profile, 1), args.verbose)
        return 0

    signal.signal(signal.SIGTERM, _on_sigterm)
    cleanup = Cleanup()
    var_dir = Path(tempfile.mkdtemp(prefix="drafts-bench-"))
    cleanup.add("remove temporary directory", lambda: shutil.rmtree(var_dir, ignore_errors=True))
    (var_dir / "static").mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{args.pg_url}/{args.db_name}",
        "CACHE_URL": args.cache_url,
        "CELERY_BROKER_URL": args.cache_url,  # only /healthz connects to it; nothing is enqueued
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "BASE_URL": "http://127.0.0.1",
        "ENABLED_NETWORKS": "Mainnet,Solana,Ethereum,Base",
        # Throttling stays on (its Redis round trips are part of every request) but cannot cap the run.
        # A per-second window keeps DRF's per-key history list near the production size (600/min).
        "API_RATE_LIMIT_READS": "1000000/s",
        "API_RATE_LIMIT_WRITES": "1000000/s",
        "VAR_DIR": str(var_dir),
        "LOG_LEVEL": "WARNING",
    }
    try:
        print(f"Database {args.db_name}: recreating and migrating")
        recreate_database(args.pg_url, args.db_name)
        cleanup.add(f"drop database {args.db_name}", lambda: drop_database(args.pg_url, args.db_name))
        clear_rate_limit_keys(args.cache_url)
        cleanup.add("clear rate-limit keys", lambda: clear_rate_limit_keys(args.cache_url))
        run_checked([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], env, "migrate")
        api_key = run_checked(
            [PYTHON, "manage.py", "issue_api_key", "--email", "bench@example.com", "--scopes", SCOPES],
            env,
            "issue_api_key",
        ).strip()

        port = free_port()
        log = var_dir / "gunicorn.log"
        with open(log, "w") as log_file:
            gunicorn = subprocess.Popen(  # noqa: S603
                [str(VENV_BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
                + ["--workers", str(args.workers), "--worker-class", "sync", "--backlog", "2048"]
                + ["--timeout", "30", "--graceful-timeout", "5", "--log-level", "warning"],
                env=env,
                cwd=ROOT,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stopped below, not by the terminal's Ctrl-C
            )
        cleanup.add("stop gunicorn", lambda: stop_process(gunicorn))
        wait_healthy(port, gunicorn, log)
        print(f"gunicorn: {args.workers} sync workers on 127.0.0.1:{port}, DEBUG off, PostgreSQL, Redis cache")

        requests = Requests(port, api_key)
        probe = CpuProbe(gunicorn.pid, args.pg_url, args.db_name, args.cache_url)

        async def measure() -> list[Result]:
            warm = await run_phase(
                name="warm-up POST",
                port=port,
                clients=args.clients,
                make_request=requests.post_draft,
                expect=b"201",
                total=args.warmup_drafts,
                keep_bodies=True,
            )
            if warm.errors or not warm.bodies:
                raise SystemExit(f"warm-up creations failed: {warm.errors} errors {warm.error_samples}")
            requests.read_requests([json.loads(b)["id"] for b in warm.bodies])
            for make, expect in ((requests.get_trivial, b"200"), (requests.get_draft, b"200")):
                await run_phase(
                    name="warm-up", port=port, clients=args.clients, make_request=make, expect=expect, seconds=1
                )
            print(f"Warm-up: {len(warm.bodies)} drafts created; measuring {args.seconds:g} s per endpoint")
            endpoints = (
                ("GET  /api/v1/fees/schedule", requests.get_trivial, b"200"),
                ("GET  /api/v1/drafts/{id}", requests.get_draft, b"200"),
                ("POST /api/v1/drafts", requests.post_draft, b"201"),
            )
            # Rounds interleave the endpoints, so a change in background load hits all three alike.
            totals = {name: Result(name, cpu=dict.fromkeys(CPU_PARTS, 0.0)) for name, _, _ in endpoints}
            for round_number in range(1, args.rounds + 1):
                for name, make, expect in endpoints:
                    before = probe.snapshot()
                    part = await run_phase(
                        name=name,
                        port=port,
                        clients=args.clients,
                        make_request=make,
                        expect=expect,
                        seconds=args.seconds / args.rounds,
                    )
                    after = probe.snapshot()
                    total = totals[name]
                    total.latencies += part.latencies
                    total.errors += part.errors
                    for what, n in part.error_samples.items():
                        total.error_samples[what] = total.error_samples.get(what, 0) + n
                    total.elapsed += part.elapsed
                    for k in CPU_PARTS:
                        total.cpu[k] += after[k] - before[k]
                    print(f"  round {round_number}/{args.rounds} {name}: {part.rate:.0f} req/s")
            return list(totals.values())

        results = asyncio.run(measure())

        child = [PYTHON, str(Path(__file__).resolve()), "--api-key", api_key]
        counted = run_checked(child + ["--inprocess", "queries"], env, "query count")
        queries = json.loads(counted.strip().splitlines()[-1])
        report(results, args, queries, args.workers)
        if args.profile:
            print(f"\nProfile of {args.profile} creations in-process (cProfile):")
            profile_args = ["--inprocess", "profile", "--profile", str(args.profile)] + (["-v"] if args.verbose else [])
            print(run_checked(child + profile_args, env, "profile", timeout=600))
        return 0
    except KeyboardInterrupt:
        print("\nInterrupted; cleaning up", file=sys.stderr)
        return 130
    except BaseException:
        server_log = var_dir / "gunicorn.log"
        if server_log.exists() and server_log.stat().st_size:
            print(f"gunicorn log (last lines):\n{server_log.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        cleanup.run()


if __name__ == "__main__":
    sys.exit(main())
