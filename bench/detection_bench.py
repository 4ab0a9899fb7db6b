"""Detection latency: from the block that pays a draft to what the merchant and the payer see.

Starts what `make run` starts that takes part (a Celery worker with 2 processes, beat, the
chain listener, gunicorn for the REST API and uvicorn for the pay page's long poll) with the
default settings, against anvil as Ethereum (a test USDC), in a throwaway database and under
its own broker key prefix. Then, N times, a payer picks USDC on a pay link and pays it in a
block of its own, and the bench measures from the moment the block exists:

- Seen in the API: GET /api/v1/drafts/{id}/status (asked every 50 ms) says Seen;
- draft.seen delivered: the merchant's webhook receiver (local) gets the event;
- pay page: the page's long poll (/pay/{token}/live) answers with the draft Seen.

Then blocks are mined one a second until every draft has its 12 confirmations, and it
measures from the block that reaches a draft's confirmations to Confirmed in the API.

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... .venv/bin/python bench/detection_bench.py [-n 10]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files
os.environ["OUTBOUND_ALLOW_LOOPBACK"] = "true"  # the merchant's receiver is local
os.environ["ENABLED_NETWORKS"] = "Ethereum"
os.environ.setdefault("BENCH_BROKER_PREFIX", f"detection-bench-{uuid.uuid4().hex[:8]}:")

from bench.common import free_port  # noqa: E402

ANVIL = ROOT / "node_modules" / "@foundry-rs" / "anvil-linux-amd64" / "bin" / "anvil"
TOKEN = ROOT / "chainwatch" / "test_token.json"  # the test ERC-20 (chainwatch/devchain.py)
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python")
STEP_TIMEOUT = 20.0


def wait_until(condition, timeout: float, what: str, step: float = 0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(step)
    raise SystemExit(f"timed out waiting for {what}")


def start_anvil() -> tuple[subprocess.Popen, str]:
    port = free_port()
    process = subprocess.Popen(  # noqa: S603 - our own fixed command line
        [str(ANVIL), "--host", "127.0.0.1", "--port", str(port), "--chain-id", "1", "--silent"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return process, f"http://127.0.0.1:{port}"


class Receiver(ThreadingHTTPServer):
    """The merchant's webhook endpoint: when each event arrived, by type and draft id."""

    def __init__(self) -> None:
        self.arrived: dict[tuple[str, str], float] = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                now = time.monotonic()
                try:
                    event = json.loads(body)
                    key = (self.headers.get("X-Service-Event", ""), str((event.get("data") or {}).get("draftId")))
                    outer.arrived.setdefault(key, now)
                except ValueError:
                    pass
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hook"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--payments", type=int, default=10)
    args = parser.parse_args()
    if not ANVIL.exists():
        raise SystemExit("anvil is missing: run `npm ci` (make test does)")

    anvil, rpc_url = start_anvil()
    try:
        from web3 import Web3

        w3 = wait_until(lambda: (w := Web3(Web3.HTTPProvider(rpc_url))).is_connected() and w, 20, "anvil")
        payer = w3.eth.accounts[0]
        spec = json.loads(TOKEN.read_text())
        factory = w3.eth.contract(abi=spec["abi"], bytecode=spec["bytecode"])
        receipt = w3.eth.wait_for_transaction_receipt(
            factory.constructor("Test USDC", "USDC", 6).transact({"from": payer})
        )
        token = w3.eth.contract(address=receipt["contractAddress"], abi=spec["abi"])
        token.functions.mint(payer, 10**18).transact({"from": payer})
        os.environ["RPC_URL_ETHEREUM"] = rpc_url
        os.environ["TOKEN_ADDRESSES"] = json.dumps({"USDC": {"Ethereum": token.address}})
        run(args, w3, token, payer)
    finally:
        anvil.terminate()
        anvil.wait(10)


def run(args, w3, token, payer) -> None:
    import logging

    import django

    django.setup()

    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.db import connection

    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_detection_{old_name}"[:60]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    processes: list[subprocess.Popen] = []
    try:
        measure(args, w3, token, payer, processes)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
        from bench.isolated_celery import app as celery_app

        celery_app.control.purge()
        connection.close()
        connection.creation.destroy_test_db(old_name, verbosity=0)


def start_stack(processes: list[subprocess.Popen], var_dir: str) -> tuple[str, str]:
    """The processes of `make run` that take part, on this database and broker prefix."""
    from django.db import connection

    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "VAR_DIR": var_dir,
        "PYTHONPATH": str(ROOT),
    }
    web_port, live_port = free_port(), free_port()
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env, "cwd": str(ROOT)}
    commands = [
        [str(BIN / "celery"), "-A", "bench.isolated_celery", "worker", "--concurrency", "2", "-Q", "celery,email"],
        [str(BIN / "celery"), "-A", "bench.isolated_celery", "beat", "-s", f"{var_dir}/celerybeat-schedule"],
        # manage.py chainwatch_listen, its tasks sent under this bench's broker prefix
        [
            PYTHON,
            "-c",
            "import django; django.setup(); import bench.isolated_celery; "
            "from django.core.management import call_command; call_command('chainwatch_listen')",
        ],
        [str(BIN / "gunicorn"), "config.wsgi:application", "--bind", f"127.0.0.1:{web_port}", "--workers", "2"],
        [str(BIN / "uvicorn"), "mcp_server.asgi:application", "--host", "127.0.0.1", "--port", str(live_port)],
    ]
    for command in commands:
        processes.append(subprocess.Popen(command, **quiet))  # noqa: S603 - our own fixed command lines
    return f"http://127.0.0.1:{web_port}", f"http://127.0.0.1:{live_port}"


