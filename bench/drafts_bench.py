"""The drafts API beside a bare Django + DRF app doing the floor of the same work, under wrk.

Run from the repository root (or `make bench`):

    .venv/bin/python bench/drafts_bench.py [--seconds 10] [--rounds 3] [--clients 32] [--workers N] [-v] [--profile N]

One invocation sets up both apps on the same PostgreSQL server, each in a fresh database
(recreated each run, dropped at the end): the project (`config.wsgi`, DEBUG off, Redis as the
shared cache for rate limits, limits set high enough not to cap the run) and the bare app
under bench/bare/ (same virtualenv, so the same Django, DRF and psycopg; a hashed Bearer-key
SELECT, body validation, one INSERT and a JSON answer; a one-row GET). Both run under gunicorn
with the same settings (sync workers, 2 x cores + 1). After a warm-up, wrk (Debian package;
scripts/system-deps.sh test) drives each with the same number of concurrent connections, in
interleaved rounds: POST project, POST bare, GET project, GET bare, then the next round.
A Lua script gives every POST its own body and Idempotency-Key; GETs rotate over drafts
created in the warm-up.

It prints per round and as medians of the rounds: requests/s, p50/p99 latency, errors, the
ratios project/bare, the server CPU per request (gunicorn master and workers; the PostgreSQL
backends serving that database), and, counted in-process, the SQL statements and Redis round
trips of one creation and one read in each app.

Figures taken while other work runs on the machine are not comparable with the targets:
the load average is printed with them.

`--against REV` measures a change instead: the project as committed at git revision REV (a
temporary worktree, same virtualenv and settings) takes the bare app's place, so the ratios
read "this tree / REV" within one run, the only comparison a machine whose speed drifts
allows. The targets are judged against the bare app only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = ROOT / ".venv" / "bin"
PYTHON = str(VENV_BIN / "python") if (VENV_BIN / "python").exists() else sys.executable
GUNICORN = str(VENV_BIN / "gunicorn") if (VENV_BIN / "gunicorn").exists() else shutil.which("gunicorn") or "gunicorn"
SCOPES = "drafts:read,drafts:write"
CPU_SAMPLE = 200  # in-process requests per figure of CPU per request
RECEIVER_COUNT = 256
READ_IDS = 1000
TARGET_POST_RATIO = 0.60
TARGET_GET_RATIO = 0.85
TARGET_POST_P99_MS = 150.0
APPS = ("project", "bare")
# What the second app is called in the report, and where each app's code is: the bare app,
# or with --against the project at another revision.
NAMES = {"project": "project", "bare": "bare"}
CODE = {"project": ROOT, "bare": ROOT}


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


def delete_cache_keys(cache_url: str, prefix: str) -> None:
    """This run's cache keys only: the Redis database may be shared with other work."""
    import redis

    client = redis.Redis.from_url(cache_url, socket_timeout=5)
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for start in range(0, len(keys), 500):
        client.delete(*keys[start : start + 500])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_checked(args: list[str], env: dict[str, str], what: str, timeout: float = 600, cwd: Path = ROOT) -> str:
    result = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)  # noqa: S603
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


def wait_healthy(port: int, proc: subprocess.Popen, log: Path, *, limit: float = 60.0) -> None:
    deadline = time.monotonic() + limit
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"gunicorn exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:  # noqa: S310
                if response.status == 200:
                    return
                last = f"HTTP {response.status}"
        except OSError as exc:
            last = str(exc)
        time.sleep(0.2)
    raise SystemExit(f"/healthz did not answer 200 within {limit:.0f} s ({last}):\n{log.read_text()[-3000:]}")


def start_gunicorn(app: str, wsgi: str, env: dict[str, str], workers: int, var_dir: Path, cleanup: Cleanup):
    port = free_port()
    log = var_dir / f"gunicorn-{app}.log"
    with open(log, "w") as log_file:
        proc = subprocess.Popen(  # noqa: S603
            [GUNICORN, wsgi, "--bind", f"127.0.0.1:{port}"]
            + ["--workers", str(workers), "--worker-class", "sync", "--backlog", "2048"]
            + ["--timeout", "30", "--graceful-timeout", "5", "--log-level", "warning"],
            env=env,
            cwd=CODE[app],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # stopped below, not by the terminal's Ctrl-C
        )
    cleanup.add(f"stop gunicorn ({app})", lambda: stop_process(proc))
    wait_healthy(port, proc, log)
    return proc, port


