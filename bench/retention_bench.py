"""The retention purge at scale: the longest statement it runs and what it does to creation latency.

Run from the repository root (PostgreSQL only; DATABASE_URL names the server):

    .venv/bin/python bench/retention_bench.py [--rows 1000000] [--creations 2000] [--batch 1000]

It builds a fresh database (`--db-name`, dropped at the end), loads `--rows` events past
EVENTS_RETENTION_DAYS, each with one finished delivery and one attempt (so 3 x rows rows in all),
plus as many young events that stay. Then it times event creations (webhooks.services.event_record,
the outbox path every event takes, `--rate` a second) alone, and again for as long as
webhooks.retention.outbox_purge runs in a process of its own (as in a Celery worker beside the
web processes; `--pause-ratio` is its RETENTION_PURGE_PAUSE_RATIO), and prints: rows deleted,
the longest single statement of the purge (every statement timed through Django's
execute_wrapper) and creation p50/p99 without and with the purge, with their ratio. The targets
(issue 45): no purge statement over 1 s at 1,000,000 rows; creation latency during the purge
within 10% of without. Figures taken while other work runs on the machine are not comparable
with them: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")  # environment-driven, no DEBUG-only files

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.models import User  # noqa: E402
from bench.common import load_average, own_database  # noqa: E402
from webhooks import services  # noqa: E402
from webhooks.models import AttemptState, Delivery, DeliveryAttempt, DeliveryStatus, Event, EventType, Webhook  # noqa: E402
from webhooks.retention import outbox_purge  # noqa: E402

CHUNK = 10_000


def load(rows: int, user: User, webhook: Webhook) -> None:
    """`rows` aged events with a finished delivery and an attempt each, and `rows` young events."""
    old = timezone.now() - timedelta(days=settings.EVENTS_RETENTION_DAYS + 10)
    done = 0
    while done < rows:
        size = min(CHUNK, rows - done)
        with transaction.atomic():
            events = Event.objects.bulk_create(
                Event(user=user, type=EventType.DRAFT_CREATED, data={"n": done + i}, created_at=old)
                for i in range(size)
            )
            deliveries = Delivery.objects.bulk_create(
                Delivery(webhook=webhook, event=e, status=DeliveryStatus.SUCCEEDED, created_at=old) for e in events
            )
            DeliveryAttempt.objects.bulk_create(
                DeliveryAttempt(delivery=d, number=1, state=AttemptState.DONE, claimed_at=old) for d in deliveries
            )
            Event.objects.bulk_create(
                Event(user=user, type=EventType.DRAFT_CREATED, data={"young": done + i}) for i in range(size)
            )
        done += size
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def creation_latencies(
    user: User, count: int | None, rate: float, keep_going: Callable[[], bool] = lambda: True
) -> list[float]:
    """Event creations at `rate` a second (as a service's traffic comes, not back to back), each
    timed: `count` of them, or (None) as long as `keep_going()`."""
    timings = []
    began = time.perf_counter()
    n = 0
    while (count is None or n < count) and keep_going():
        time.sleep(max(0.0, began + n / rate - time.perf_counter()))
        started = time.perf_counter()
        with transaction.atomic():
            services.event_record(user=user, type=EventType.DRAFT_CREATED, data={"bench": n})
        timings.append(time.perf_counter() - started)
        n += 1
    return timings


def purge_in_process(batch: int, pause_ratio: float, results: Any) -> None:
    """The purge, in a forked process on its own connection: what it deleted, in how long, and
    its longest statement, put on `results`."""
    result: dict[str, Any] = {"longest": 0.0, "longest_sql": "", "seconds": None, "deleted": {}, "paused": 0.0}

    def timed(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            took = time.perf_counter() - started
            if took > result["longest"]:
                result["longest"], result["longest_sql"] = took, sql[:160]

    try:
        with connection.execute_wrapper(timed):
            started = time.perf_counter()
            reports = outbox_purge(batch=batch, max_batches=10**9, pause_ratio=pause_ratio)
            result["seconds"] = time.perf_counter() - started
            result["deleted"] = {kind: r.deleted for kind, r in reports.items()}
            result["paused"] = sum(r.paused_seconds for r in reports.values())
    finally:
        connection.close()
        results.put(result)


def quantiles(timings: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(timings, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


def measure(args: argparse.Namespace) -> None:
    user = User.objects.create_user("retention-bench@example.com", "correct horse battery staple")
    webhook = Webhook.objects.create(user=user, url="https://hooks.example.com/bench", secret="whsec_bench")
    webhook.active = False  # nothing is delivered: only the outbox rows are measured
    webhook.save(update_fields=["active"])
    started = time.perf_counter()
    load(args.rows, user, webhook)
    print(
        f"loaded {args.rows:,} aged events (+ a delivery and an attempt each) and {args.rows:,} young events "
        f"in {time.perf_counter() - started:.1f} s"
    )
    # The timed creations are another account's, which has no endpoint: its events add no pending
    # delivery that the purge's "no pending delivery" test would have to read past.
    creator = User.objects.create_user("retention-bench-creator@example.com", "correct horse battery staple")
    creation_latencies(creator, min(200, args.creations), args.rate)  # warm-up
    alone = creation_latencies(creator, args.creations, args.rate)
    connection.close()  # the forked purge opens its own; this process reconnects after the fork
    fork = multiprocessing.get_context("fork")
    results = fork.Queue()
    purge = fork.Process(target=purge_in_process, args=(args.batch, args.pause_ratio, results), name="purge")
    purge.start()
    during = creation_latencies(creator, None, args.rate, keep_going=purge.is_alive)  # the whole purge long
    result = results.get(timeout=3600)
    purge.join()
    p50, p99 = quantiles(alone)
    d50, d99 = quantiles(during) if len(during) >= 2 else (float("nan"), float("nan"))
    print(
        f"purge: deleted {result['deleted']} in {result['seconds']:.1f} s, batches of {args.batch}, "
        f"paused {result['paused']:.1f} s (ratio {args.pause_ratio})"
    )
    print(f"longest purge statement: {result['longest'] * 1000:.1f} ms  ({result['longest_sql']})")
    print(f"creation without purge: p50 {p50:.2f} ms  p99 {p99:.2f} ms  ({len(alone)} creations)")
    print(f"creation during purge:  p50 {d50:.2f} ms  p99 {d99:.2f} ms  ({len(during)} creations)")
    print(f"during / without: p50 {d50 / p50:.2f}  p99 {d99 / p99:.2f}")
    print(load_average())
    assert Event.objects.filter(created_at__lt=timezone.now() - timedelta(days=1)).count() == 0, "aged events remain"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--rows", type=int, default=1_000_000, help="aged events to load (each with a delivery and an attempt)"
    )
    parser.add_argument(
        "--creations", type=int, default=2000, help="event creations timed without the purge (during: all of it)"
    )
    parser.add_argument("--rate", type=float, default=200, help="event creations a second, in both phases")
    parser.add_argument("--batch", type=int, default=1000, help="rows per purge batch")
    parser.add_argument(
        "--pause-ratio", type=float, default=1.0, help="the purge's RETENTION_PURGE_PAUSE_RATIO (0: no pause)"
    )
    parser.add_argument(
        "--db-name", default=f"retention_bench_{os.getpid()}", help="the fresh database (dropped at the end)"
    )
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        raise SystemExit("The retention bench measures PostgreSQL: set DATABASE_URL to a PostgreSQL server.")
    with own_database(args.db_name):
        measure(args)


if __name__ == "__main__":
    main()
