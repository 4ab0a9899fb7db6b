"""/healthz names the workers when the last one dies: beat's heartbeat task stops being run."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from celery import Celery
from django.core.cache import cache
from django.db import connection

from tests.ownservers import own_redis, stop_group

ROOT = Path(__file__).resolve().parents[2]


def _healthz_failed(client) -> list[str]:
    return client.get("/healthz").json()["failed"]


def _wait(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_healthz_names_the_worker_once_no_worker_runs_the_heartbeat_and_is_well_when_one_is_back(
    tmp_path, client, settings
):
    settings.HEALTHZ_WORKER_STALE_SECONDS = 3
    cache.delete_many(["heartbeat:beat", "heartbeat:worker"])
    db = connection.settings_dict
    with own_redis() as broker:
        env = dict(os.environ) | {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "ENV_FILE": "",
            "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
            "CELERY_BROKER_URL": broker.url(0),
        }

        def start_worker(name: str) -> subprocess.Popen:
            return subprocess.Popen(
                [
                    str(ROOT / ".venv/bin/celery"),
                    "-A",
                    "config",
                    "worker",
                    "--pool",
                    "solo",
                    "--hostname",
                    f"{name}@%h",
                    "--without-mingle",
                    "--without-gossip",
                    "--loglevel",
                    "INFO",
                ],
                cwd=ROOT,
                env=env,
                stdout=(tmp_path / f"{name}.log").open("w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

        # The heartbeat as beat sends it: the task every second (HEARTBEAT_INTERVAL_SECONDS here).
        sender = Celery()
        sender.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS  # the worker's queue names
        stop = threading.Event()

        def beat() -> None:
            with sender.connection_for_write(broker.url(0)) as conn:
                while not stop.is_set():
                    sender.send_task("config.heartbeat", connection=conn, expires=1.0)
                    time.sleep(1)

        ticker = threading.Thread(target=beat, daemon=True)
        first = second = None
        try:
            ticker.start()
            first = start_worker("first")
            _wait(lambda: cache.get("heartbeat:worker") is not None, 60, "the worker's first heartbeat")
            assert "worker" not in _healthz_failed(client)

            # When the only worker dies without a word
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(10)
            # Then /healthz names it once its last heartbeat is older than the threshold
            _wait(lambda: "worker" in _healthz_failed(client), 60, "/healthz to name the dead worker")

            # And once a worker runs again, /healthz is well again
            second = start_worker("second")
            _wait(lambda: "worker" not in _healthz_failed(client), 60, "/healthz to see the new worker")
        finally:
            stop.set()
            ticker.join(timeout=10)
            for process in (first, second):
                if process is not None:
                    stop_group(process)
