"""Celery worker processes recover on their own when PostgreSQL restarts under load."""

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis
from celery import Celery
from django.conf import settings
from prometheus_client import CollectorRegistry, multiprocess

from tests.ownservers import own_postgres, own_redis, stop_group

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 3


@pytest.mark.slow
def test_every_worker_process_succeeds_again_within_10_s_of_a_postgresql_restart(tmp_path):
    with own_postgres() as database, own_redis() as broker:
        results = redis.Redis.from_url(broker.url(2))
        metrics_dir = tmp_path / "metrics"
        metrics_dir.mkdir()
        env = dict(os.environ) | {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "ENV_FILE": "",
            "DATABASE_URL": database.url,
            "CELERY_BROKER_URL": broker.url(0),
            "CACHE_URL": broker.url(1),
            "HEAL_RESULTS_URL": broker.url(2),
            "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        }
        log = tmp_path / "worker.log"
        worker = subprocess.Popen(
            [
                str(ROOT / ".venv/bin/celery"),
                "-A",
                "config",
                "worker",
                "--pool",
                "prefork",
                "--concurrency",
                str(PROCESSES),
                "--include",
                "tests.platform.heal_tasks",
                "--without-mingle",
                "--without-gossip",
                "--loglevel",
                "INFO",
            ],  # fmt: skip
            cwd=ROOT,
            env=env,
            stdout=log.open("w"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        sender = Celery()  # its broker is named per call: CELERY_BROKER_URL in the environment is the shared one
        sender.conf.broker_transport_options = settings.CELERY_BROKER_TRANSPORT_OPTIONS  # the worker's queue names
        stop = threading.Event()

        errors: list[Exception] = []

        def load() -> None:  # a steady stream of database tasks, as beat and the API give a worker
            try:
                with sender.connection_for_write(broker.url(0)) as connection:
                    while not stop.is_set():
                        sender.send_task("tests.heal.touch", connection=connection)
                        time.sleep(0.01)
            except Exception as exc:
                errors.append(exc)
                raise

        loader = threading.Thread(target=load, daemon=True)
        try:
            loader.start()
            deadline = time.monotonic() + 60
            while len(_answered(results)) < PROCESSES and time.monotonic() < deadline:
                time.sleep(0.2)
            pids = set(_answered(results))
            assert len(pids) == PROCESSES, (errors, log.read_text()[-3000:])
            # Every process answers once more, on the connection it now keeps
            again = time.time()
            _wait_until(lambda: set(_answered(results, since=again)) >= pids, 60)

            database.stop()
            # Tasks fail meanwhile: the database is down
            _wait_until(lambda: "task failed on the database" in log.read_text(), 60)
            database.start()
            back = time.time()
            # Each process succeeds again (at the latest 12 s on, when the figures below are read)
            _wait_until(lambda: set(_answered(results, since=back)) >= pids, 12)
            stop.set()
            loader.join(timeout=10)

            after = _answered(results, since=back)
            late = {pid: first - back for pid, first in after.items() if first - back > 10}
            assert set(after) >= pids and not late, (pids, after, late, log.read_text()[-4000:])
            assert "task failed on the database" in log.read_text()  # the failures were reported
            assert _failures_counted(metrics_dir, "tests.heal.touch") >= 1  # and counted for /metrics
        finally:
            stop.set()
            stop_group(worker)


def _wait_until(condition, seconds: float) -> None:
    """Returns when `condition()` holds, or after `seconds` (the assertions that follow then fail)."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)


def _failures_counted(metrics_dir: Path, task: str) -> float:
    """celery_task_failures_total for `task`, summed over the worker processes' files as a
    /metrics scrape sums them."""
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, path=str(metrics_dir))
    return registry.get_sample_value("celery_task_failures_total", {"task": task}) or 0.0


def _answered(results: redis.Redis, since: float = 0.0) -> dict[int, float]:
    """Per worker process, the time of its first successful task since `since`."""
    first: dict[int, float] = {}
    for entry in results.lrange("ok", 0, -1):
        pid, at = entry.decode().split()
        if float(at) >= since:
            first.setdefault(int(pid), float(at))
    return first
