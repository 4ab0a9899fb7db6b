"""Fixtures for webhook tests: a real HTTP receiver on 127.0.0.1, a DNS test double
(the only thing substituted: DNS cannot run here) and a helper that runs the dispatcher
and the delivery attempts in-process, through the same services the Celery tasks call."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.db import transaction

from tests.ownservers import serve_in_background
from webhooks import attempts as webhook_attempts
from webhooks import endpoints, services
from webhooks.models import DeliveryAttempt, Webhook


@pytest.fixture(autouse=True)
def _dns(fake_dns):
    fake_dns.answers["localhost"] = ["127.0.0.1"]
    return fake_dns


@pytest.fixture
def loopback(settings):
    settings.OUTBOUND_ALLOW_LOOPBACK = True
    return settings


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    client_port: int = 0  # which connection it came on


@dataclass
class Receiver:
    """A real HTTP server. `statuses` answers the next requests in turn, then `status`.
    With `hold` set, each request waits for `release` before answering; with `delay`, each
    answers that many seconds late (a slow receiver); with `keep_alive` it speaks HTTP/1.1 and
    keeps connections open."""

    status: int = 200
    statuses: list[int] = field(default_factory=list)
    requests: list[Received] = field(default_factory=list)
    hold: bool = False
    delay: float = 0.0
    keep_alive: bool = False
    release: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/payments"

    def wait_for(self, count: int, timeout: float = 20.0) -> bool:
        with self.arrived:
            return self.arrived.wait_for(lambda: len(self.requests) >= count, timeout=timeout)


def _serve(receiver: Receiver) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1" if receiver.keep_alive else "HTTP/1.0"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.arrived:
                received = Received(self.path, dict(self.headers.items()), body, self.client_address[1])
                receiver.requests.append(received)
                status = receiver.statuses.pop(0) if receiver.statuses else receiver.status
                receiver.arrived.notify_all()
            if receiver.hold:
                receiver.release.wait(60)
            time.sleep(receiver.delay)
            try:
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")
            except OSError:
                pass  # the caller went away (a killed worker, a time-out)

        def log_message(self, format, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    receiver.port = server.server_address[1]
    serve_in_background(server)
    return server


@pytest.fixture
def make_receiver():
    servers: list[tuple[ThreadingHTTPServer, Receiver]] = []

    def make(**kwargs) -> Receiver:
        receiver = Receiver(**kwargs)
        servers.append((_serve(receiver), receiver))
        return receiver

    yield make
    for server, receiver in servers:
        receiver.release.set()
        server.shutdown()
        server.server_close()


@pytest.fixture
def receiver(make_receiver) -> Receiver:
    return make_receiver()


@contextmanager
def refusing_endpoint() -> Iterator[str]:
    """The URL of a port on 127.0.0.1 that refuses every connection: bound, never listening
    (and held, so nothing else takes the port meanwhile)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/hooks"


@pytest.fixture
def refusing_url() -> Iterator[str]:
    with refusing_endpoint() as url:
        yield url


@pytest.fixture
def make_webhook(owner, loopback):
    def make(url: str, *, user=None, events: list[str] | None = None) -> Webhook:
        return endpoints.webhook_create(user=user or owner, url=url, events=events)

    return make


def deliver_due(**kwargs) -> list[DeliveryAttempt]:
    """One beat tick, then the claimed attempts, as the Celery worker would run them."""
    attempts = []
    for attempt_id in services.deliveries_dispatch(**kwargs):
        attempts.append(webhook_attempts.delivery_attempt(attempt_id=attempt_id))
    return attempts


def deliver_all_due(**kwargs) -> list[DeliveryAttempt]:
    """Ticks until one claims nothing: an object's later events wait for its earlier ones, so
    a draft's draft.seen and draft.confirmed take a tick each here (a worker's lane goes on by itself)."""
    attempts, ticks = [], 0
    while made := deliver_due(**kwargs):
        attempts += made
        ticks += 1
        assert ticks < 100, "deliveries keep coming due"
    return attempts


def record(user, type: str, data: dict, draft_id=None):
    with transaction.atomic():
        return services.event_record(user=user, type=type, data=data, draft_id=draft_id)


def deliver_in_a_pass(**kwargs) -> list[DeliveryAttempt]:
    """One dispatcher pass (webhooks/passes.py, the asyncio sender), in-process, as the
    `webhooks.dispatch_due` task runs it; returns the attempts it made."""
    from webhooks import passes

    before = set(DeliveryAttempt.objects.values_list("id", flat=True))
    passes.pass_run(seconds=kwargs.pop("seconds", 1))
    return list(DeliveryAttempt.objects.exclude(id__in=before).order_by("claimed_at", "number"))


@pytest.fixture(params=["one at a time", "a pass"])
def send_due(request):
    """Each way a delivery is made: a worker's attempt (then its lane), and a dispatcher pass."""
    from webhooks import passes

    passes._seen.clear()
    yield deliver_in_a_pass if request.param == "a pass" else deliver_due
    passes._seen.clear()
