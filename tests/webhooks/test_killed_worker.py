"""A real Celery worker killed (SIGKILL) while the receiver holds the request open: the
delivery is not lost, and a fresh worker's tick delivers it exactly once more."""

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

from config.celery import app as celery_app
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


def _start_worker(log: Path) -> subprocess.Popen:
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
        ],
        cwd=ROOT,
        env=_worker_env(),
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
