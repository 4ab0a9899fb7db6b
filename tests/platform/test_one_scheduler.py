"""One scheduler: beats share a lease in the database (core/beat.py), and a beat entry's work
holds a lease while it runs (config/celery.py), so neither a second beat nor a duplicate send
runs the same periodic work twice at once."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection

from config.celery import app as celery_app
from config.celery import scheduled_work
from core.beat import BEAT_LEASE
from core.leases import lease_holder, lease_release, lease_take
from webhooks.tasks import dispatch_due

ROOT = Path(__file__).resolve().parents[2]
SENDING = "Sending due task"


@pytest.mark.django_db(transaction=True)
def test_a_lease_has_one_holder_until_it_expires_or_is_released():
    assert lease_take("work", "a", 30)
    assert not lease_take("work", "b", 30)
    assert lease_take("work", "a", 30)  # renewed by its holder
    assert lease_holder("work") == "a"
    lease_release("work", "b")  # not b's to release
    assert lease_holder("work") == "a"
    lease_release("work", "a")
    assert lease_take("work", "b", 0.05)
    time.sleep(0.1)
    assert lease_take("work", "a", 30)  # b's expired: taken over
    assert lease_holder("work") == "a"


@pytest.mark.django_db(transaction=True)
def test_a_scheduled_task_sent_twice_runs_its_work_once_at_a_time():
    task = dispatch_due
    work = scheduled_work("webhooks.dispatch_due", (), {})
    assert work is not None
    # While another run holds the work, this run is skipped (a dispatch answers a count, a skip None)
    assert lease_take(work, "another-run", 60)
    assert task.apply().get() is None
    # Once it is done, the next run goes ahead and leaves the work free again
    lease_release(work, "another-run")
    assert task.apply().get() == 0
    assert lease_holder(work) is None
    # The same task with other arguments is not a beat entry's work: never held back
    assert scheduled_work("webhooks.dispatch_due", ("00000000-0000-0000-0000-000000000000",), {}) is None


def _beat(tmp_path: Path, name: str) -> tuple[subprocess.Popen, Path]:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "CELERY_BROKER_URL": settings.CELERY_BROKER_URL,
        "BEAT_LEASE_SECONDS": "6",
        "HEARTBEAT_INTERVAL_SECONDS": "1",
        "DEMO_SIMULATE_PAYMENTS": "false",
    }
    log = tmp_path / f"{name}.log"
    process = subprocess.Popen(
        [
            str(ROOT / ".venv" / "bin" / "celery"),
            "-A",
            "config",
            "beat",
            "--loglevel=INFO",
            f"--schedule={tmp_path / name}-schedule",
            f"--pidfile={tmp_path / name}.pid",
        ],
        cwd=ROOT,
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return process, log


def _healthz_failed(client) -> list[str]:
    return client.get("/healthz").json()["failed"]


def _wait(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"timed out waiting for {what}"
        time.sleep(0.2)
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_beats_send_from_one_and_the_second_takes_over_when_the_first_is_killed(tmp_path, client, settings):
    settings.HEALTHZ_BEAT_STALE_SECONDS = 3  # the beats tick every second (HEARTBEAT_INTERVAL_SECONDS)
    cache.delete_many(["heartbeat:beat", "heartbeat:worker"])
    first, first_log = _beat(tmp_path, "first")
    second = None
    try:
        _wait(lambda: SENDING in first_log.read_text(), 60, "the first beat to send")
        holder = lease_holder(BEAT_LEASE)
        assert holder and holder.split(":")[1] == str(first.pid)

        second, second_log = _beat(tmp_path, "second")
        _wait(lambda: "celery beat" in second_log.read_text() and "Scheduler" in second_log.read_text(), 60, "beat 2")
        sent_before = first_log.read_text().count(SENDING)
        time.sleep(12)  # two lease lengths: webhooks-dispatch-due alone is due every 5 s
        # Then only the first beat sends; the second stands by
        assert first_log.read_text().count(SENDING) > sent_before
        assert SENDING not in second_log.read_text(), second_log.read_text()

        assert "beat" not in _healthz_failed(client)

        # When the active beat dies without a word
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        # Then /healthz names the beat once its last tick is older than HEALTHZ_BEAT_STALE_SECONDS
        _wait(lambda: "beat" in _healthz_failed(client), 60, "/healthz to name the dead beat")
        # And the second takes over within a minute (here: the 6 s lease and a 2 s check)
        took = _wait(lambda: SENDING in second_log.read_text(), 60, "the second beat to take over")
        assert took < 20, took
        assert lease_holder(BEAT_LEASE).split(":")[1] == str(second.pid)
        # Its ticks make /healthz well again
        _wait(lambda: "beat" not in _healthz_failed(client), 30, "/healthz to see the new beat's ticks")

        # A beat stopped cleanly gives the lease up at once
        second.send_signal(signal.SIGTERM)
        second.wait(60)  # a loaded machine (two test workers) may take longer than usual to stop it
        assert lease_holder(BEAT_LEASE) is None
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(10)
        celery_app.control.purge()
