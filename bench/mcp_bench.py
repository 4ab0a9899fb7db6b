"""MCP tool-call throughput next to the REST figures, and what the dispatcher in front costs.

Run from the repository root:

    .venv/bin/python bench/mcp_bench.py [--seconds 10] [--connections 32] [--workers N] [--mcp-workers N]

It creates its own PostgreSQL database (dropped and recreated each run), migrates it,
issues an API key, creates one draft, and starts the `make run` layout with DEBUG off:
gunicorn sync workers (REST), uvicorn (MCP) and nginx in front of both, from the same
template as make run (deploy/nginx.conf.template). wrk (a C load generator, installed
by scripts/system-deps.sh test) then measures, --seconds each:

- REST GET /api/v1/fees/schedule straight to gunicorn (no dispatcher: the "before")
- REST GET /api/v1/fees/schedule through nginx           (the "after")
- MCP  tools/call get_fee_schedule through nginx
- REST GET /api/v1/drafts/{id} through nginx
- MCP  tools/call get_draft through nginx

MCP calls are stateless JSON-RPC POSTs (no session), as any number of MCP processes
serve them. Every process is stopped and the database dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from drafts_bench import (  # noqa: E402 - shared process and database helpers
    PYTHON,
    ROOT,
    VENV_BIN,
    Cleanup,
    _on_sigterm,
    children,
    cpu_seconds,
    delete_cache_keys,
    drop_database,
    free_port,
    recreate_database,
    run_checked,
    stop_process,
)

SCOPES = "drafts:read,drafts:write,fees:read"
DRAFT = {
    "network": "Base",
    "currency": "USDC",
    "receiverAddress": "0x8617E340B3D01FA5F11F306F4090FD50E238070D",
    "fiatCurrency": "EUR",
    "fiatAmount": 25,
}


def wait_for(url: str, *, headers: dict[str, str] | None = None, body: bytes | None = None, limit: float = 60) -> bytes:
    deadline = time.monotonic() + limit
    while True:
        try:
            request = urllib.request.Request(url, data=body, headers=headers or {})  # noqa: S310 - loopback only
            with urllib.request.urlopen(request, timeout=5) as response:  # noqa: S310 - loopback only
                return response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def mcp_call(name: str, arguments: dict, key: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    ).encode()
    headers = {
        "Authorization": f"Bearer {key}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    return body, headers


def wrk(url: str, *, seconds: float, connections: int, headers: dict[str, str], body: bytes | None, tmp: Path) -> dict:
    script = tmp / "request.lua"
    lines = [f"wrk.method = {json.dumps('POST' if body else 'GET')}"]
    if body:
        lines.append(f"wrk.body = {json.dumps(body.decode())}")
    lines += [f"wrk.headers[{json.dumps(k)}] = {json.dumps(v)}" for k, v in headers.items()]
    script.write_text("\n".join(lines) + "\n")
    threads = max(1, min(2, connections))
    command = [shutil.which("wrk") or "wrk", "--latency", f"-t{threads}", f"-c{connections}"]
    out = subprocess.run(  # noqa: S603
        command + [f"-d{max(1, round(seconds))}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=True,
    ).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: (.*)", out)

    def percentile(p: str) -> float:
        value, unit = re.search(rf"\s{p}%\s+([\d.]+)(us|ms|s)", out).groups()
        return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]

    return {
        "rate": rate,
        "p50": percentile("50"),
        "p99": percentile("99"),
        "non2xx": int(bad.group(1)) if bad else 0,
        "socket_errors": errors.group(1).strip() if errors else "",
    }


def tree_cpu(pid: int) -> float:
    """CPU seconds of a server process and its workers (exited workers included)."""
    return cpu_seconds(pid, reaped_children=True) + sum(cpu_seconds(child) for child in children(pid))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="load per measurement (default 10)")
    parser.add_argument("--connections", type=int, default=32, help="concurrent connections (default 32)")
    parser.add_argument("--workers", type=int, default=2 * (os.cpu_count() or 1) + 1, help="gunicorn sync workers")
    parser.add_argument("--mcp-workers", type=int, default=os.cpu_count() or 1, help="uvicorn worker processes")
    parser.add_argument("--db-name", default="pay_bench_mcp")
    parser.add_argument("--pg-url", default=os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432"))
    parser.add_argument("--cache-url", default=os.environ.get("BENCH_CACHE_URL", "redis://127.0.0.1:6379/15"))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is missing: run scripts/system-deps.sh test (make test and make bench do)")
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"

    signal.signal(signal.SIGTERM, _on_sigterm)
    cleanup = Cleanup()
    tmp = Path(tempfile.mkdtemp(prefix="mcp-bench-"))
    cleanup.add("remove temporary directory", lambda: shutil.rmtree(tmp, ignore_errors=True))
    (tmp / "nginx").mkdir()
    web_port, mcp_port, port = free_port(), free_port(), free_port()
    cache_prefix = f"mcp-bench-{secrets.token_hex(4)}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"{args.pg_url}/{args.db_name}",
        "CACHE_URL": args.cache_url,
        "CACHE_KEY_PREFIX": cache_prefix,  # this run's keys only: the Redis database may be shared
        "CELERY_BROKER_URL": args.cache_url,
        # No network here: the bundled rate table prices (as `make run` allows), no live provider.
        "RATES_CRYPTO_PROVIDERS": "",
        "RATES_FX_PROVIDERS": "",
        "RATES_BUNDLED_ALLOWED": "true",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "FIELD_ENCRYPTION_KEY": secrets.token_urlsafe(32),
        "SECURE_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1",
        "BASE_URL": f"http://127.0.0.1:{port}",
        "ENABLED_NETWORKS": "Mainnet,Solana,Ethereum,Base",
        "API_RATE_LIMIT_READS": "1000000/s",
        "API_RATE_LIMIT_WRITES": "1000000/s",
        "NUM_PROXIES": "1",
        "VAR_DIR": str(tmp),
        "LOG_LEVEL": "WARNING",
    }
    try:
        print(f"Database {args.db_name}: recreating and migrating")
        recreate_database(args.pg_url, args.db_name)
        cleanup.add(f"drop database {args.db_name}", lambda: drop_database(args.pg_url, args.db_name))
        cleanup.add("delete cache keys", lambda: delete_cache_keys(args.cache_url, cache_prefix))
        run_checked([PYTHON, "manage.py", "migrate", "--noinput", "-v", "0"], env, "migrate")
        key = run_checked(
            [PYTHON, "manage.py", "issue_api_key", "--email", "bench@example.com", "--scopes", SCOPES],
            env,
            "issue_api_key",
        ).strip()

        def start(name: str, command: list[str]) -> subprocess.Popen:
            log = open(tmp / f"{name}.log", "w")  # noqa: SIM115 - lives as long as the process
            process = subprocess.Popen(  # noqa: S603
                command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            cleanup.add(f"stop {name}", lambda: stop_process(process))
            return process

        servers: dict[str, subprocess.Popen] = {}
        servers["gunicorn"] = start(
            "gunicorn",
            [str(VENV_BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{web_port}"]
            + ["--workers", str(args.workers), "--backlog", "2048", "--log-level", "warning"],
        )
        servers["uvicorn"] = start(
            "uvicorn",
            [str(VENV_BIN / "uvicorn"), "mcp_server.asgi:application", "--host", "127.0.0.1", "--port", str(mcp_port)]
            + ["--workers", str(args.mcp_workers), "--log-level", "warning", "--no-access-log", "--backlog", "2048"]
            + ["--no-proxy-headers"],
        )
        conf = subprocess.run(  # noqa: S603
            [PYTHON, "scripts/render_template.py", "--defaults", "deploy/nginx.env", "deploy/nginx.conf.template"],
            env=env
            | {
                # wrk is one client address: the per-address limits would measure themselves.
                "NGINX_CONNECTIONS_PER_ADDRESS": str(args.connections + 64),
                "NGINX_RATE_PER_ADDRESS": "1000000r/s",
                "NGINX_BURST_PER_ADDRESS": "1000000",
                "NGINX_PREFIX": str(tmp / "nginx"),
                "NGINX_WORKERS": "1",
                "LISTEN": f"127.0.0.1:{port}",
                "NGINX_TLS": "",
                "NGINX_PROBLEMS": str(ROOT / "deploy" / "problems"),
                "WEB_UPSTREAM": f"127.0.0.1:{web_port}",
                "MCP_UPSTREAM": f"127.0.0.1:{mcp_port}",
            },
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (tmp / "nginx" / "nginx.conf").write_text(conf)
        servers["nginx"] = start(
            "nginx",
            [nginx, "-e", "stderr", "-p", str(tmp / "nginx"), "-c", str(tmp / "nginx" / "nginx.conf")]
            + ["-g", "daemon off;"],
        )

        auth = {"Authorization": f"Bearer {key}"}
        direct, front = f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{port}"
        wait_for(f"{direct}/healthz")
        draft = json.loads(
            wait_for(
                f"{front}/api/v1/drafts",
                headers=auth | {"Content-Type": "application/json"},
                body=json.dumps(DRAFT).encode(),
            )
        )
        schedule_call = mcp_call("get_fee_schedule", {}, key)
        draft_call = mcp_call("get_draft", {"id": draft["id"]}, key)
        for body, headers in (schedule_call, draft_call):  # a tool error is a 200 too: check the answer first
            answer = json.loads(wait_for(f"{front}/mcp", headers=headers, body=body))
            if answer.get("result", {}).get("isError") or "error" in answer:
                raise SystemExit(f"MCP call failed: {answer}")
        print(
            f"gunicorn {args.workers} sync workers, uvicorn {args.mcp_workers} worker(s), nginx 1 worker; "
            f"wrk {args.connections} connections, {args.seconds:g} s each"
        )

        runs = [
            ("REST GET /api/v1/fees/schedule, direct", f"{direct}/api/v1/fees/schedule", auth, None),
            ("REST GET /api/v1/fees/schedule, via nginx", f"{front}/api/v1/fees/schedule", auth, None),
            ("MCP  get_fee_schedule, via nginx", f"{front}/mcp", schedule_call[1], schedule_call[0]),
            ("REST GET /api/v1/drafts/{id}, via nginx", f"{front}/api/v1/drafts/{draft['id']}", auth, None),
            ("MCP  get_draft, via nginx", f"{front}/mcp", draft_call[1], draft_call[0]),
        ]
        print(
            f"\n{'Measurement':<44} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}"
            f"   CPU ms/request: {'gunicorn':>8} {'uvicorn':>8} {'nginx':>6}"
        )
        results = {}
        for name, url, headers, body in runs:
            before = {part: tree_cpu(process.pid) for part, process in servers.items()}
            result = wrk(url, seconds=args.seconds, connections=args.connections, headers=headers, body=body, tmp=tmp)
            done = max(1.0, result["rate"] * max(1, round(args.seconds)))
            cpu = {part: (tree_cpu(process.pid) - before[part]) * 1000 / done for part, process in servers.items()}
            results[name] = result | {"cpu": cpu}
            extra = f"  socket errors: {result['socket_errors']}" if result["socket_errors"] else ""
            print(
                f"{name:<44} {result['rate']:>8.0f} {result['p50']:>8.1f} {result['p99']:>8.1f} "
                f"{result['non2xx']:>8}                   {cpu['gunicorn']:>8.2f} {cpu['uvicorn']:>8.2f} "
                f"{cpu['nginx']:>6.2f}{extra}"
            )
        before = results[runs[0][0]]["rate"]
        after = results[runs[1][0]]["rate"]
        direct_cpu = sum(results[runs[0][0]]["cpu"].values())
        front_cpu = sum(results[runs[1][0]]["cpu"].values())
        ratio = f"{after / before:.2f} by req/s, {front_cpu / direct_cpu:.2f} by CPU"
        print(f"\nREST through the dispatcher / direct: {ratio}")
        for mcp_run, rest_run in ((runs[2][0], runs[1][0]), (runs[4][0], runs[3][0])):
            by_rate = results[mcp_run]["rate"] / results[rest_run]["rate"]
            by_cpu = sum(results[rest_run]["cpu"].values()) / sum(results[mcp_run]["cpu"].values())
            print(f"{mcp_run.split(',')[0]} / {rest_run.split(',')[0]}: {by_rate:.2f} by req/s, {by_cpu:.2f} by CPU")
        failed = sum(r["non2xx"] for r in results.values())
        return 1 if failed else 0
    except KeyboardInterrupt:
        print("\nInterrupted; cleaning up.", file=sys.stderr)
        return 130
    finally:
        cleanup.run()


if __name__ == "__main__":
    raise SystemExit(main())
