"""A real Celery worker killed (SIGKILL) while the receiver holds the request open: the
delivery is not lost, and a fresh worker's tick delivers it exactly once more. A worker (with
its beat) killed in the middle of a backlog for a slow receiver: a fresh one takes up the
deliveries within seconds, not after the dead one's leases would have run out."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.db.models import F
from django.utils import timezone

from config.celery import app as celery_app
from core.beat import BEAT_LEASE
from core.leases import lease_holder
from core.models import Lease
from tests.webhooks.conftest import record
from webhooks import endpoints
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, DeliveryStatus, EventType

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _worker_env() -> dict[str, str]:
    db = connection.settings_dict
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "OUTBOUND_ALLOW_LOOPBACK": "true",
    }


def _start_worker(log: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "config",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"killtest-{uuid.uuid4().hex[:8]}@%h",
            *options,
        ],
        cwd=ROOT,
        env={**_worker_env(), **(env or {})},
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so kill -9 reaches every process of it
    )


def _kill(worker: subprocess.Popen) -> None:
    if worker.poll() is None:
        os.killpg(worker.pid, signal.SIGKILL)
    worker.wait(10)


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def _queue_drained() -> bool:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    prefix = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get("global_keyprefix", "")  # this run's (tests/settings.py)
    return client.llen(f"{prefix}celery") == 0


def test_a_worker_killed_mid_delivery_loses_nothing_and_a_fresh_worker_posts_exactly_once_more(
    owner, make_receiver, loopback, tmp_path
):
    receiver = make_receiver(hold=True)
    endpoints.webhook_create(user=owner, url=receiver.url, events=None)
    celery_app.control.purge()
    log = tmp_path / "worker.log"
    worker = _start_worker(log)
    try:
        # Given an event committed with its outbox rows (on commit a dispatch task goes to Redis)
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": "d-killed", "status": "Confirmed"})
        # When the worker is killed while the receiver holds the POST open
        assert receiver.wait_for(1, timeout=60), log.read_text()
        _wait(lambda: DeliveryAttempt.objects.filter(state=AttemptState.SENDING).exists(), 10, "attempt Sending")
    finally:
        _kill(worker)
    receiver.hold = False
    receiver.release.set()

    # Then the delivery is still owed, with its next attempt scheduled in PostgreSQL
    delivery = Delivery.objects.get()
    lost = DeliveryAttempt.objects.get()
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.attempt_count == 1
    assert delivery.next_attempt_at == lost.claimed_at + timedelta(minutes=1)
    assert lost.state == AttemptState.SENDING and lost.finished_at is None

    # Time passes (a subprocess cannot share frozen time, so the recorded times move back)
    DeliveryAttempt.objects.update(
        claimed_at=F("claimed_at") - timedelta(minutes=2), started_at=F("started_at") - timedelta(minutes=2)
    )
    Delivery.objects.update(next_attempt_at=F("next_attempt_at") - timedelta(minutes=2))

    fresh = _start_worker(log)
    try:
        # The killed task's message coming back must not POST again; the beat tick retries.
        celery_app.send_task("webhooks.deliver", args=[str(lost.id)])
        celery_app.send_task("webhooks.dispatch_due")
        _wait(
            lambda: Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).exists(),
            60,
            "the delivery to succeed: " + log.read_text()[-2000:],
        )
        # More ticks and a duplicate of the successful attempt's message change nothing.
        retry = DeliveryAttempt.objects.get(number=2)
        celery_app.send_task("webhooks.deliver", args=[str(retry.id)])
        celery_app.send_task("webhooks.dispatch_due")
        _wait(_queue_drained, 30, "the queue to drain")
        time.sleep(1.0)
    finally:
        _kill(fresh)

    assert len(receiver.requests) == 2
    assert {r.headers["X-Service-Delivery"] for r in receiver.requests} == {str(delivery.id)}
    attempts = list(DeliveryAttempt.objects.order_by("number").values_list("number", "state", "status_code"))
    assert attempts == [(1, AttemptState.INTERRUPTED, None), (2, AttemptState.DONE, 200)]
    delivery.refresh_from_db()
    assert delivery.status == DeliveryStatus.SUCCEEDED and delivery.total_attempts == 2


def test_a_worker_and_its_beat_killed_mid_backlog_are_taken_over_in_seconds(owner, make_receiver, loopback, tmp_path):
    # Given a backlog for a slow receiver (each POST answered after 0.5 s), being delivered by
    # a worker with its embedded beat (the dispatcher tick every 5 s); its lane leases the
    # endpoint's deliveries a batch at a time
    receiver = make_receiver(delay=0.5)
    endpoints.webhook_create(user=owner, url=receiver.url, events=None)
    celery_app.control.purge()
    Lease.objects.all().delete()
    total = 40
    for n in range(total):
        record(owner, EventType.DRAFT_CONFIRMED, {"draftId": f"d-{n}", "status": "Confirmed"})
    log = tmp_path / "worker.log"
    # a healthy endpoint's lane has up to WEBHOOKS_PER_ENDPOINT_CONCURRENCY requests in flight
    width = 2
    env = {"DEMO_SIMULATE_PAYMENTS": "false", "WEBHOOKS_PER_ENDPOINT_CONCURRENCY": str(width)}
    beat = ("--beat", f"--schedule={tmp_path / 'schedule'}")
    worker = _start_worker(log, *beat, env=env)
    try:
        assert receiver.wait_for(5, timeout=90), log.read_text()[-3000:]
        _wait(lambda: lease_holder(BEAT_LEASE) is not None, 30, "the embedded beat to hold its lease")
    finally:
        # When the worker and its beat are killed in the middle of it
        _kill(worker)
    killed = time.monotonic()
    received = len(receiver.requests)
    assert received < total - 20, "the backlog went out before the kill; make the receiver slower"
    lost = set(DeliveryAttempt.objects.filter(state=AttemptState.SENDING).values_list("delivery_id", flat=True))
    assert len(lost) <= width  # the lane's POSTs under way in the solo worker when it died
    assert lease_holder(BEAT_LEASE) is not None  # the dead beat's lease stays in the database
    assert Delivery.objects.filter(next_attempt_at__gt=timezone.now()).count() > len(lost)  # a leased batch

    # Then a fresh worker (with its beat) resumes the deliveries within 20 s of the kill
    fresh = _start_worker(log, *beat, env=env)
    try:
        _wait(lambda: len(receiver.requests) > received + 1, 20, "deliveries to resume: " + log.read_text()[-3000:])
        resumed = time.monotonic() - killed
        # and every delivery but the lost attempt's (it retries a minute later) goes out, those
        # the dead lane had leased included: about 20 s of POSTs, nowhere near the old lease
        # (the lane's time budget and a POST's lease: 55 s)
        _wait(
            lambda: Delivery.objects.filter(status=DeliveryStatus.SUCCEEDED).count() >= total - len(lost),
            120,
            "the backlog to be delivered: " + log.read_text()[-3000:],
        )
        drained = time.monotonic() - killed
    finally:
        _kill(fresh)
    print(f"deliveries resumed {resumed:.1f} s after the kill, the backlog was out after {drained:.1f} s")
    assert drained < 45, drained