# --- CPU accounting from /proc (Linux) -----------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int, *, reaped_children: bool = False) -> float:
    """utime + stime of a live process (0 if it is gone); with reaped_children, plus cutime + cstime
    (the CPU of its children that have exited), so a parent's total never goes down."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / CLOCK_TICKS


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            pass
    return found


@dataclass
class CpuProbe:
    """Server CPU of one app: its gunicorn processes and the PostgreSQL backends connected to its
    database (persistent connections, so the same backends serve a whole round). Other work on
    the machine does not count here, unlike whole-server figures."""

    gunicorn_pid: int
    pg_url: str
    db_name: str

    def backends(self) -> list[int]:
        with admin_connect(self.pg_url) as conn:
            rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", [self.db_name]).fetchall()
        return [row[0] for row in rows]

    def snapshot(self) -> dict[str, dict[int, float]]:
        workers = [self.gunicorn_pid, *children(self.gunicorn_pid)]
        return {
            "gunicorn": {pid: cpu_seconds(pid) for pid in workers},
            "postgres": {pid: cpu_seconds(pid) for pid in self.backends()},
        }

    @staticmethod
    def spent(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
        """CPU seconds between two snapshots; a process born in between counts from zero."""
        return {
            part: sum(max(0.0, cpu - before[part].get(pid, 0.0)) for pid, cpu in after[part].items()) for part in after
        }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# --- wrk and its Lua scripts ----------------------------------------------------------------

LUA_COMMON = r"""
local threads = {}
function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
end

-- Unexpected answers, per thread: counted by status, with the first body as a sample.
statuses = {}
sample = ""
function response(status, headers, body)
  if status >= 300 then
    statuses[status] = (statuses[status] or 0) + 1
    if sample == "" and body then sample = string.sub(body, 1, 300) end
  end
end

