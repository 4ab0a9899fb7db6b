"""Soak of the embedded default: `make run` (SQLite, the embedded broker) under a steady stream
of drafts, each with its webhook, while someone signs in with an emailed code every few seconds.

    .venv/bin/python bench/embedded_bench.py [--drafts 1000] [--seconds 600] [--probe-every 15]
    .venv/bin/python bench/embedded_bench.py --writers 200 --seconds 60

With --writers N, N clients instead each create drafts one after another for --seconds (as many
as the service takes: --drafts is ignored), and the figures add each webhook's delay from its
draft's creation to its arrival (p50 and max; target: p50 under 10 s) and how many
`webhooks.dispatch_due` tasks the worker ran (nudges coalesce: one waiting per endpoint).

It copies this working tree (tracked files) to a temporary directory, runs `scripts/run.sh`
there (what `make run` runs) on a free port, and:

- creates --drafts drafts through the API, evenly over --seconds, from 4 clients;
- receives their `draft.created` webhooks on a local receiver (loopback allowed for the run);
- every --probe-every seconds signs in with email and password and times how long the emailed
  code takes to appear in the service's output (the console email backend, named for the run);
- then waits up to 120 s for the webhooks still due, stops the service with SIGINT, and prints:
  drafts created, webhooks received (lost = created - received), sign-in code delay (p50 and
  max), how many times run.sh restarted a process, tracebacks in the output while it ran (and,
  apart, at the Ctrl-C stop: a request cut short by it prints one), broker files set
  aside as damaged, and tasks per second the worker ran.

Exits 0 when the run finished (the figures say whether it met the targets: nothing lost, no
restart, every code within 30 s).
"""

from __future__ import annotations

import argparse
import http.cookiejar
import http.server
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port  # noqa: E402

EMAIL = "soak@example.com"
PASSWORD = "soak-" + "p" * 20  # noqa: S105 - a throwaway account of a throwaway run
TRACEBACK = "Traceback (most recent call last)"
RECEIVER = "0x8617E340B3D01FA5F11F306F4090FD50E238070D"


def copy_tree(target: Path) -> None:
    """This working tree's tracked files (with uncommitted changes), and the shared virtualenv."""
    git = ["git", "ls-files", "-z"]
    files = subprocess.run(git, cwd=ROOT, capture_output=True, check=True).stdout  # noqa: S603, S607
    for name in files.decode().split("\0"):
        if not name or not (ROOT / name).is_file():
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, target / name)
    (target / ".venv").symlink_to(ROOT / ".venv")


class Receiver(http.server.BaseHTTPRequestHandler):
    events: set[str] = set()
    arrived: dict[str, float] = {}  # draft id -> when its first webhook came (time.monotonic)
    lock = threading.Lock()

    def do_POST(self) -> None:  # noqa: N802 - the http.server name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            self.events.add(body["data"]["draftId"])
            self.arrived.setdefault(body["data"]["draftId"], time.monotonic())
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


def call(url: str, *, key: str | None = None, body: dict | None = None) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - loopback only
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - loopback only
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return exc.code, {"error": exc.read()[:300].decode(errors="replace")}


