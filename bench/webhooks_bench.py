"""Webhook delivery throughput and isolation, against real Celery workers and local receivers.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/pay_webhooks CELERY_BROKER_URL=redis://127.0.0.1:6379/6
    .venv/bin/python bench/webhooks_bench.py [--events 120] [--rounds 3]

Prints deliveries per second to local receivers with 1 and 4 worker processes, then one
endpoint's rate alone and next to an endpoint that never answers (4 worker processes).
Each run is bounded (RUN_TIMEOUT seconds). It works in its own throwaway database (bench_webhooks_
and the name in DATABASE_URL) and under its own broker key prefix, so tests or other work sharing
the PostgreSQL server and the Redis database are not disturbed.
The rate is measured from the database: delivered deliveries / (last delivered_at - first
attempt start), so worker start-up is not counted.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files
os.environ["OUTBOUND_ALLOW_LOOPBACK"] = "true"
os.environ.setdefault("BENCH_BROKER_PREFIX", f"webhooks-bench-{uuid.uuid4().hex[:8]}:")

import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.db.models import Max, Min  # noqa: E402

from accounts.models import User  # noqa: E402
from bench.isolated_celery import app as celery_app  # noqa: E402
from webhooks import services  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, EventType  # noqa: E402

RUN_TIMEOUT = 90.0
stop_serving = threading.Event()


class FastHandler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


class NeverAnswersHandler(FastHandler):
    def do_POST(self) -> None:
        stop_serving.wait(120)


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.request_queue_size = 128
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_worker(concurrency: int) -> tuple[subprocess.Popen, str]:
    name = f"bench-{uuid.uuid4().hex[:6]}@%h"
    worker = subprocess.Popen(  # noqa: S603 (our own fixed command line)
        [str(ROOT / ".venv" / "bin" / "celery"), "-A", "bench.isolated_celery", "worker", "--pool=prefork"]
        + [f"--concurrency={concurrency}", "--loglevel=WARNING", "--without-gossip", "--without-mingle", "-n", name],
        cwd=ROOT,
        env={**os.environ, "DATABASE_URL": database_url(), "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if celery_app.control.ping(timeout=0.5):
            return worker, name
    stop_worker(worker)
    raise SystemExit("The Celery worker did not start; is CELERY_BROKER_URL reachable?")


def database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def stop_worker(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(10)


def run(*, concurrency: int, healthy_urls: list[str], dead_url: str | None, events: int) -> float:
    """Deliver `events` events to each endpoint; return the healthy endpoints' deliveries/s."""
    celery_app.control.purge()
    user = User.objects.create_user(f"bench-{uuid.uuid4().hex[:8]}@example.com", uuid.uuid4().hex)
    worker = None
    try:
        healthy = [services.webhook_create(user=user, url=url, events=None) for url in healthy_urls]
        if dead_url:
            services.webhook_create(user=user, url=dead_url, events=None)
        # The outbox first (its dispatch task waits in Redis), then the workers: the rate is
        # the workers' alone, not how fast this script records events.
        for start in range(0, events, 50):
            with transaction.atomic():
                for n in range(start, min(start + 50, events)):
                    services.event_record(user=user, type=EventType.DRAFT_SEEN, data={"draftId": str(n)})
        worker, _ = start_worker(concurrency)
        wanted = events * len(healthy)
        done = Delivery.objects.filter(webhook__in=healthy, status=DeliveryStatus.SUCCEEDED)
        deadline = time.monotonic() + RUN_TIMEOUT
        while done.count() < wanted and time.monotonic() < deadline:
            celery_app.send_task("webhooks.dispatch_due")  # the beat tick, every second
            time.sleep(1.0)
        delivered = done.count()
        span = DeliveryAttempt.objects.filter(delivery__webhook__in=healthy).aggregate(
            first=Min("started_at"), last=Max("finished_at")
        )
        seconds = max((span["last"] - span["first"]).total_seconds(), 1e-3) if delivered else 1.0
        if delivered < wanted:
            print(f"  (only {delivered} of {wanted} delivered within {RUN_TIMEOUT:.0f} s)")
        return delivered / seconds
    finally:
        if worker is not None:
            stop_worker(worker)
        user.delete()  # cascades to webhooks, events, deliveries, attempts


def _rates(rates: list[float]) -> str:
    return ", ".join(f"{rate:.1f}" for rate in rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=120, help="events per run (each goes to every endpoint)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the isolation runs")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("Set DATABASE_URL to a PostgreSQL server (the bench creates its own database there).")
    old_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_webhooks_{old_name}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        measure(args)
    finally:
        celery_app.control.purge()
        connection.creation.destroy_test_db(old_name, verbosity=0)


def measure(args) -> None:
    fast, dead = serve(FastHandler), serve(NeverAnswersHandler)
    base = f"http://127.0.0.1:{fast.server_address[1]}"
    endpoints = [f"{base}/endpoint-{n}" for n in range(4)]
    dead_url = f"http://127.0.0.1:{dead.server_address[1]}/never-answers"
    try:
        print(f"Webhook deliveries to a local receiver ({args.events} events per endpoint)")
        for concurrency in (1, 4):
            rate = run(concurrency=concurrency, healthy_urls=endpoints, dead_url=None, events=args.events)
            print(f"  {concurrency} worker process(es), 4 endpoints:     {rate:8.1f} deliveries/s")
        print(f"Isolation (4 worker processes; {args.rounds} alternating rounds, median, to damp a busy machine)")
        alone, beside = [], []
        for _ in range(args.rounds):
            alone.append(run(concurrency=4, healthy_urls=endpoints[:1], dead_url=None, events=args.events))
            beside.append(run(concurrency=4, healthy_urls=endpoints[:1], dead_url=dead_url, events=args.events))
        print(f"  one endpoint alone:                           {statistics.median(alone):8.1f} deliveries/s")
        print(f"  same endpoint next to one that never answers: {statistics.median(beside):8.1f} deliveries/s")
        print(f"  (rounds: alone {_rates(alone)}; beside {_rates(beside)})")
    finally:
        stop_serving.set()
        fast.shutdown()
        dead.shutdown()


if __name__ == "__main__":
    main()
