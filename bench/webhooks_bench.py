"""Webhook delivery throughput and isolation, against real Celery workers and local receivers.

    export DATABASE_URL=postgres://postgres@127.0.0.1:5432/pay_webhooks CELERY_BROKER_URL=redis://127.0.0.1:6379/6
    .venv/bin/python bench/webhooks_bench.py [--events 120] [--rounds 3] [--slow-endpoints 100]
        [--slow-seconds 10] [--fair-seconds 30] [--fair-rate 10] [--fairness-only]

Prints deliveries per second to local receivers with 1 and 4 worker processes, with the CPU
each delivery cost the workers and their PostgreSQL backends, then one endpoint's rate alone
and next to an endpoint that never answers (4 worker processes), then fairness: the delay
(p50, p99) of a healthy endpoint's deliveries, its events recorded at a steady rate, alone
and while 100 other accounts' endpoints answering after 10 s each always have one owed. First it counts, in-process,
the SQL statements and commits one delivery costs in a worker's lane, and what one outbound
POST costs when the receiver closes each connection or keeps it open, over HTTP and HTTPS.
Each run is bounded (RUN_TIMEOUT seconds). It works in its own throwaway database (bench_webhooks_
and the name in DATABASE_URL) and under its own broker key prefix, so tests or other work sharing
the PostgreSQL server and the Redis database are not disturbed.
The rate is measured from the database: delivered deliveries / (last delivered_at - first
attempt start), so worker start-up is not counted; the CPU figures come from /proc (Linux,
PostgreSQL on this machine): the worker's pool processes and their database backends from
their birth, its main process from the moment it answers a ping. The local
receivers speak HTTP/1.1 and keep connections open, as most servers do.
"""

from __future__ import annotations

import argparse
import datetime as dt
import ipaddress
import json
import multiprocessing
import os
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files
os.environ["OUTBOUND_ALLOW_LOOPBACK"] = "true"
os.environ.setdefault("BENCH_BROKER_PREFIX", f"webhooks-bench-{uuid.uuid4().hex[:8]}:")

import django  # noqa: E402

django.setup()

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.db.models import Max, Min  # noqa: E402
from django.test.utils import CaptureQueriesContext, override_settings  # noqa: E402

import outbound  # noqa: E402
from accounts.models import User  # noqa: E402
from bench.isolated_celery import app as celery_app  # noqa: E402
from webhooks import attempts as webhook_attempts  # noqa: E402
from webhooks import endpoints, services, tasks  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, DeliveryStatus, Event, EventType  # noqa: E402

RUN_TIMEOUT = 90.0
WARM_UP = 2.0  # seconds of a fairness run before the healthy endpoint's events are counted
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
stop_serving = threading.Event()


class FastHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like nginx, gunicorn's async workers or Node

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


class NeverAnswersHandler(FastHandler):
    def do_POST(self) -> None:
        stop_serving.wait(120)


slow_seconds = 10.0
arrivals: dict[str, float] = {}  # event id -> when the healthy receiver got it (time.time())


class SlowHandler(FastHandler):
    """Another tenant's endpoint that answers `slow_seconds` late."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if stop_serving.wait(slow_seconds):
            return
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


class TimedHandler(FastHandler):
    """The healthy endpoint: notes when each event arrived."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        arrivals[json.loads(body)["id"]] = time.time()
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    server.request_queue_size = 1024
    server.handle_error = lambda request, client_address: None  # a killed worker's connection reset
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