def sign_in(base: str) -> None:
    """Email and password on the sign-in page: the service emails a code."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(f"{base}/account/sign-in", timeout=60).read()
    token = next(cookie.value for cookie in jar if cookie.name == "csrftoken")
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "email": EMAIL, "password": PASSWORD}).encode()
    opener.open(f"{base}/account/sign-in", data=form, timeout=60).read()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drafts", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--probe-every", type=float, default=15)
    parser.add_argument("--writers", type=int, default=0, help="clients creating drafts back to back")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="embedded-bench-"))
    copy_tree(work)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    log_path = work / "run.log"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")}
    env |= {
        "PORT": str(port),
        "OUTBOUND_ALLOW_LOOPBACK": "true",
        "API_RATE_LIMIT_WRITES": "100000/min",
        "AUTH_CODE_EMAILS_PER_HOUR": "100000",
        "AUTH_ATTEMPTS_PER_MINUTE": "1000",
        "AUTH_ADDRESS_ATTEMPTS_PER_MINUTE": "1000",
        "AUTH_ACCOUNT_ATTEMPTS_PER_MINUTE": "2000",
        # Named here so the codes print and their delay can be read from the output (make run
        # itself writes emails to files under var/mail).
        "EMAIL_BACKEND": "django.core.mail.backends.console.EmailBackend",
    }
    if args.writers:  # the writers stand for many clients, here all on one address: lift nginx's per-address limits
        env |= {
            "NGINX_CONNECTIONS_PER_ADDRESS": str(args.writers + 64),
            "NGINX_RATE_PER_ADDRESS": "1000000r/s",
            "NGINX_BURST_PER_ADDRESS": "1000000",
        }
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    with open(log_path, "wb") as out:
        service = subprocess.Popen(  # noqa: S603
            ["scripts/run.sh"],  # noqa: S607 - the copy's own script
            cwd=work,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 300
        while "Press Ctrl-C" not in log_path.read_text(errors="replace"):
            if service.poll() is not None or time.monotonic() > deadline:
                print(log_path.read_text(errors="replace")[-3000:], file=sys.stderr)
                return 1
            time.sleep(0.5)
        manage = [".venv/bin/python", "manage.py"]
        key = subprocess.run(  # noqa: S603
            [*manage, "issue_api_key", "--email", EMAIL, "--scopes", "drafts:read,drafts:write,webhooks:manage"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        subprocess.run(  # noqa: S603
            [*manage, "shell", "-c", "from django.contrib.auth import get_user_model as m; "
             f"u = m().objects.get(email={EMAIL!r}); u.set_password({PASSWORD!r}); u.save()"],
            cwd=work,
            env=env,
            check=True,
        )  # fmt: skip
        hook = f"http://127.0.0.1:{receiver.server_address[1]}/hook"
        status, answer = call(f"{base}/api/v1/webhooks", key=key, body={"url": hook, "events": ["draft.created"]})
        assert status == 200, answer

        delays: list[float] = []
        stop = threading.Event()

        def codes_sent() -> int:
            # The console backend prints each email's headers: Subject, From, To, in this order.
            return len(re.findall(rf"Subject: Your sign-in code: .*\nFrom: .*\nTo: {re.escape(EMAIL)}\n", log_text()))

        def log_text() -> str:
            return log_path.read_text(errors="replace")

        def probe() -> None:
            while not stop.is_set():
                before, started = codes_sent(), time.monotonic()
                sign_in(base)
                while codes_sent() == before and time.monotonic() - started < 600 and not stop.is_set():
                    time.sleep(0.2)
                if codes_sent() > before:
                    delays.append(time.monotonic() - started)
                stop.wait(max(0.0, args.probe_every - (time.monotonic() - started)))

        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        created: list[str] = []
        refused: list[str] = []
        created_at: dict[str, float] = {}
        began = time.monotonic()

        def create(i: int) -> None:
            if not args.writers:
                time.sleep(max(0.0, began + i * args.seconds / args.drafts - time.monotonic()))
            status, body = call(
                f"{base}/api/v1/drafts",
                key=key,
                body={
                    "network": "Base",
                    "currency": "USDC",
                    "fiatCurrency": "EUR",
                    "fiatAmount": 100 + i,
                    "receiverAddress": RECEIVER,
                },
            )
            if status == 201:
                created_at[body["id"]] = time.monotonic()
                created.append(body["id"])
            else:
                refused.append(f"{status} {body}")

        def writer(first: int) -> None:
            n = first
            while time.monotonic() - began < args.seconds:
                create(n)
                n += args.writers  # distinct amounts across writers

        if args.writers:
            with ThreadPoolExecutor(args.writers) as pool:
                list(pool.map(writer, range(args.writers)))
        else:
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(create, range(args.drafts)))
        load_seconds = time.monotonic() - began
        deadline = time.monotonic() + 120
        while len(Receiver.events & set(created)) < len(created) and time.monotonic() < deadline:
            time.sleep(0.5)
        drained_seconds = time.monotonic() - began
        stop.set()
        prober.join(timeout=120)
    finally:
        stopped_at = log_path.stat().st_size if log_path.exists() else 0  # what the run wrote before the stop
        if service.poll() is None:
            os.killpg(service.pid, signal.SIGINT)
        service.wait(timeout=90)
        receiver.shutdown()
    raw = log_path.read_bytes()
    output = raw.decode(errors="replace")
    received = len(Receiver.events & set(created))
    damaged = work / "var" / "broker" / "damaged"
    tasks = len(re.findall(r"Task \S+\[[0-9a-f-]+\] succeeded", output))
    if args.writers:
        print(
            f"embedded default soak: {args.writers} writers for {args.seconds:.0f} s,"
            f" a sign-in every {args.probe_every:.0f} s"
        )
    else:
        print(
            f"embedded default soak: {args.drafts} drafts over {args.seconds:.0f} s,"
            f" a sign-in every {args.probe_every:.0f} s"
        )
    print(f"drafts created:        {len(created)} (refused {len(refused)}) in {load_seconds:.1f} s")
    print(f"webhooks received:     {received} (lost {len(created) - received}) after {drained_seconds:.1f} s")
    if delays:
        p50, worst = statistics.median(delays), max(delays)
        print(f"sign-in code delay:    p50 {p50:.1f} s  max {worst:.1f} s  ({len(delays)} codes)")
    else:
        print("sign-in code delay:    no code arrived")
    print(f"process restarts:      {output.count('run.sh: the ')}")
    running, stopping = raw[:stopped_at].decode(errors="replace"), raw[stopped_at:].decode(errors="replace")
    print(f"tracebacks in output:  {running.count(TRACEBACK)}  (at the Ctrl-C stop: {stopping.count(TRACEBACK)})")
    print(f"damaged broker files:  {len(list(damaged.iterdir())) if damaged.exists() else 0}")
    print(f"worker tasks:          {tasks} ({tasks / drained_seconds:.2f}/s)")
    if args.writers:
        waits = sorted(Receiver.arrived[d] - created_at[d] for d in created if d in Receiver.arrived)
        if waits:
            print(f"webhook delay:         p50 {statistics.median(waits):.1f} s  max {waits[-1]:.1f} s")
        else:
            print("webhook delay:         no webhook arrived")
        nudges = len(re.findall(r"Task webhooks\.dispatch_due\[[0-9a-f-]+\] succeeded", output))
        print(f"dispatch tasks run:    {nudges}")
    for line in refused[:5]:
        print(f"  refused: {line}")
    for line in re.findall(r"^.*run\.sh: the .*$", output, re.M)[:5]:
        print(f"  {line}")
    first = running.find(TRACEBACK)
    if first >= 0:  # the first one while running, to tell what went wrong
        print("first traceback:")
        print("\n".join("  " + line for line in running[first:].splitlines()[:40]))
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
