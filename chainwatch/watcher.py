"""The pass every block-based watcher (EVM, Bitcoin Core) runs:

1. read the cursor and the watched receivers (one per address and asset, however many
   drafts are billed there; drafts.selectors.watched_receivers); ask the node for its head;
2. re-check the remembered block hashes (newest first, then the rest in one batch): if
   the chain moved under us, orphan the transfers above the fork and rewind the cursor;
3. scan the next bounded range of blocks and store hashes, transfers and the new cursor
   in one short transaction;
4. report every transfer that may still matter to the state machine.

Network I/O happens between the short transactions, never inside one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from django.conf import settings

from chainwatch import services
from chainwatch.models import ObservedTransfer, SeenBlock
from chainwatch.services import TransferData
from drafts.selectors import WatchedReceiver, watched_receivers


@dataclass
class ScanResult:
    blocks: dict[int, str]  # height -> hash of every block worth remembering in the range
    transfers: list[TransferData]
    end_hash: str
    notes: list[str] = field(default_factory=list)  # how the range was read, for the pass report


@dataclass
class PassReport:
    network: str
    family: str
    head: int
    start: int | None
    end: int | None
    reorged_to: int | None = None
    transfers: int = 0
    applied: int = 0
    notes: list[str] = field(default_factory=list)
    source: str = ""  # the endpoint that answered, when several are configured (chainwatch/quorum.py)
    # EVM: the node's `finalized` block number; None where it names none (finality by depth).
    finalized: int | None = None

    @property
    def caught_up(self) -> bool:
        return self.end is not None and self.end >= self.head


class Mempool(Protocol):
    def snapshot(self) -> set[str]: ...

    def record(self, snapshot: set[str], watched: list[WatchedReceiver], *, caught_up: bool) -> None: ...


class BlockHashes(Protocol):
    def block_hashes(self, heights: list[int]) -> dict[int, str | None]: ...


class BlockSource(BlockHashes, Protocol):
    family: str
    backend: str

    def head(self) -> int: ...

    def blocks_per_pass(self, watched: list[WatchedReceiver]) -> int: ...

    def scan(self, start: int, end: int, watched: list[WatchedReceiver]) -> ScanResult: ...


def _check_reorg(network: str, family: str, source: BlockHashes, height: int) -> int | None:
    """The fork height if remembered blocks left the chain, else None."""
    remembered = list(
        SeenBlock.objects.filter(network=network, height__lte=height).order_by("-height")[
            : settings.CHAINWATCH_REORG_DEPTH
        ]
    )
    if not remembered:
        return None
    newest = remembered[0]
    if source.block_hashes([newest.height]).get(newest.height) == newest.block_hash:
        return None  # the newest block we built on is still there, so are its ancestors
    current = source.block_hashes([b.height for b in remembered[1:]])
    for block in remembered[1:]:
        if current.get(block.height) == block.block_hash:
            return block.height
    return remembered[-1].height - 1  # deeper than we remember: rescan all of it


def block_pass(network: str, source: BlockSource, *, mempool: Mempool | None = None) -> PassReport:
    """One bounded pass. `mempool` (Bitcoin Core) is called after the head is known."""
    family = source.family
    cursor = services.cursor_get(network=network, family=family, backend=source.backend)
    watched = watched_receivers(network=network)
    mempool_snapshot = mempool.snapshot() if mempool else None
    head = source.head()
    report = PassReport(network=network, family=family, head=head, start=cursor.height, end=cursor.height)

    if cursor.height is None:
        start = max(head - settings.CHAINWATCH_START_LOOKBACK_BLOCKS, 0)
        start_hash = source.block_hashes([start]).get(start) or ""
        cursor = services.cursor_start(network=network, family=family, height=start, block_hash=start_hash)
        report.start = report.end = start
    assert cursor.height is not None  # started above

    fork = _check_reorg(network, family, source, cursor.height)
    if fork is not None:
        orphaned = services.chain_rewind(
            network=network, family=family, expected_height=cursor.height, fork_height=fork
        )
        report.reorged_to = fork
        report.notes.append(f"reorg: rewound to {fork}, {len(orphaned)} transfers orphaned")
        cursor.height = fork

    end = min(head, cursor.height + source.blocks_per_pass(watched))
    if end > cursor.height:
        scanned = source.scan(cursor.height + 1, end, watched)
        services.blocks_record(
            network=network,
            family=family,
            expected_height=cursor.height,
            new_height=end,
            new_hash=scanned.end_hash,
            blocks=scanned.blocks,
            transfers=scanned.transfers,
            head=head,
        )
        report.transfers = len(scanned.transfers)
        report.end = end
        report.notes.extend(scanned.notes)
    else:
        services.cursor_progress(network=network, family=family, head=head)

    if mempool is not None and mempool_snapshot is not None:
        mempool.record(mempool_snapshot, watched, caught_up=report.caught_up)

    return report


def unconfirmed_keys(network: str) -> set[tuple[str, int]]:
    """Transfers known only from the mempool (not in a block, not orphaned)."""
    return set(
        ObservedTransfer.objects.filter(network=network, block_height__isnull=True, orphaned=False)
        .exclude(index__lt=0)
        .values_list("txid", "index")
    )
