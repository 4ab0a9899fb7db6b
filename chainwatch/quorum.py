"""Several endpoints per network, and a quorum of them for Confirmed.

RPC_URL_<NETWORK>, BITCOIN_RPC_URL_<NETWORK> and ESPLORA_URL_<NETWORK> take a comma-separated
list of endpoints (networks.chain_urls). With one, nothing here runs: the watcher behaves as it
always did. With several:

- **Seen** from any one endpoint: a pass scans with the first endpoint that answers, and the
  transfers it stores are marked with that endpoint (`TransferQuorum.source`, a label, never the
  URL: URLs carry credentials).
- **Confirmed** from the quorum (CHAINWATCH_QUORUM_<NETWORK>; default all endpoints when 2 or 3
  are configured, a majority above): after each pass every endpoint is asked, in one batched
  request each, about the transfers still waiting for their confirmations (those paying a Seen
  or AmountMismatch draft, and new ones not asked yet). An endpoint *agrees* when it has the
  same transaction in the same block (height and hash), with the same output or log, amount and
  receiver. The confirmations a draft is given are the ones `quorum` agreeing endpoints reach
  (the quorum-th highest count among them); Solana's `final` needs `quorum` endpoints to hold
  it finalized. So an endpoint that is down or behind delays Confirmed and never makes it.
- **Final** (EVM) from the quorum too: each endpoint also names its `finalized` block in the
  same batch; a transfer is final once `quorum` endpoints agree on it in a block at or below
  their own `finalized` block (an endpoint without the tag counts FINALITY_DEPTHS below its
  head instead). The pass's `finalized` is the quorum-th highest of those blocks: the lowest
  finalized block among the `quorum` most advanced endpoints that answered
  (`agreed_final_height`). Never the scanning endpoint's alone.
- **Disagreement**: an endpoint that answers, has the block height, and says something else or
  nothing of the transfer. The transfer then cannot reach the quorum unless enough others
  agree; the disagreement is recorded (what each endpoint said: `TransferQuorum.answers`),
  counted (`chainwatch_quorum_disagreements`), shown by /healthz (`watchers`) and emailed to
  OPERATOR_EMAIL once per transfer (`notify`, after matching: the email names the draft).

Calls: one batched request per endpoint per pass, and only while some transfer waits for its
confirmations: they grow with payments in flight, not with open drafts.
Lightning stays with the provider that issued the invoice (the preimage is the proof).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Q
from django.utils import timezone

from chainwatch import networks
from chainwatch.models import (
    LIGHTNING_INDEX,
    ObservedTransfer,
    TransferQuorum,
)
from chainwatch.services import CursorMoved
from chainwatch.transport import ChainError
from chainwatch.watcher import PassReport
from chainwatch.witnesses import AGREES, DISAGREEING, DOWN, Said, witness
from core import metrics
from drafts.enums import DraftStatus

logger = logging.getLogger(__name__)


def endpoint_label(url: str, position: int) -> str:
    """`#2 rpc.example.com`: the endpoint's place in the list and its host, without the
    credentials, path or query that may carry an API key."""
    host = urlsplit(url).hostname or "?"
    port = urlsplit(url).port
    return f"#{position + 1} {host}{f':{port}' if port else ''}"


def quorum_size(network: str) -> int:
    count = len(networks.chain_urls(network))
    configured = settings.CHAINWATCH_QUORUM.get(network)
    if configured:
        return min(configured, count)
    return count if count <= 3 else count // 2 + 1


def active(network: str, family: str | None = None) -> bool:
    """Several endpoints configured for the network's block watcher (never Lightning)."""
    if (family or networks.family_of(network)) == networks.LIGHTNING:
        return False
    return len(networks.chain_urls(network)) > 1


# --- Seen: scan with any one endpoint ----------------------------------------------------