def measure(args, w3, token, payer, processes) -> None:
    import httpx

    from accounts.services import api_key_create, user_get_or_create
    from paylinks.services import checkout_select, payment_request_create
    from webhooks.endpoints import webhook_create

    merchant = user_get_or_create(email="merchant@example.com")
    key = api_key_create(user=merchant, name="bench", scopes=["drafts:read"]).key
    receiver = Receiver()
    webhook_create(user=merchant, url=receiver.url, events=None)

    var_dir = tempfile.mkdtemp(prefix="detection-bench-")
    web, live = start_stack(processes, var_dir)
    api = httpx.Client(base_url=web, headers={"Authorization": f"Bearer {key}"}, timeout=10)
    wait_until(lambda: _up(api, "/livez"), 60, "gunicorn")
    wait_until(lambda: _up(httpx.Client(base_url=live), "/healthz"), 60, "uvicorn")
    from chainwatch.models import Cursor

    # The listener's first pass has run: the watcher is on the chain's head.
    wait_until(
        lambda: Cursor.objects.filter(network="Ethereum", family="evm", height__isnull=False).exists(),
        60,
        "the watcher",
    )
    time.sleep(2)  # the worker and beat settle

    seen_api, seen_hook, seen_page, paid_blocks, drafts = [], [], [], {}, []
    for n in range(args.payments):
        link = payment_request_create(
            user=merchant,
            fiat_currency="USD",
            fiat_amount=Decimal("25"),
            options=[{"currency": "USDC", "network": "Ethereum", "receiverAddress": w3.eth.account.create().address}],
            order_id=f"bench-{n}",
        )
        draft = checkout_select(token=link.token, currency="USDC", network="Ethereum")
        drafts.append(draft)
        page: dict[str, float] = {}
        watcher = threading.Thread(target=_long_poll, args=(live, link.token, page), daemon=True)
        watcher.start()
        time.sleep(0.3)  # the page is waiting, as a payer's would be

        tx = token.functions.transfer(draft.receiver_address, draft.amount_base_units).transact({"from": payer})
        mined = w3.eth.wait_for_transaction_receipt(tx, poll_latency=0.005)
        block_at = time.monotonic()
        paid_blocks[draft.id] = mined["blockNumber"]

        api_at = wait_until(
            lambda d=draft: (
                api.get(f"/api/v1/drafts/{d.id}/status").json().get("status") == "Seen" and time.monotonic()
            ),
            STEP_TIMEOUT,
            "Seen in the API",
            step=0.05,
        )
        hook_at = wait_until(
            lambda d=draft: receiver.arrived.get(("draft.seen", str(d.id))), STEP_TIMEOUT, "draft.seen at the receiver"
        )
        watcher.join(STEP_TIMEOUT)
        if "seen" not in page:
            raise SystemExit("the pay page's long poll never answered Seen")
        seen_api.append(api_at - block_at)
        seen_hook.append(hook_at - block_at)
        seen_page.append(page["seen"] - block_at)
        time.sleep(1.0)

    # Confirmations: a block a second; a draft is Confirmed at its paying block + 11.
    required = drafts[0].required_confirmations
    last_needed = max(paid_blocks.values()) + required - 1
    block_times: dict[int, float] = {}
    confirmed_at: dict[str, float] = {}
    stop = threading.Event()
    poller = threading.Thread(target=_confirmations, args=(api, confirmed_at, len(drafts), stop), daemon=True)
    poller.start()
    while w3.eth.block_number < last_needed:
        w3.provider.make_request("anvil_mine", ["0x1"])
        block_times[w3.eth.block_number] = time.monotonic()
        time.sleep(1.0)
    poller.join(STEP_TIMEOUT)
    stop.set()
    confirmed = []
    for draft in drafts:
        reached = block_times.get(paid_blocks[draft.id] + required - 1)
        if str(draft.id) not in confirmed_at or reached is None:
            raise SystemExit(f"draft {draft.id} was not Confirmed")
        confirmed.append(confirmed_at[str(draft.id)] - reached)

    print(f"Detection latency, {len(drafts)} USDC payments on anvil (Ethereum), make run's default settings")
    print(f"{'from the block to':<44}{'median':>9}{'max':>9}")
    for label, values in (
        ("Seen in the API", seen_api),
        ("draft.seen at the merchant's receiver", seen_hook),
        ("the pay page's update (long poll)", seen_page),
        (f"Confirmed in the API ({required} confirmations)", confirmed),
    ):
        print(f"{label:<44}{statistics.median(values):>8.2f}s{max(values):>8.2f}s")


def _up(client, path: str) -> bool:
    try:
        return client.get(path).status_code == 200
    except Exception:  # noqa: BLE001 - not up yet
        return False


def _long_poll(live: str, token: str, page: dict[str, float]) -> None:
    """What pay.js does: wait on /pay/{token}/live until the draft is no longer Pending."""
    import httpx

    since = "Open:Pending:0"  # paylinks.live.state_key of a pending draft
    with httpx.Client(base_url=live, timeout=40) as client:
        for _ in range(4):
            body = client.get(f"/pay/{token}/live", params={"since": since}).json()
            if body.get("draftStatus") == "Seen":
                page["seen"] = time.monotonic()
                return


def _confirmations(api, confirmed_at: dict[str, float], count: int, stop: threading.Event) -> None:
    while len(confirmed_at) < count and not stop.is_set():
        page = api.get("/api/v1/drafts", params={"status": "Confirmed", "pageSize": 100}).json()
        now = time.monotonic()
        for item in page.get("results") or page.get("items") or []:
            confirmed_at.setdefault(str(item["id"]), now)
        time.sleep(0.05)


if __name__ == "__main__":
    main()
