"""Retention purges: delete what is past its age a small batch at a time.

Each batch is its own short transaction: select at most `batch` primary keys of the candidates
(`LIMIT`, through an index on the age column), lock them `FOR UPDATE SKIP LOCKED` (a row another
transaction is using, e.g. a delivery being inserted for that event, is left for the next run),
delete those rows (and what cascades from them), commit. No statement touches more than one
batch of rows, so no lock is held for long and writers never wait behind the purge. After each
batch the purge waits RETENTION_PURGE_PAUSE_RATIO times as long as the batch took (as
pt-archiver's `--sleep-coef`): at the default 1 it takes at most half of one database
connection's time, and the creations beside it keep their median latency and see half the
added tail they saw without the pause (docs/performance.md). A run stops after
`max_batches` so one beat tick cannot run for ever; the next tick goes on.
The apps' purges (webhooks/retention.py, chainwatch/retention.py, drafts/idempotency.py) say
which rows may go; settings and their defaults are in docs/settings.md ("Retention").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from time import monotonic, sleep
from typing import Any

from django.conf import settings
from django.db import models, transaction

BATCH = 1000
MAX_BATCHES = 500


@dataclass
class PurgeReport:
    """What one purge run did: rows deleted (cascaded rows not counted), batches, the longest batch."""

    deleted: int = 0
    batches: int = 0
    longest_batch_seconds: float = 0.0
    batch_sizes: list[int] = field(default_factory=list)
    paused_seconds: float = 0.0


def purge_in_batches(
    candidates: Callable[[], models.QuerySet[Any]],
    *,
    batch: int = BATCH,
    max_batches: int = MAX_BATCHES,
    pause_ratio: float | None = None,
) -> PurgeReport:
    """Delete the rows `candidates()` selects, at most `batch` per transaction, `max_batches` at
    most, pausing `pause_ratio` (RETENTION_PURGE_PAUSE_RATIO) times each batch's time after it."""
    ratio = float(settings.RETENTION_PURGE_PAUSE_RATIO if pause_ratio is None else pause_ratio)
    report = PurgeReport()
    while report.batches < max_batches:
        started = monotonic()
        with transaction.atomic():
            query = candidates().order_by().select_for_update(skip_locked=True, of=("self",))
            ids = list(query.values_list("pk", flat=True)[:batch])
            if not ids:
                break
            query.model._default_manager.filter(pk__in=ids).delete()
        took = monotonic() - started
        report.batches += 1
        report.deleted += len(ids)
        report.batch_sizes.append(len(ids))
        report.longest_batch_seconds = max(report.longest_batch_seconds, took)
        if len(ids) < batch:
            break  # the last of them (a row another transaction held is left for the next run)
        if ratio > 0 and report.batches < max_batches:
            sleep(ratio * took)
            report.paused_seconds += ratio * took
    return report