def scan_any(network: str, family: str, scan: Callable[[networks.Endpoints], PassReport]) -> PassReport:
    """Run `scan` with the network's first endpoint, then the next while one fails; the report
    names the endpoint that answered (`source`)."""
    urls = networks.chain_urls(network) if family != networks.LIGHTNING else []
    if len(urls) <= 1:
        return scan(networks.endpoints(network))
    failures: list[str] = []
    for position, url in enumerate(urls):
        try:
            report = scan(networks.endpoints(network, position))
        except (CursorMoved, DatabaseError):
            raise
        except Exception as exc:  # any failure of one endpoint: try the next
            failures.append(f"{endpoint_label(url, position)}: {type(exc).__name__}: {exc}")
            continue
        report.source = endpoint_label(url, position)
        if failures:
            report.notes.append("endpoints that failed first: " + "; ".join(failures))
        return report
    raise ChainError("every endpoint failed: " + "; ".join(failures))


# --- Confirmed: ask every endpoint -------------------------------------------------------


def waiting(network: str, family: str, *, now: datetime) -> list[ObservedTransfer]:
    """Transfers whose confirmations the quorum still has to agree on: those paying a Seen or
    AmountMismatch draft, or a Confirmed one not yet final (its depth keeps counting to
    finality, and a reorg that moves it is agreed on again), recent unlinked ones not asked yet,
    and unlinked ones reported unmatched whose report is not final yet."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    paying = Q(draft__status__in=(DraftStatus.SEEN, DraftStatus.AMOUNT_MISMATCH)) | Q(
        draft__status=DraftStatus.CONFIRMED, draft__finalized_at__isnull=True
    )
    new = Q(draft__isnull=True, quorum__isnull=True, first_seen_at__gte=now - grace)
    # Reported unmatched and not final yet: followed to finality too (chainwatch.unmatched).
    reported = Q(draft__isnull=True, unmatched_reports__isnull=False, unmatched_reports__final_at__isnull=True)
    transfers = (
        ObservedTransfer.objects.filter(network=network, orphaned=False)
        .exclude(index=LIGHTNING_INDEX)
        .filter(paying | new | reported)
        .distinct()
    )
    if family != networks.SOLANA:
        transfers = transfers.filter(block_height__isnull=False)  # the mempool has no depth to agree on
    return list(transfers.order_by("first_seen_at", "pk")[: settings.CHAINWATCH_QUORUM_TRANSFERS_PER_PASS])


def check(network: str, family: str, report: PassReport, *, now: datetime | None = None) -> int:
    """Ask every endpoint about the transfers waiting for their confirmations and record what
    the quorum agrees on. Returns how many transfers were checked."""
    if not active(network, family):
        return 0
    now = now or timezone.now()
    transfers = waiting(network, family, now=now)
    if not transfers:
        return 0
    heard: list[tuple[str, dict[int, Said]]] = []
    final_heights: list[int] = []
    for position, url in enumerate(networks.chain_urls(network)):
        label = endpoint_label(url, position)
        try:
            asked = witness(network, family, url)
            said = asked.say(transfers)
            final_height = getattr(asked, "final_height", None)
            if final_height is not None:
                final_heights.append(final_height)
        except DatabaseError:
            raise
        except Exception as exc:  # an endpoint down: it agrees to nothing this pass
            logger.info("chainwatch %s quorum: %s did not answer: %s", network, label, exc)
            said = {t.pk: Said(DOWN, detail={"error": f"{type(exc).__name__}"}) for t in transfers}
        heard.append((label, said))
    record(network, transfers, heard, quorum=quorum_size(network), source=getattr(report, "source", ""), now=now)
    if family == networks.EVM:
        report.finalized = agreed_final_height(final_heights, quorum_size(network))
    return len(transfers)


def agreed_final_height(final_heights: list[int], quorum: int) -> int:
    """The highest block `quorum` endpoints hold final: the quorum-th highest of their
    `finalized` blocks, so the lowest among the agreeing ones; -1 (nothing final) when fewer
    than `quorum` endpoints answered."""
    ordered = sorted(final_heights, reverse=True)
    return ordered[quorum - 1] if len(ordered) >= quorum else -1


def record(
    network: str,
    transfers: list[ObservedTransfer],
    heard: list[tuple[str, dict[int, Said]]],
    *,
    quorum: int,
    source: str,
    now: datetime,
) -> None:
    """Store what each endpoint said and the agreed depth, in one short transaction; a new
    disagreement is counted and emailed to the operator; it clears once every endpoint agrees."""
    with transaction.atomic():
        for transfer in transfers:
            said = [(label, answers[transfer.pk]) for label, answers in heard]
            agreeing = sorted((s.confirmations for _, s in said if s.says == AGREES), reverse=True)
            agreed = agreeing[quorum - 1] if len(agreeing) >= quorum else 0
            final = sum(1 for _, s in said if s.says == AGREES and s.final) >= quorum
            against = [(label, s) for label, s in said if s.says in DISAGREEING]
            row, _ = TransferQuorum.objects.select_for_update().get_or_create(
                transfer=transfer, defaults={"source": source, "checked_at": now}
            )
            row.answers = [
                {"endpoint": label, "says": s.says, "confirmations": s.confirmations, "final": s.final, **s.detail}
                for label, s in said
            ]
            row.agreed_confirmations, row.agreed_final, row.checked_at = agreed, final, now
            if against and row.disagreeing_since is None:
                row.disagreeing_since = now
                for label, _ in against:
                    metrics.quorum_disagreements.labels(network, label).inc()
                logger.error(
                    "chainwatch %s: endpoints disagree on %s:%s (%s)",
                    network,
                    transfer.txid,
                    transfer.index,
                    "; ".join(f"{label} says {s.says}" for label, s in said),
                )
            elif all(s.says == AGREES for _, s in said):
                row.disagreeing_since = None
            row.save()


def notify(network: str, *, now: datetime | None = None) -> int:
    """Email OPERATOR_EMAIL once per transfer the endpoints disagree on. Run after matching, so
    the email names the draft the transfer was taken for, if any. Returns how many were sent."""
    if not settings.OPERATOR_EMAIL or not active(network):
        return 0
    now = now or timezone.now()
    with transaction.atomic():
        rows = list(
            TransferQuorum.objects.select_for_update()
            .filter(transfer__network=network, disagreeing_since__isnull=False, operator_notified_at__isnull=True)
            .select_related("transfer")
        )
        for row in rows:
            _email_operator(network, row.transfer, row)
            row.operator_notified_at = now
            row.save(update_fields=["operator_notified_at"])
    return len(rows)


def _email_operator(network: str, transfer: ObservedTransfer, row: TransferQuorum) -> None:
    from notifications.kinds import WATCHERS_DISAGREE
    from notifications.services import email_enqueue

    email_enqueue(
        kind=WATCHERS_DISAGREE,
        to=settings.OPERATOR_EMAIL,
        context={
            "network": network,
            "txid": transfer.txid,
            "index": transfer.index,
            "amountBaseUnits": transfer.amount_base_units,
            "currency": transfer.currency,
            "receiver": transfer.receiver_address,
            "blockHeight": transfer.block_height,
            "blockHash": transfer.block_hash,
            "source": row.source,
            "draftId": str(transfer.draft_id) if transfer.draft_id else "",
            "answers": row.answers,
        },
        dedup_key=f"watchers-disagree:{network}:{transfer.txid}:{transfer.index}",
    )


# --- What matching reads -----------------------------------------------------------------


def _row(transfer: ObservedTransfer) -> TransferQuorum | None:
    try:
        return transfer.quorum
    except TransferQuorum.DoesNotExist:
        return None


def agreed_confirmations(transfer: ObservedTransfer, counted: int) -> int:
    """The confirmations a draft is given for `transfer`: `counted` (from the scanning
    endpoint's head) with one endpoint; with several, no more than the quorum agrees on."""
    if not active(transfer.network):
        return counted
    row = _row(transfer)
    if row is None or row.checked_at < transfer.updated_at:
        return 0  # not asked since its block was last recorded (a reorg moved it, say)
    return min(counted, row.agreed_confirmations)


def agreed_final(transfer: ObservedTransfer) -> bool:
    """Final by the quorum: Solana's finalized commitment, or (EVM) a block at or below the
    `finalized` block of `quorum` endpoints that agree on the transfer, as last asked."""
    if not active(transfer.network):
        return transfer.finalized
    if not transfer.finalized and networks.family_of(transfer.network) != networks.EVM:
        return False
    row = _row(transfer)
    return bool(row and row.agreed_final and row.checked_at >= transfer.updated_at)


# --- Witnesses: one endpoint's view of stored transfers -----------------------------------