function done(summary, latency, requests)
  local counted, first = {}, ""
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do counted[status] = (counted[status] or 0) + n end
    if first == "" then first = thread:get("sample") end
  end
  local parts = {}
  for status, n in pairs(counted) do table.insert(parts, string.format('"%d": %d', status, n)) end
  local e = summary.errors
  io.write(string.format(
    'WRK-RESULT {"requests": %d, "duration_us": %d, "connect": %d, "read": %d, "write": %d, "status": %d, '
      .. '"timeout": %d, "p50_us": %d, "p99_us": %d, "statuses": {%s}}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), table.concat(parts, ", ")))
  io.write("WRK-SAMPLE " .. string.gsub(first, "[\r\n]", " ") .. "\n")
end
"""

LUA_POST = r"""
-- Each POST: its own Idempotency-Key and amount (receivers rotate; per receiver the fiat amount
-- grows by 0.01 a request, 10,000 base units, far more than the 1,000 a nudge may add).
local receivers = {%(receivers)s}
local key = "%(key)s"
local counter = 0
local base = 0
local tag = ""

function init(args)
  base = tonumber(args[1]) + (thread_number - 1) * 100000
  tag = args[2]
end

function request()
  counter = counter + 1
  local n = base + counter
  local receiver = receivers[(n %% #receivers) + 1]
  local step = math.floor(n / #receivers)
  local fiat = (n %% 2 == 0) and "USD" or "EUR"
  local body = string.format(
    '{"network":"Base","currency":"USDC","receiverAddress":"%%s","fiatCurrency":"%%s","fiatAmount":%%d.%%02d,'
      .. '"memo":"bench %%d"}',
    receiver, fiat, 1 + math.floor(step / 100), step %% 100, n)
  return wrk.format("POST", "/api/v1/drafts", {
    ["Authorization"] = "Bearer " .. key,
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json",
    ["Idempotency-Key"] = "bench-" .. tag .. "-" .. n,
  }, body)
end
"""

LUA_GET = r"""
local paths = {%(paths)s}
local key = "%(key)s"
local counter = 0

function init(args)
  counter = thread_number * 7919
end

function request()
  counter = counter + 1
  return wrk.format("GET", paths[(counter %% #paths) + 1], {
    ["Authorization"] = "Bearer " .. key,
    ["Accept"] = "application/json",
  })
end
"""


def evm_addresses(count: int) -> list[str]:
    from eth_utils import keccak, to_checksum_address

    return [to_checksum_address(keccak(f"drafts-bench-receiver-{i}".encode())[-20:]) for i in range(count)]


def lua_strings(values: list[str]) -> str:
    return ", ".join(json.dumps(v) for v in values)


@dataclass
class Run:
    """One wrk invocation against one app and endpoint."""

    requests: int
    seconds: float
    errors: dict[str, int]
    p50_ms: float
    p99_ms: float
    cpu: dict[str, float] = field(default_factory=dict)
    sample: str = ""  # the first unexpected answer's body

    @property
    def ok(self) -> int:
        return self.requests - sum(n for what, n in self.errors.items() if what.startswith("HTTP "))

    @property
    def rate(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def cpu_ms(self, part: str) -> float:
        return self.cpu.get(part, 0.0) / self.ok * 1000 if self.ok else float("nan")


class Wrk:
    def __init__(self, *, clients: int, threads: int, var_dir: Path) -> None:
        self.clients = clients
        self.threads = max(1, min(threads, clients))
        self.var_dir = var_dir
        self.invocations = 0
        self.tag = secrets.token_hex(4)

    def script(self, name: str, text: str) -> Path:
        path = self.var_dir / f"{name}.lua"
        path.write_text(LUA_COMMON + text)
        return path

    def run(self, *, port: int, script: Path, seconds: float) -> Run:
        self.invocations += 1
        command = ["wrk", "-t", str(self.threads), "-c", str(self.clients), "-d", f"{max(1, round(seconds))}s"]
        command += ["--timeout", "10s", "-s", str(script), f"http://127.0.0.1:{port}"]
        command += ["--", str(self.invocations * 1_000_000), self.tag]
        result = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)  # noqa: S603
        lines = [line for line in result.stdout.splitlines() if line.startswith("WRK-RESULT ")]
        if result.returncode != 0 or not lines:
            raise SystemExit(f"wrk failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
        figures = json.loads(lines[-1].removeprefix("WRK-RESULT "))
        errors = {k: figures[k] for k in ("connect", "read", "write", "timeout") if figures[k]}
        errors |= {f"HTTP {status}": n for status, n in figures["statuses"].items()}
        samples = [line for line in result.stdout.splitlines() if line.startswith("WRK-SAMPLE ")]
        sample = samples[-1].removeprefix("WRK-SAMPLE ").strip() if samples else ""
        return Run(
            requests=figures["requests"],
            seconds=figures["duration_us"] / 1e6,
            errors=errors,
            sample=sample,
            p50_ms=figures["p50_us"] / 1000,
            p99_ms=figures["p99_us"] / 1000,
        )


# --- In-process counting and profiling (runs in a child with the app's environment) ---------


class RedisCounter:
    """Round trips to Redis, counted where redis-py sends them (a pipeline is one)."""

    calls = 0

    @classmethod
    def install(cls) -> None:
        from redis.connection import AbstractConnection

        original = AbstractConnection.send_packed_command

        def counting(self, command, check_health=True):
            cls.calls += 1
            return original(self, command, check_health)

        AbstractConnection.send_packed_command = counting


def inprocess(app: str, mode: str, api_key: str, count: int, verbose: bool, profile_out: str | None = None) -> None:
    """Create and read drafts through the whole Django stack (middleware, DRF, view), no server."""
    sys.path.insert(0, os.environ.get("BENCH_CODE", str(ROOT)))  # --against: that revision's tree
    import django

    RedisCounter.install()
    django.setup()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {api_key}")
    receivers = evm_addresses(8)
    tag = secrets.token_hex(4)

    def create(n: int) -> str:
        body = {
            "network": "Base",
            "currency": "USDC",
            "receiverAddress": receivers[n % len(receivers)],
            "fiatCurrency": "EUR",
            "fiatAmount": round(1000 + n * 0.37, 2),  # a JSON number, as the API requires
            "memo": f"in-process {n}",
        }
        response = client.post(
            "/api/v1/drafts", data=body, content_type="application/json", HTTP_IDEMPOTENCY_KEY=f"{mode}-{tag}-{n}"
        )
        if response.status_code != 201:
            raise SystemExit(f"{app}: creation failed: {response.status_code} {response.content[:500]!r}")
        return response.json()["id"]

    def read(draft_id: str) -> None:
        response = client.get(f"/api/v1/drafts/{draft_id}")
        if response.status_code != 200:
            raise SystemExit(f"{app}: read failed: {response.status_code} {response.content[:500]!r}")

    read(create(0))  # warm: imports, connections, rate cache, the once-a-minute API key touch
    if mode == "queries":
        counts = {}
        draft_id = create(1)
        for what, call in (("create", lambda: create(2)), ("read", lambda: read(draft_id))):
            RedisCounter.calls = 0
            # Django 5 logs BEGIN and COMMIT among the captured queries (debug_transaction).
            with CaptureQueriesContext(connection) as capture:
                call()
            statements = [q["sql"] for q in capture.captured_queries]
            counts[what] = {
                "sql": sum(1 for s in statements if s not in ("BEGIN", "COMMIT", "ROLLBACK")),
                "transactions": sum(1 for s in statements if s == "COMMIT"),
                "redis": RedisCounter.calls,
                "statements": statements,
            }
        # CPU of this thread per request, the whole Django stack in-process (no server, no load):
        # steadier than req/s on a machine that is doing other work.
        ids = [create(10 + n) for n in range(CPU_SAMPLE)]
        for what, call in (("create", lambda n: create(10 + CPU_SAMPLE + n)), ("read", lambda n: read(ids[n]))):
            started = time.thread_time()
            for n in range(CPU_SAMPLE):
                call(n)
            counts[what]["cpu_ms"] = (time.thread_time() - started) / CPU_SAMPLE * 1000
        print(json.dumps(counts))
    elif mode == "instructions":
        # Under valgrind (callgrind, instrumentation off at start): count only the requests.
        ids = [create(n) for n in range(1, 31)]
        for what, call in (("create", lambda n: create(100 + n)), ("read", lambda n: read(ids[n % len(ids)]))):
            for n in range(20):  # warm this path: prepared statements, caches
                call(n)
            callgrind_control("--zero")
            callgrind_control("--instr=on")
            for n in range(count):
                call(1000 + n)
            callgrind_control("--instr=off")
            callgrind_control(f"--dump={what}")
    else:
        import cProfile
        import io
        import pstats

        for what in ("create", "read"):
            ids = [create(n) for n in range(1, count + 1)] if what == "read" else []
            profile = cProfile.Profile()
            started = time.perf_counter()
            profile.enable()
            for n in range(1, count + 1):
                if what == "create":
                    create(count + n)
                else:
                    read(ids[n - 1])
            profile.disable()
            elapsed = time.perf_counter() - started
            if profile_out:
                profile.dump_stats(str(Path(profile_out) / f"{what}.prof"))
            out = io.StringIO()
            stats = pstats.Stats(profile, stream=out)
            stats.sort_stats("cumulative").print_stats(45 if verbose else 30)
            stats.sort_stats("tottime").print_stats(25)
            print(f"{app}: {count} {what}s in-process under cProfile: {elapsed / count * 1000:.2f} ms each\n")
            print(out.getvalue())


def callgrind_control(command: str) -> None:
    """Ask the valgrind running this process to do something, and wait until it has."""
    control = subprocess.Popen(["callgrind_control", command, str(os.getpid())], stdout=subprocess.DEVNULL)  # noqa: S603, S607
    while control.poll() is None:
        time.sleep(0.01)  # a system call: valgrind reads its commands between them
    if control.returncode:
        raise SystemExit(f"callgrind_control {command} failed ({control.returncode})")


def count_instructions(app: str, env: dict[str, str], api_key: str, count: int, var_dir: Path) -> dict[str, float]:
    """Instructions per creation and per read, in-process, counted by valgrind's callgrind:
    the same figure on every run (unlike req/s on a machine whose speed drifts), for the
    Python side only (not PostgreSQL, Redis or the kernel)."""
    out = var_dir / f"callgrind-{app}"
    child = [PYTHON, str(Path(__file__).resolve()), "--app", app, "--api-key", api_key]
    child += ["--inprocess", "instructions", "--profile", str(count)]
    run_checked(
        ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}.%p"] + child,
        env,
        f"instructions ({app})",
        timeout=1800,
        cwd=CODE[app],
    )
    figures = {}
    for dump in var_dir.glob(f"callgrind-{app}.*"):
        text = dump.read_text(errors="replace")
        dumped = re.search(r"^desc: Trigger: dump (\w+)$", text, re.M)  # callgrind_control --dump=<what>
        totals = re.search(r"^totals: (\d+)$", text, re.M)
        if dumped and totals:
            figures[dumped[1]] = int(totals[1]) / count
    if set(figures) != {"create", "read"}:
        raise SystemExit(f"instructions ({app}): no counts in the callgrind dumps ({sorted(figures)})")
    return figures


# --- Report ---------------------------------------------------------------------------------


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def report(runs: dict[tuple[str, str], list[Run]], counts: dict[str, dict], args, workers: int) -> bool:
    cores = os.cpu_count() or 1
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    before = ", ".join(f"{x:.1f}" for x in args.load_before)
    print(
        f"\nwrk: {args.clients} connections, {len(next(iter(runs.values())))} interleaved rounds of {args.seconds:g} s "
        f"per app and endpoint; gunicorn {workers} sync workers each; load average {before} before the bench, "
        f"{load} at the end, on {cores} cores"
    )
    other = NAMES["bare"]
    print(f"Per round (req/s project / {other}):")
    for endpoint in ("POST", "GET"):
        pairs = zip(runs[("project", endpoint)], runs[("bare", endpoint)], strict=True)
        print(
            f"  {endpoint:4} "
            + "  ".join(f"{p.rate:.0f}/{b.rate:.0f} ({p.rate / b.rate if b.rate else 0:.2f})" for p, b in pairs)
        )
    print(
        f"\n{'endpoint':28} {'app':8} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} {'errors':>7}"
        f" {'gunicorn CPU ms/req':>20} {'postgres CPU ms/req':>20}"
    )
    medians: dict[tuple[str, str], dict[str, float]] = {}
    for endpoint, label in (("POST", "POST /api/v1/drafts"), ("GET", "GET  /api/v1/drafts/{id}")):
        for app in APPS:
            rs = runs[(app, endpoint)]
            m = {
                "rate": median([r.rate for r in rs]),
                "p50": median([r.p50_ms for r in rs]),
                "p99": median([r.p99_ms for r in rs]),
                "errors": sum(r.error_count for r in rs),
                "gunicorn": median([r.cpu_ms("gunicorn") for r in rs]),
                "postgres": median([r.cpu_ms("postgres") for r in rs]),
            }
            medians[(app, endpoint)] = m
            print(
                f"{label:28} {NAMES[app]:8} {m['rate']:7.0f} {m['p50']:7.1f} {m['p99']:7.1f} {m['errors']:7d}"
                f" {m['gunicorn']:20.2f} {m['postgres']:20.2f}"
            )
    for (app, endpoint), rs in runs.items():
        for r in rs:
            if r.errors:
                print(f"  errors {app} {endpoint}: {r.errors}" + (f"; first answer: {r.sample}" if r.sample else ""))

    def ratio(endpoint: str, key: str) -> float:
        p, b = medians[("project", endpoint)][key], medians[("bare", endpoint)][key]
        return p / b if b else float("nan")

    def cpu_ratio(endpoint: str) -> float:  # throughput ratio if CPU were the only limit: bare CPU / project CPU
        p, b = medians[("project", endpoint)], medians[("bare", endpoint)]
        return (b["gunicorn"] + b["postgres"]) / (p["gunicorn"] + p["postgres"])

    post_ratio, get_ratio, p99 = ratio("POST", "rate"), ratio("GET", "rate"), medians[("project", "POST")]["p99"]
    print(
        f"\nRatios project/{other} (medians of the rounds; "
        f"'by CPU' = {other} server CPU / project server CPU per request):"
    )
    print(f"  POST req/s {post_ratio:.2f}  by CPU {cpu_ratio('POST'):.2f}  (target >= {TARGET_POST_RATIO:.2f})")
    print(f"  GET  req/s {get_ratio:.2f}  by CPU {cpu_ratio('GET'):.2f}  (target >= {TARGET_GET_RATIO:.2f})")
    print(f"  POST p99 {p99:.0f} ms (target < {TARGET_POST_P99_MS:.0f} ms)")
    print(
        "\nCounted in-process (one request after a warm-up; BEGIN/COMMIT not counted as statements; "
        f"CPU: thread time per request over {CPU_SAMPLE}):"
    )
    print(
        f"  {'app':8} {'create: SQL':>12} {'commits':>8} {'redis':>6} {'CPU ms':>7}"
        f"   {'read: SQL':>10} {'redis':>6} {'CPU ms':>7}"
    )
    for app in APPS:
        c, r = counts[app]["create"], counts[app]["read"]
        print(
            f"  {NAMES[app]:8} {c['sql']:12d} {c['transactions']:8d} {c['redis']:6d} {c['cpu_ms']:7.2f}"
            f"   {r['sql']:10d} {r['redis']:6d} {r['cpu_ms']:7.2f}"
        )
    if args.verbose:
        for app in APPS:
            for what in ("create", "read"):
                print(f"\n  {app} {what}:")
                for number, statement in enumerate(counts[app][what]["statements"], 1):
                    print(f"  {number:2d}. {statement[:400]}")
    errors = sum(m["errors"] for m in medians.values())
    if args.against:
        print(f"\nCompared with the project at {args.against}: the targets are judged against the bare app.")
        return errors == 0
    met = post_ratio >= TARGET_POST_RATIO and get_ratio >= TARGET_GET_RATIO and p99 < TARGET_POST_P99_MS
    # The bench itself loads the machine (two servers and wrk): judge by the load before it started.
    busy = args.load_before[0] > cores * 0.5
    verdict = "MET" if met and not errors else "NOT MET"
    print(f"\nTargets {verdict}: POST >= {TARGET_POST_RATIO} and GET >= {TARGET_GET_RATIO} of bare, POST p99 < 150 ms")
    if busy:
        print(
            f"The machine was busy (load {args.load_before[0]:.1f} on {cores} cores before the bench): these figures "
            "are not the ones "
            "the targets are judged on; the CPU-per-request and in-process counts hold up better than req/s."
        )
    return errors == 0


# --- Main -----------------------------------------------------------------------------------


def against_project(rev: str, var_dir: Path, envs: dict, wsgi: dict, databases: dict, pg_url, prefix, cleanup) -> None:
    """Serve the project as committed at `rev` in the bare app's place (a detached worktree)."""
    tree = var_dir / "against"
    found = subprocess.run(  # noqa: S603
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],  # noqa: S607
        capture_output=True,
        text=True,
    )
    if found.returncode != 0:
        raise SystemExit(f"--against: no commit {rev!r} in {ROOT}")
    subprocess.run(  # noqa: S603
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), found.stdout.strip()],  # noqa: S607
        check=True,
    )
    cleanup.add(
        "remove the --against worktree",
        lambda: subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False),  # noqa: S603, S607
    )
    NAMES["bare"], CODE["bare"] = rev[:8], tree
    envs["bare"] = {
        **envs["project"],
        "PYTHONPATH": str(tree),
        "BENCH_CODE": str(tree),
        "DATABASE_URL": f"{pg_url}/{databases['bare']}",
        "CACHE_KEY_PREFIX": f"{prefix}-against",
    }
    wsgi["bare"] = "config.wsgi:application"
    cleanup.add(
        "delete cache keys (--against)", lambda: delete_cache_keys(envs["bare"]["CACHE_URL"], f"{prefix}-against")
    )


def default_targets() -> tuple[str, str, str]:
    """(PostgreSQL server URL, database name, cache URL), from the BENCH_* or the usual variables."""
    database = os.environ.get("DATABASE_URL", "")
    parsed = urllib.parse.urlsplit(database) if database.startswith("postgres") else None
    pg_url = os.environ.get("BENCH_PG_URL") or (
        f"{parsed.scheme}://{parsed.netloc}" if parsed else "postgres://postgres@127.0.0.1:5432"
    )
    db_name = os.environ.get("BENCH_DB_NAME") or (
        f"{parsed.path.lstrip('/')}_drafts_bench" if parsed and parsed.path.strip("/") else "pay_bench"
    )
    cache_url = os.environ.get("BENCH_CACHE_URL") or os.environ.get("CACHE_URL") or "redis://127.0.0.1:6379/15"
    return pg_url, db_name, cache_url


def main() -> int:
    pg_default, db_default, cache_default = default_targets()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds per app, endpoint and round (10)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (3)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent connections (32)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1, help="wrk threads (cores)")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn sync workers")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds of POSTs per app before measuring (3)")
    parser.add_argument("--db-name", default=db_default, help=f"project database, + _bare: bare app's ({db_default})")
    parser.add_argument("--pg-url", default=pg_default, help=f"PostgreSQL server ({pg_default})")
    parser.add_argument("--cache-url", default=cache_default, help=f"Redis for the project's cache ({cache_default})")
    parser.add_argument(
        "--against", metavar="REV", help="compare with the project at git revision REV, not the bare app"
    )
    parser.add_argument("--profile", type=int, default=0, metavar="N", help="also cProfile N in-process requests")
    parser.add_argument(
        "--profile-out", metavar="DIR", help="with --profile, also save the raw profiles there (create.prof, read.prof)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="list the SQL of one creation and one read")
    parser.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="N",
        help="also count the instructions of N in-process creations and reads under valgrind",
    )
    parser.add_argument("--inprocess", choices=["queries", "profile", "instructions"], help=argparse.SUPPRESS)
    parser.add_argument("--app", choices=APPS, help=argparse.SUPPRESS)
    parser.add_argument("--api-key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.load_before = os.getloadavg()
    if not (
        1 <= args.clients <= 1000 and 0 < args.seconds <= 600 and 1 <= args.workers <= 64 and 1 <= args.rounds <= 20
    ):
        parser.error("--clients 1-1000, --seconds up to 600, --workers 1-64, --rounds 1-20")

    if args.inprocess:
        inprocess(args.app, args.inprocess, args.api_key, max(args.profile, 1), args.verbose, args.profile_out)
        return 0
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed: run scripts/system-deps.sh test (Debian package wrk)")

    signal.signal(signal.SIGTERM, _on_sigterm)
    cleanup = Cleanup()
    var_dir = Path(tempfile.mkdtemp(prefix="drafts-bench-"))
    cleanup.add("remove temporary directory", lambda: shutil.rmtree(var_dir, ignore_errors=True))
    (var_dir / "static").mkdir()
    cache_prefix = f"drafts-bench-{secrets.token_hex(4)}"
    databases = {"project": args.db_name, "bare": f"{args.db_name}_bare"}
    secret = secrets.token_urlsafe(50)
    common = {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": secret,
        "FIELD_ENCRYPTION_KEY": secrets.token_urlsafe(32),
        "PYTHONPATH": str(ROOT),
    }
    # No network here: the bundled rate table prices (as `make run` allows), no live provider.
    common |= {"RATES_CRYPTO_PROVIDERS": "", "RATES_FX_PROVIDERS": "", "RATES_BUNDLED_ALLOWED": "true"}
    envs = {
        "project": {
            **common,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"{args.pg_url}/{databases['project']}",
            "CACHE_URL": args.cache_url,
            "CACHE_KEY_PREFIX": cache_prefix,
            "CELERY_BROKER_URL": args.cache_url,  # only /healthz connects to it; nothing is enqueued
            "SECURE_SSL_REDIRECT": "false",
            "ALLOWED_HOSTS": "127.0.0.1",
            "BASE_URL": "http://127.0.0.1",
            "ENABLED_NETWORKS": "Mainnet,Solana,Ethereum,Base",
            # Throttling stays on (its Redis round trips are part of every request) but cannot cap the run.
            "API_RATE_LIMIT_READS": "100000000/min",
            "API_RATE_LIMIT_WRITES": "100000000/min",
            "VAR_DIR": str(var_dir),
            "LOG_LEVEL": "WARNING",
        },
        "bare": {
            **common,
            "DJANGO_SETTINGS_MODULE": "bench.bare.settings",
            "DATABASE_URL": f"{args.pg_url}/{databases['bare']}",
        },
    }
    wsgi = {"project": "config.wsgi:application", "bare": "bench.bare.wsgi:application"}
    try:
        if args.against:
            against_project(args.against, var_dir, envs, wsgi, databases, args.pg_url, cache_prefix, cleanup)
        keys = {}
        for app in APPS:
            print(f"Database {databases[app]}: recreating and migrating ({app})")
            recreate_database(args.pg_url, databases[app])
            cleanup.add(f"drop database {databases[app]}", lambda n=databases[app]: drop_database(args.pg_url, n))
        cleanup.add("delete cache keys", lambda: delete_cache_keys(args.cache_url, cache_prefix))
        run_checked([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], envs["project"], "migrate (project)")
        if not args.against:
            run_checked([PYTHON, "-m", "django", "migrate", "--noinput", "-v", "0"], envs["bare"], "migrate (bare)")
        keys["project"] = run_checked(
            [PYTHON, "manage.py", "issue_api_key", "--email", "bench@example.com", "--scopes", SCOPES],
            envs["project"],
            "issue_api_key",
        ).strip()
        if args.against:
            tree = CODE["bare"]
            run_checked([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], envs["bare"], "migrate", cwd=tree)
            keys["bare"] = run_checked(
                [PYTHON, "manage.py", "issue_api_key", "--email", "bench@example.com", "--scopes", SCOPES],
                envs["bare"],
                f"issue_api_key ({args.against})",
                cwd=tree,
            ).strip()
        else:
            keys["bare"] = run_checked(
                [PYTHON, "-m", "django", "bare_issue_key"], envs["bare"], "bare_issue_key"
            ).strip()

        servers = {app: start_gunicorn(app, wsgi[app], envs[app], args.workers, var_dir, cleanup) for app in APPS}
        print(f"gunicorn: {args.workers} sync workers each; project on :{servers['project'][1]}, ", end="")
        print(f"{NAMES['bare']} on :{servers['bare'][1]}; PostgreSQL {args.pg_url.rsplit('@', 1)[-1]}")
        probes = {app: CpuProbe(servers[app][0].pid, args.pg_url, databases[app]) for app in APPS}

        wrk = Wrk(clients=args.clients, threads=args.threads, var_dir=var_dir)
        receivers = lua_strings(evm_addresses(RECEIVER_COUNT))
        scripts = {
            (app, "POST"): wrk.script(f"post-{app}", LUA_POST % {"receivers": receivers, "key": keys[app]})
            for app in APPS
        }
        for app in APPS:
            warm = wrk.run(port=servers[app][1], script=scripts[(app, "POST")], seconds=args.warmup)
            if warm.errors or not warm.ok:
                log = (var_dir / f"gunicorn-{app}.log").read_text()[-3000:]
                raise SystemExit(f"warm-up of {app} failed: {warm.ok} created, errors {warm.errors}\n{log}")
            table = "drafts_draft" if app == "project" or args.against else "bare_draft"
            import psycopg

            with psycopg.connect(f"{args.pg_url}/{databases[app]}", connect_timeout=5) as conn:
                ids = [str(row[0]) for row in conn.execute(f"SELECT id FROM {table} LIMIT {READ_IDS}")]  # noqa: S608
            random.shuffle(ids)
            paths = lua_strings([f"/api/v1/drafts/{i}" for i in ids])
            scripts[(app, "GET")] = wrk.script(f"get-{app}", LUA_GET % {"paths": paths, "key": keys[app]})
            wrk.run(port=servers[app][1], script=scripts[(app, "GET")], seconds=1)
            print(f"Warm-up {NAMES[app]}: {warm.ok} drafts created ({warm.rate:.0f}/s)")

        runs: dict[tuple[str, str], list[Run]] = {(app, ep): [] for app in APPS for ep in ("POST", "GET")}
        for round_number in range(1, args.rounds + 1):
            for endpoint in ("POST", "GET"):
                for app in APPS:
                    before, client_before = probes[app].snapshot(), children_cpu()
                    run = wrk.run(port=servers[app][1], script=scripts[(app, endpoint)], seconds=args.seconds)
                    run.cpu = {**CpuProbe.spent(before, probes[app].snapshot()), "wrk": children_cpu() - client_before}
                    runs[(app, endpoint)].append(run)
                    print(
                        f"  round {round_number}/{args.rounds} {endpoint:4} {NAMES[app]:7}: {run.rate:6.0f} req/s, "
                        f"p99 {run.p99_ms:6.1f} ms, wrk CPU {run.cpu_ms('wrk'):.2f} ms/req"
                        + (f", errors {run.errors}" if run.errors else "")
                    )

        counts = {}
        for app in APPS:
            child = [PYTHON, str(Path(__file__).resolve()), "--app", app, "--api-key", keys[app]]
            # In that app's tree: Celery's Django fixup puts the working directory first on sys.path.
            counted = run_checked(
                child + ["--inprocess", "queries"], envs[app], f"in-process counts ({app})", cwd=CODE[app]
            )
            counts[app] = json.loads(counted.strip().splitlines()[-1])
        clean = report(runs, counts, args, args.workers)
        if args.instructions:
            if not shutil.which("valgrind"):
                raise SystemExit("valgrind is not installed: run scripts/system-deps.sh test (Debian package valgrind)")
            counted = {app: count_instructions(app, envs[app], keys[app], args.instructions, var_dir) for app in APPS}
            print(f"\nInstructions per request, in-process under valgrind ({args.instructions} of each; thousands):")
            print(f"  {'app':8}  {'create':>8}  {'read':>8}")
            for app in APPS:
                print(f"  {NAMES[app]:8}  {counted[app]['create'] / 1000:8.0f}  {counted[app]['read'] / 1000:8.0f}")
            for what in ("create", "read"):
                ratio = counted["project"][what] / counted["bare"][what]
                print(f"  project/{NAMES['bare']} {what}: {ratio:.2f}")
        if args.profile:
            print(f"\nProfile of {args.profile} creations and reads in-process (cProfile), project:")
            child = [PYTHON, str(Path(__file__).resolve()), "--app", "project", "--api-key", keys["project"]]
            profile_args = ["--inprocess", "profile", "--profile", str(args.profile)] + (["-v"] if args.verbose else [])
            if args.profile_out:
                Path(args.profile_out).mkdir(parents=True, exist_ok=True)
                profile_args += ["--profile-out", str(Path(args.profile_out).resolve())]
            print(run_checked(child + profile_args, envs["project"], "profile"))
        return 0 if clean else 1
    except KeyboardInterrupt:
        print("\nInterrupted; cleaning up", file=sys.stderr)
        return 130
    except BaseException:
        for log in var_dir.glob("gunicorn-*.log"):
            if log.stat().st_size:
                print(f"{log.name} (last lines):\n{log.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        cleanup.run()


if __name__ == "__main__":
    sys.exit(main())
