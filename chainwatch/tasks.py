"""Celery tasks of the chain watchers. Beat runs `chainwatch_run` for each enabled network
and family (entries `chainwatch-<network>-<family>` in CELERY_BEAT_SCHEDULE); each run does
bounded passes until the watcher has caught up with the chain, so a long downtime is worked
off over several runs without skipping a block."""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from chainwatch import networks, quorum, retention, services
from chainwatch.matching import match_network
from chainwatch.watcher import PassReport
from core import metrics
from core.sql.dbconn import discard_broken_connections, is_connection_error

logger = logging.getLogger(__name__)


def watcher_pass(network: str, family: str) -> PassReport:
    """One bounded pass of the watcher for (network, family), then every stored transfer that
    may still move a draft is matched and applied (the one place that does it)."""
    report = quorum.scan_any(network, family, lambda ends: _scan(network, family, ends))
    quorum.check(network, family, report)  # several endpoints: what the quorum agrees on
    # Block-counted chains confirm by depth below the head; Solana (finalized) and Lightning
    # (preimage) are final by their own rule, not by a count.
    head = report.head if family in (networks.EVM, networks.BITCOIN) else None
    # An EVM node's `finalized` block decides finality where it names one; with several
    # endpoints, the `finalized` block the quorum agrees on (quorum.check; docs/decisions.md, Finality).
    finalized = report.finalized if family == networks.EVM else None
    report.applied = match_network(
        network=network, head=head, finalized=finalized, lightning=family == networks.LIGHTNING, now=timezone.now()
    )
    quorum.notify(network)  # endpoints that disagree: the operator hears of it, naming the draft
    return report


def _scan(network: str, family: str, ends: networks.Endpoints) -> PassReport:
    if family == networks.EVM:
        from chainwatch.evm import EvmSource
        from chainwatch.watcher import block_pass

        source = EvmSource(network, ends.rpc_url)
        report = block_pass(network, source)
        report.finalized = source.finalized
        return report
    if family == networks.BITCOIN:
        from chainwatch import bitcoin

        return bitcoin.bitcoin_pass(network, ends)
    if family == networks.SOLANA:
        from chainwatch import solana

        return solana.solana_pass(network, ends.rpc_url)
    if family == networks.LIGHTNING:
        from chainwatch import lightning

        return lightning.lightning_pass(network)
    raise ValueError(f"unknown chain family {family!r}")


def watcher_run(network: str, family: str, *, max_passes: int | None = None) -> list[Any]:
    """Passes until caught up (or the per-run bound); errors are recorded on the cursor."""
    reports: list[Any] = []
    deadline = time.monotonic() + settings.CHAINWATCH_RUN_SECONDS
    for _ in range(max_passes or settings.CHAINWATCH_PASSES_PER_RUN):
        if reports and time.monotonic() > deadline:
            break  # stay well inside the task time limit; the next beat tick goes on
        started = time.monotonic()
        try:
            report = watcher_pass(network, family)
        except services.CursorMoved as exc:
            logger.info("chainwatch %s %s: another pass moved first (%s)", network, family, exc)
            break
        except Exception as exc:  # any failure of a node or provider is recorded and retried next run
            metrics.watcher_pass_errors.labels(network, family).inc()
            logger.warning("chainwatch %s %s failed: %s", network, family, exc)
            if is_connection_error(exc):  # record the error on a fresh connection, not the dead one
                discard_broken_connections()
            services.cursor_get(network=network, family=family)
            services.cursor_fail(network=network, family=family, error=f"{type(exc).__name__}: {exc}")
            break
        metrics.watcher_pass_counted(network, family, report, seconds=time.monotonic() - started)
        reports.append(report)
        if report.caught_up:
            break
    return reports


@shared_task(name="chainwatch.run", ignore_result=True)
def chainwatch_run(network: str, family: str) -> None:
    if (network, family) not in networks.watchers():
        return  # disabled or no endpoint configured
    watcher_run(network, family)


@shared_task(name="chainwatch.purge_unmatched", ignore_result=True)
def purge_unmatched() -> int:
    """Retention (chainwatch/retention.py): unmatched-transfer reports past their age."""
    return retention.unmatched_purge().deleted
