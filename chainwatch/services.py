"""Writes of the chain watchers. Each runs in one short transaction after the network I/O
is done; the cursor row is locked and its expected height checked, so two passes that
raced each other cannot both move it (the loser's work is simply dropped)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from chainwatch.models import Cursor, ObservedTransfer, SeenBlock


class CursorMoved(Exception):
    """Another pass moved the cursor since this pass read it."""


@dataclass
class TransferData:
    """A transfer as a chain client reports it, before it is stored."""

    network: str
    txid: str
    index: int
    currency: str
    receiver_address: str
    amount_base_units: int
    token_address: str = ""
    raw_amount: int | None = None
    block_height: int | None = None
    block_hash: str = ""
    block_time: datetime | None = None
    finalized: bool = False
    tx_outputs: dict[str, int] = field(default_factory=dict)
    solana_reference: str = ""
    # When the node (or this watcher) first saw it, if before now: a mempool entry's time.
    seen_at: datetime | None = None
    coinbase: bool = False


def cursor_get(*, network: str, family: str, backend: str = "") -> Cursor:
    cursor, _ = Cursor.objects.get_or_create(network=network, family=family, defaults={"backend": backend})
    return cursor


def _locked_cursor(network: str, family: str, expected_height: int | None) -> Cursor:
    cursor = Cursor.objects.select_for_update().get(network=network, family=family)
    if cursor.height != expected_height:
        raise CursorMoved(f"{network} {family} cursor is at {cursor.height}, expected {expected_height}")
    return cursor


def cursor_start(*, network: str, family: str, height: int, block_hash: str = "") -> Cursor:
    """First run: start watching from `height` (only if nobody started meanwhile)."""
    with transaction.atomic():
        cursor = _locked_cursor(network, family, None)
        cursor.height, cursor.block_hash, cursor.last_advanced_at = height, block_hash, timezone.now()
        cursor.save()
        if block_hash:
            SeenBlock.objects.update_or_create(network=network, height=height, defaults={"block_hash": block_hash})
        return cursor


def _upsert_transfers(transfers: list[TransferData]) -> None:
    for data in transfers:
        defaults = {
            "currency": data.currency,
            "token_address": data.token_address,
            "receiver_address": data.receiver_address,
            "amount_base_units": data.amount_base_units,
            "raw_amount": Decimal(data.raw_amount) if data.raw_amount is not None else None,
            "block_height": data.block_height,
            "block_hash": data.block_hash,
            "block_time": data.block_time,
            "orphaned": False,
            "tx_outputs": data.tx_outputs,
            "solana_reference": data.solana_reference,
            "coinbase": data.coinbase,
        }
        first = {"first_seen_at": min(data.seen_at, timezone.now())} if data.seen_at else {}
        transfer, created = ObservedTransfer.objects.get_or_create(
            network=data.network,
            txid=data.txid,
            index=data.index,
            defaults={**defaults, **first, "finalized": data.finalized},
        )
        if created:
            continue
        if data.seen_at and data.seen_at < transfer.first_seen_at:  # seen earlier than we knew
            ObservedTransfer.objects.filter(pk=transfer.pk).update(first_seen_at=data.seen_at)
        # A mempool sighting must not erase the block a transfer is already known to be in.
        if data.block_height is None and transfer.block_height is not None and not transfer.orphaned:
            continue
        changed = [k for k, v in defaults.items() if getattr(transfer, k) != v]
        for key in changed:
            setattr(transfer, key, defaults[key])
        if data.finalized and not transfer.finalized:
            transfer.finalized = True
            changed.append("finalized")
        if changed:
            transfer.save(update_fields=[*changed, "updated_at"])


def blocks_record(
    *,
    network: str,
    family: str,
    expected_height: int,
    new_height: int,
    new_hash: str,
    blocks: dict[int, str],
    transfers: list[TransferData],
    head: int,
) -> Cursor:
    """Store a scanned block range: its hashes, its transfers, and the cursor after it."""
    now = timezone.now()
    with transaction.atomic():
        cursor = _locked_cursor(network, family, expected_height)
        for height, block_hash in sorted({**blocks, new_height: new_hash}.items()):
            if block_hash:
                SeenBlock.objects.update_or_create(network=network, height=height, defaults={"block_hash": block_hash})
        _upsert_transfers(transfers)
        SeenBlock.objects.filter(network=network, height__lt=new_height - settings.CHAINWATCH_REORG_DEPTH).delete()
        cursor.height, cursor.block_hash, cursor.head = new_height, new_hash, head
        cursor.last_advanced_at = cursor.last_run_at = now
        cursor.save()
        return cursor


def chain_rewind(*, network: str, family: str, expected_height: int, fork_height: int) -> list[ObservedTransfer]:
    """A reorg replaced the blocks above `fork_height`: forget them, orphan their transfers,
    and move the cursor back so the new branch is scanned. Returns the orphaned transfers."""
    with transaction.atomic():
        cursor = _locked_cursor(network, family, expected_height)
        orphaned = list(
            ObservedTransfer.objects.select_for_update().filter(network=network, block_height__gt=fork_height)
        )
        ObservedTransfer.objects.filter(pk__in=[t.pk for t in orphaned]).update(
            orphaned=True,
            block_height=None,
            block_hash="",
            block_time=None,
            confirmations=0,
            updated_at=timezone.now(),
        )
        SeenBlock.objects.filter(network=network, height__gt=fork_height).delete()
        kept = SeenBlock.objects.filter(network=network, height=fork_height).first()
        cursor.height, cursor.block_hash = fork_height, kept.block_hash if kept else ""
        cursor.save()
        return orphaned


def transfers_record(*, transfers: list[TransferData]) -> None:
    """Store transfers found outside a block scan (mempool, address or reference lookups)."""
    with transaction.atomic():
        _upsert_transfers(transfers)


def transfers_orphan(*, network: str, keys: list[tuple[str, int]]) -> None:
    """These transfers left the chain (or the mempool) without being confirmed."""
    with transaction.atomic():
        for txid, index in keys:
            ObservedTransfer.objects.filter(network=network, txid=txid, index=index).update(
                orphaned=True,
                block_height=None,
                block_hash="",
                block_time=None,
                confirmations=0,
                updated_at=timezone.now(),
            )


def cursor_progress(
    *,
    network: str,
    family: str,
    head: int | None,
    height: int | None = None,
    position: str | None = None,
    now: datetime | None = None,
) -> None:
    """A pass finished: note the head (and, for pollers, the new height or provider position).
    The last error stays on record with its time; `last_advanced_at` after it shows the
    watcher recovered."""
    now = now or timezone.now()
    fields: dict[str, Any] = {"head": head, "last_run_at": now, "last_advanced_at": now}
    if height is not None:
        fields["height"] = height
    if position is not None:
        fields["position"] = position
    Cursor.objects.filter(network=network, family=family).update(**fields)


def cursor_traces_record(*, network: str, family: str, traces: str) -> None:
    """Note which trace method the watcher's node answers (read by /healthz)."""
    Cursor.objects.filter(network=network, family=family).exclude(traces=traces).update(traces=traces)


def cursor_fail(*, network: str, family: str, error: str, now: datetime | None = None) -> None:
    now = now or timezone.now()
    Cursor.objects.filter(network=network, family=family).update(
        last_error=error[:2000], last_error_at=now, last_run_at=now
    )
