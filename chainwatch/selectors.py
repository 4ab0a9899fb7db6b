"""Reads for the operator: which watchers run, and which have stopped advancing."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from chainwatch.models import Cursor, TransferQuorum
from chainwatch.networks import EVM, watchers


def stale_watchers(*, now: datetime | None = None) -> list[str]:
    """Enabled, configured watchers whose cursor has not advanced within CHAINWATCH_STALE_AFTER_SECONDS.

    A watcher that has not run yet has no cursor and is not counted: it starts with the next
    beat tick, and a fresh deployment should not report unhealthy for that."""
    now = now or timezone.now()
    limit = now - timedelta(seconds=settings.CHAINWATCH_STALE_AFTER_SECONDS)
    cursors = {(c.network, c.family): c for c in Cursor.objects.all()}
    stale = []
    for network, family in watchers(with_endpoint=True):
        cursor = cursors.get((network, family))
        if cursor is not None and (cursor.last_advanced_at is None or cursor.last_advanced_at < limit):
            stale.append(f"{network}-{family}")
    return stale


def watcher_lag(*, now: datetime | None = None) -> dict[str, dict[str, Any]]:
    """Per enabled, configured watcher that has run: its cursor, the node's head, the lag
    between them and the age of its last successful pass, and whether its last pass failed."""
    now = now or timezone.now()
    cursors = {(c.network, c.family): c for c in Cursor.objects.all()}
    found = {}
    for network, family in watchers(with_endpoint=True):
        cursor = cursors.get((network, family))
        if cursor is None:
            continue
        passed = cursor.last_advanced_at
        found[f"{network}-{family}"] = {
            "height": cursor.height,
            "head": cursor.head,
            "lag": cursor.lag,
            "lastPassAgeSeconds": None if passed is None else round((now - passed).total_seconds(), 1),
            "failing": bool(cursor.last_error_at and (passed is None or cursor.last_error_at > passed)),
        }
    return found


def evm_traces() -> dict[str, str]:
    """The trace method each configured EVM watcher's node answers ("trace_filter",
    "debug_traceBlockByNumber"), "none", or "" while its watcher has not asked yet."""
    networks = [network for network, family in watchers(with_endpoint=True) if family == EVM]
    known = dict(Cursor.objects.filter(network__in=networks, family=EVM).values_list("network", "traces"))
    return {network: known.get(network, "") for network in networks}


# /healthz keeps showing a disagreement about a transfer the quorum checked within this time.
DISAGREEMENT_SHOWN_FOR = timedelta(hours=24)


def quorum_disagreements(*, now: datetime | None = None) -> list[str]:
    """`network txid:index` of each transfer a network's endpoints disagree on (chainwatch/quorum.py),
    checked within DISAGREEMENT_SHOWN_FOR, oldest first (at most 20)."""
    now = now or timezone.now()
    rows = (
        TransferQuorum.objects.filter(disagreeing_since__isnull=False, checked_at__gte=now - DISAGREEMENT_SHOWN_FOR)
        .select_related("transfer")
        .order_by("disagreeing_since")
    )
    return [f"{r.transfer.network} {r.transfer.txid}:{r.transfer.index}" for r in rows[:20]]
