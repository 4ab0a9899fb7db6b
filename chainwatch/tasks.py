"""Celery tasks of the chain watchers. Beat runs `chainwatch_run` for each enabled network
and family (entries `chainwatch-<network>-<family>` in CELERY_BEAT_SCHEDULE); each run does
bounded passes until the watcher has caught up with the chain, so a long downtime is worked
off over several runs without skipping a block."""

from __future__ import annotations

import logging
import time

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from chainwatch import networks, services
from chainwatch.matching import match_network
from core import metrics
from core.sql.dbconn import discard_broken_connections, is_connection_error

logger = logging.getLogger(__name__)


def watcher_pass(network: str, family: str):
    """One bounded pass of the watcher for (network, family), then every stored transfer that
    may still move a draft is matched and applied (the one place that does it)."""
    report = _scan(network, family)
    # Block-counted chains confirm by depth below the head; Solana (finalized) and Lightning
    # (preimage) are final by their own rule, not by a count.
    head = report.head if family in (networks.EVM, networks.BITCOIN) else None
    report.applied = match_network(
        network=network, head=head, lightning=family == networks.LIGHTNING, now=timezone.now()
    )
    return report


def _scan(network: str, family: str):
    ends = networks.endpoints(network)
    if family == networks.EVM:
        from chainwatch.evm import EvmSource
        from chainwatch.watcher import block_pass

        return block_pass(network, EvmSource(network, ends.rpc_url))
    if family == networks.BITCOIN:
        from chainwatch import bitcoin

        return bitcoin.bitcoin_pass(network)
    if family == networks.SOLANA:
        from chainwatch import solana

        return solana.solana_pass(network, ends.rpc_url)
    if family == networks.LIGHTNING:
        from chainwatch import lightning

        return lightning.lightning_pass(network)
    raise ValueError(f"unknown chain family {family!r}")


def watcher_run(network: str, family: str, *, max_passes: int | None = None) -> list:
    """Passes until caught up (or the per-run bound); errors are recorded on the cursor."""
    reports = []
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