def cpu_seconds(pid: int) -> float:
    """utime + stime of a live process, 0 once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def cpu_at_start(worker: subprocess.Popen) -> dict[str, dict[int, float]]:
    """The baseline: the worker's main process after its start-up. Its pool processes and their
    PostgreSQL backends count from zero (they may be at work before the worker answers a ping,
    so a snapshot of them here would miss some of it)."""
    return {"workers": {worker.pid: cpu_seconds(worker.pid)}, "postgres": {}}


def cpu_snapshot(worker: subprocess.Popen) -> dict[str, dict[int, float]]:
    """CPU so far of the worker's processes and of the PostgreSQL backends of this database
    (the bench's own connection left out): nothing else on the machine counts."""
    pids = [worker.pid]
    for task in Path(f"/proc/{worker.pid}/task").glob("*"):
        try:
            pids += [int(pid) for pid in (task / "children").read_text().split()]
        except OSError:
            pass
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        backends = [row[0] for row in cursor.fetchall()]
    return {
        "workers": {pid: cpu_seconds(pid) for pid in pids},
        "postgres": {pid: cpu_seconds(pid) for pid in backends},
    }


def cpu_spent(before: dict[str, dict[int, float]], after: dict[str, dict[int, float]]) -> dict[str, float]:
    """CPU seconds between two snapshots; a process born in between counts from zero."""
    return {part: sum(max(0.0, cpu - before[part].get(pid, 0.0)) for pid, cpu in after[part].items()) for part in after}


def stop_worker(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(10)


@dataclass
class Run:
    rate: float  # healthy endpoints' deliveries per second
    worker_ms: float  # CPU per delivery (of every endpoint) in the worker processes
    postgres_ms: float  # and in their PostgreSQL backends


def run(*, concurrency: int, healthy_urls: list[str], dead_url: str | None, events: int) -> Run:
    """Deliver `events` events to each endpoint; return the healthy endpoints' deliveries/s."""
    celery_app.control.purge()
    user = User.objects.create_user(f"bench-{uuid.uuid4().hex[:8]}@example.com", uuid.uuid4().hex)
    worker = None
    try:
        healthy = [endpoints.webhook_create(user=user, url=url, events=None) for url in healthy_urls]
        if dead_url:
            endpoints.webhook_create(user=user, url=dead_url, events=None)
        # The outbox first (its dispatch task waits in Redis), then the workers: the rate is
        # the workers' alone, not how fast this script records events.
        for start in range(0, events, 50):
            with transaction.atomic():
                for n in range(start, min(start + 50, events)):
                    services.event_record(user=user, type=EventType.DRAFT_SEEN, data={"draftId": str(n)})
        worker, _ = start_worker(concurrency)
        cpu_before = cpu_at_start(worker)
        wanted = events * len(healthy)
        done = Delivery.objects.filter(webhook__in=healthy, status=DeliveryStatus.SUCCEEDED)
        deadline = time.monotonic() + RUN_TIMEOUT
        while done.count() < wanted and time.monotonic() < deadline:
            celery_app.send_task("webhooks.dispatch_due")  # the beat tick, every second
            time.sleep(1.0)
        delivered = done.count()
        cpu = cpu_spent(cpu_before, cpu_snapshot(worker))
        attempts = max(DeliveryAttempt.objects.filter(delivery__webhook__user=user).count(), 1)
        span = DeliveryAttempt.objects.filter(delivery__webhook__in=healthy).aggregate(
            first=Min("started_at"), last=Max("finished_at")
        )
        seconds = max((span["last"] - span["first"]).total_seconds(), 1e-3) if delivered else 1.0
        if delivered < wanted:
            print(f"  (only {delivered} of {wanted} delivered within {RUN_TIMEOUT:.0f} s)")
        return Run(
            rate=delivered / seconds,
            worker_ms=cpu["workers"] * 1000 / attempts,
            postgres_ms=cpu["postgres"] * 1000 / attempts,
        )
    finally:
        if worker is not None:
            stop_worker(worker)
        user.delete()  # cascades to webhooks, events, deliveries, attempts


@dataclass
class Latency:
    p50: float
    p99: float
    delivered: int
    wanted: int
    slow_delivered: int


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def latency_run(*, healthy_url: str, slow_url: str | None, tenants: int, seconds: float, rate: float) -> Latency:
    """A healthy endpoint's events recorded at `rate` a second for `seconds`, each in its own
    transaction (its commit nudges the dispatcher, as a payment's change does), while `tenants`
    other accounts' endpoints at `slow_url` each always have a delivery owed (one recorded every
    `slow_seconds`). 4 worker processes, the beat tick every second. The delay of a delivery is
    its arrival at the receiver minus its event's createdAt."""
    celery_app.control.purge()
    owner = User.objects.create_user(f"bench-{uuid.uuid4().hex[:8]}@example.com", None)
    others = [User.objects.create_user(f"tenant-{uuid.uuid4().hex[:8]}@example.com", None) for _ in range(tenants)]
    worker = None
    try:
        endpoints.webhook_create(user=owner, url=healthy_url, events=None)
        for tenant in others:
            endpoints.webhook_create(user=tenant, url=f"{slow_url}/{tenant.id}", events=None)
        worker, _ = start_worker(4)
        started = time.monotonic()
        healthy_events: list[str] = []
        done = threading.Event()

        def slow_tenants() -> None:  # their events on a thread of their own: the healthy rate holds
            try:
                while True:
                    for tenant in others:
                        with transaction.atomic():
                            services.event_record(
                                user=tenant, type=EventType.DRAFT_SEEN, data={"draftId": str(uuid.uuid4())}
                            )
                    if done.wait(slow_seconds):
                        return
            finally:
                connection.close()

        recorder = threading.Thread(target=slow_tenants, daemon=True)
        if others:
            recorder.start()
        next_tick = started
        n = 0
        while time.monotonic() - started < WARM_UP + seconds:
            now = time.monotonic()
            if now >= next_tick:
                celery_app.send_task("webhooks.dispatch_due")  # the beat tick
                next_tick = now + 1.0
            if now - started < WARM_UP:  # the worker's first passes, the slow requests under way
                time.sleep(0.05)
                continue
            with transaction.atomic():
                event = services.event_record(
                    user=owner, type=EventType.DRAFT_SEEN, data={"draftId": str(uuid.uuid4())}
                )
            healthy_events.append(str(event.id))
            n += 1
            time.sleep(max(0.0, started + WARM_UP + n / rate - time.monotonic()))
        done.set()
        if others:
            recorder.join(60)
        deadline = time.monotonic() + RUN_TIMEOUT
        while not all(e in arrivals for e in healthy_events) and time.monotonic() < deadline:
            time.sleep(0.2)
        created = dict(Event.objects.filter(id__in=healthy_events).values_list("id", "created_at"))
        delays = [arrivals[e] - created[uuid.UUID(e)].timestamp() for e in healthy_events if e in arrivals]
        slow_done = Delivery.objects.filter(webhook__user__in=others, status=DeliveryStatus.SUCCEEDED).count()
        return Latency(_percentile(delays, 0.5), _percentile(delays, 0.99), len(delays), len(healthy_events), slow_done)
    finally:
        if worker is not None:
            stop_worker(worker)
        for user in [owner, *others]:
            user.delete()


def count_one_lane(url: str, deliveries: int = 40) -> None:
    """SQL statements and commits per delivery while a worker's lane runs through one endpoint's
    due deliveries, counted in-process. A commit is a COMMIT or a write outside a transaction."""
    user = User.objects.create_user(f"bench-{uuid.uuid4().hex[:8]}@example.com", uuid.uuid4().hex)
    try:
        webhook = endpoints.webhook_create(user=user, url=url, events=None)
        with transaction.atomic():
            for n in range(deliveries + 1):
                services.event_record(user=user, type=EventType.DRAFT_SEEN, data={"draftId": str(n)})
        [first] = services.deliveries_dispatch(webhook_id=webhook.id, limit=1, enqueue=False)
        webhook_attempts.delivery_attempt(attempt_id=first)  # the lane's first attempt warms up connections
        [second] = services.deliveries_dispatch(webhook_id=webhook.id, limit=1, enqueue=False)
        autocommitted = 0

        def count_autocommit(execute, sql, params, many, context):
            nonlocal autocommitted
            if not connection.in_atomic_block and not sql.lstrip().upper().startswith("SELECT"):
                autocommitted += 1
            return execute(sql, params, many, context)

        with CaptureQueriesContext(connection) as capture, connection.execute_wrapper(count_autocommit):
            tasks.deliver.run(str(second))
        made = Delivery.objects.filter(webhook=webhook, status=DeliveryStatus.SUCCEEDED).count() - 1
        # Django logs BEGIN and COMMIT among the captured queries.
        statements = [q["sql"] for q in capture.captured_queries]
        sql = sum(1 for s in statements if s not in ("BEGIN", "COMMIT", "ROLLBACK"))
        commits = statements.count("COMMIT") + autocommitted
        print(f"One lane, counted in-process ({made} deliveries to one endpoint):")
        print(f"  per delivery: {sql / made:5.2f} SQL statements, {commits / made:5.2f} commits")
    finally:
        user.delete()


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a certificate it signed for 127.0.0.1: (CA, certificate, key)."""
    now = dt.datetime.now(dt.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "Bench CA")])

    def certificate(subject: x509.Name, public_key, *, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(ca_name)
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if not ca:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
            )
        return builder.sign(ca_key, hashes.SHA256())

    paths = folder / "ca.pem", folder / "cert.pem", folder / "key.pem"
    paths[0].write_bytes(certificate(ca_name, ca_key.public_key(), ca=True).public_bytes(serialization.Encoding.PEM))
    leaf = certificate(x509.Name([]), key.public_key(), ca=False)
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


def _receive(protocol: str, tls: tuple[Path, Path] | None, ports: multiprocessing.Queue) -> None:
    """A receiver process: HTTP/1.0 closes each connection, HTTP/1.1 keeps it open."""

    class Handler(FastHandler):
        protocol_version = protocol

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    ports.put(server.server_address[1])
    server.serve_forever()


def count_connection_costs(requests: int) -> None:
    """CPU (ours and the receiver's) and wall time of one `outbound.post`, in-process."""
    print(f"One outbound POST to a receiver in another process ({requests} after a warm-up):")
    with tempfile.TemporaryDirectory() as folder:
        ca, cert, key = _certificates(Path(folder))
        for scheme in ("http", "https"):
            for protocol, what in (("HTTP/1.0", "closes each connection"), ("HTTP/1.1", "keeps it open")):
                ports: multiprocessing.Queue = multiprocessing.get_context("fork").Queue()
                receiver = multiprocessing.get_context("fork").Process(
                    target=_receive, args=(protocol, (cert, key) if scheme == "https" else None, ports), daemon=True
                )
                receiver.start()
                url = f"{scheme}://127.0.0.1:{ports.get(timeout=10)}/hook"
                try:
                    with override_settings(OUTBOUND_CA_BUNDLE=str(ca)):
                        for _ in range(10):
                            outbound.post(url, body=b"{}", timeout=5, max_bytes=4096)
                        receiver_before, ours_before = cpu_seconds(receiver.pid), time.process_time()
                        started = time.perf_counter()
                        for _ in range(requests):
                            assert outbound.post(url, body=b"{}", timeout=5, max_bytes=4096).ok
                        wall = (time.perf_counter() - started) * 1000 / requests
                        ours = (time.process_time() - ours_before) * 1000 / requests
                        theirs = (cpu_seconds(receiver.pid) - receiver_before) * 1000 / requests
                finally:
                    receiver.kill()
                    receiver.join()
                cpu = f"CPU: ours {ours:5.2f} ms, receiver's {theirs:5.2f} ms"
                print(f"  {scheme:5} receiver {what:22}  {wall:6.2f} ms   {cpu}")


def _rates(rates: list[float]) -> str:
    return ", ".join(f"{rate:.1f}" for rate in rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=120, help="events per run (each goes to every endpoint)")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of the isolation runs")
    parser.add_argument("--requests", type=int, default=500, help="outbound POSTs per connection-cost measurement")
    parser.add_argument("--slow-endpoints", type=int, default=100, help="other tenants' slow endpoints (fairness)")
    parser.add_argument("--slow-seconds", type=float, default=10.0, help="how late the slow endpoints answer")
    parser.add_argument("--fair-seconds", type=float, default=30.0, help="how long the healthy endpoint gets events")
    parser.add_argument("--fair-rate", type=float, default=10.0, help="the healthy endpoint's events a second")
    parser.add_argument("--fairness-only", action="store_true", help="only the fairness scenario")
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
    global slow_seconds
    slow_seconds = args.slow_seconds
    fast, dead, slow, timed = serve(FastHandler), serve(NeverAnswersHandler), serve(SlowHandler), serve(TimedHandler)
    base = f"http://127.0.0.1:{fast.server_address[1]}"
    slow_base, timed_base = (f"http://127.0.0.1:{server.server_address[1]}" for server in (slow, timed))
    endpoints = [f"{base}/endpoint-{n}" for n in range(4)]
    dead_url = f"http://127.0.0.1:{dead.server_address[1]}/never-answers"
    try:
        if args.fairness_only:
            return fairness(args, healthy_url=f"{timed_base}/healthy", slow_url=f"{slow_base}/slow")
        count_one_lane(f"{base}/counted")
        count_connection_costs(args.requests)
        print(f"Webhook deliveries to a local receiver ({args.events} events per endpoint)")
        for concurrency in (1, 4):
            result = run(concurrency=concurrency, healthy_urls=endpoints, dead_url=None, events=args.events)
            print(
                f"  {concurrency} worker process(es), 4 endpoints:     {result.rate:8.1f} deliveries/s"
                f"   CPU per delivery: workers {result.worker_ms:.2f} ms, PostgreSQL {result.postgres_ms:.2f} ms"
            )
        print(f"Isolation (4 worker processes; {args.rounds} alternating rounds, median, to damp a busy machine)")
        alone, beside = [], []
        for _ in range(args.rounds):
            alone.append(run(concurrency=4, healthy_urls=endpoints[:1], dead_url=None, events=args.events).rate)
            beside.append(run(concurrency=4, healthy_urls=endpoints[:1], dead_url=dead_url, events=args.events).rate)
        print(f"  one endpoint alone:                           {statistics.median(alone):8.1f} deliveries/s")
        print(f"  same endpoint next to one that never answers: {statistics.median(beside):8.1f} deliveries/s")
        print(f"  (rounds: alone {_rates(alone)}; beside {_rates(beside)})")
        fairness(args, healthy_url=f"{timed_base}/healthy", slow_url=f"{slow_base}/slow")
    finally:
        stop_serving.set()
        for server in (fast, dead, slow, timed):
            server.shutdown()


def fairness(args, *, healthy_url: str, slow_url: str) -> None:
    print(
        f"Fairness (4 worker processes; the healthy endpoint gets {args.fair_rate:g} events a second for"
        f" {args.fair_seconds:g} s; delay = arrival - event createdAt)"
    )
    alone = latency_run(
        healthy_url=healthy_url, slow_url=None, tenants=0, seconds=args.fair_seconds, rate=args.fair_rate
    )
    beside = latency_run(
        healthy_url=healthy_url,
        slow_url=slow_url,
        tenants=args.slow_endpoints,
        seconds=args.fair_seconds,
        rate=args.fair_rate,
    )
    for what, result in (
        ("alone", alone),
        (f"next to {args.slow_endpoints} endpoints answering after {args.slow_seconds:g} s", beside),
    ):
        print(
            f"  healthy endpoint {what + ':':52} p50 {result.p50:6.3f} s  p99 {result.p99:6.3f} s"
            f"  ({result.delivered} of {result.wanted} delivered)"
        )
    print(f"  p99 above alone: {beside.p99 - alone.p99:+.3f} s; slow tenants' deliveries done: {beside.slow_delivered}")


if __name__ == "__main__":
    main()
