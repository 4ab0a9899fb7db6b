"""Solana through JSON-RPC (raw, batched; solana-py 0.41 has no sync client).

Solana Pay puts a unique reference key in each draft's transfer; the reference decides which
draft a transaction pays. Finding the transactions costs one of two ways, whichever asks the
node less this pass (docs/decisions.md, Chain watching):

- by receiver: one `getSignaturesForAddress` per distinct receiver address (the wallet for
  SOL, its associated token account for SPL tokens), paged back to the cursor slot, then one
  `getTransaction` per signature not inspected before. Many drafts share few receivers, so
  this does not grow with open drafts.
- by block: `getBlocks` over the new slots, then one `getBlock` per produced slot (full
  transactions), whatever the number of receivers. Chosen when there are more receivers than
  new slots.

The amount comes from the balance change of the receiver: lamports from pre/postBalances, SPL
tokens from pre/postTokenBalances of the draft's mint owned by the receiver. Commitment:
confirmed -> Seen, finalized -> Confirmed. A stored signature not yet finalized is asked
with `getSignatureStatuses` when no listing told its status this pass: finalized confirms
it, unknown means the fork holding it was abandoned (back to Pending).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from solders.pubkey import Pubkey

from chainwatch import services
from chainwatch.models import WHOLE_TX_INDEX, ObservedTransfer
from chainwatch.networks import SOLANA, token_addresses
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, JsonRpc
from chainwatch.watcher import PassReport
from drafts.selectors import WatchedReceiver, WatchTarget, reference_targets, watched_receivers
from payments.enums import Currency, Network

GENESIS_HASHES: dict[str, str] = {
    Network.SOLANA: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    Network.SOLANA_DEVNET: "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
}
TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
TOKEN_2022_PROGRAM = "TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb"
ATA_PROGRAM = "ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL"
STATUSES_PER_CALL = 256  # getSignatureStatuses takes at most 256 signatures
BY_RECEIVER, BY_BLOCK = "receiver", "block"


def _account_keys(tx: dict[str, Any]) -> list[str]:
    keys = tx["transaction"]["message"]["accountKeys"]
    return [k["pubkey"] if isinstance(k, dict) else k for k in keys]


def received_base_units(tx: dict[str, Any], *, receiver: str, mint: str | None) -> int:
    """What `receiver` gained in this transaction: lamports, or base units of `mint`."""
    meta = tx.get("meta") or {}
    if mint is None:
        keys = _account_keys(tx)
        if receiver not in keys:
            return 0
        i = keys.index(receiver)
        return int(meta["postBalances"][i]) - int(meta["preBalances"][i])

    def owned(balances: list[dict[str, Any]]) -> int:
        return sum(
            int(b["uiTokenAmount"]["amount"])
            for b in balances or []
            if b.get("mint") == mint and b.get("owner") == receiver
        )

    return owned(meta.get("postTokenBalances") or []) - owned(meta.get("preTokenBalances") or [])


def associated_token_address(owner: str, mint: str, token_program: str = TOKEN_PROGRAM) -> str:
    """The owner's associated token account for `mint`: where Solana Pay sends SPL tokens."""
    address, _ = Pubkey.find_program_address(
        [bytes(Pubkey.from_string(owner)), bytes(Pubkey.from_string(token_program)), bytes(Pubkey.from_string(mint))],
        Pubkey.from_string(ATA_PROGRAM),
    )
    return str(address)


class SolanaClient:
    def __init__(self, url: str) -> None:
        self.rpc = JsonRpc(url)

    @property
    def calls(self) -> int:
        return self.rpc.calls

    def slot(self, network: str) -> int:
        """The confirmed slot, after checking the node's cluster by its genesis hash (one batch):
        a devnet URL set for Solana must never 'pay' real drafts."""
        genesis, slot = self.rpc.batch([("getGenesisHash", []), ("getSlot", [{"commitment": "confirmed"}])])
        if genesis != GENESIS_HASHES[network]:
            raise ChainError(f"{network} expects genesis {GENESIS_HASHES[network]}, the node at RPC_URL has {genesis}")
        return int(slot)

    def latest_blockhash(self) -> str:
        """A recent blockhash (confirmed), for a transaction a wallet is asked to sign."""
        answer = self.rpc.call("getLatestBlockhash", [{"commitment": "confirmed"}])
        return str(answer["value"]["blockhash"])

    def signatures(self, address_before: list[tuple[str, str | None]]) -> list[list[dict[str, Any]]]:
        """One page (newest first) per (address, before-signature), all in JSON-RPC batches."""
        limit = settings.CHAINWATCH_SOLANA_SIGNATURES_PER_CALL
        calls = []
        for address, before in address_before:
            options = {"commitment": "confirmed", "limit": limit}
            if before:
                options["before"] = before
            calls.append(("getSignaturesForAddress", [address, options]))
        return [r or [] for r in self.rpc.batch(calls)]

    def transactions(self, signatures: list[str]) -> list[dict[str, Any] | None]:
        options = {"encoding": "jsonParsed", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}
        return self.rpc.batch([("getTransaction", [s, options]) for s in signatures])

    def statuses(self, signatures: list[str]) -> list[dict[str, Any] | None]:
        calls = [
            ("getSignatureStatuses", [signatures[i : i + STATUSES_PER_CALL], {"searchTransactionHistory": True}])
            for i in range(0, len(signatures), STATUSES_PER_CALL)
        ]
        return [status for answer in self.rpc.batch(calls) for status in answer["value"]]

    def produced_slots(self, start: int, end: int) -> list[int]:
        return [int(s) for s in self.rpc.call("getBlocks", [start, end, {"commitment": "confirmed"}])]

    def blocks(self, slots: list[int]) -> list[dict[str, Any] | None]:
        options = {
            "encoding": "jsonParsed",
            "transactionDetails": "full",
            "rewards": False,
            "commitment": "confirmed",
            "maxSupportedTransactionVersion": 0,
        }
        return self.rpc.batch([("getBlock", [s, options]) for s in slots], allow_errors=True)

    def token_programs(self, mints: list[str]) -> dict[str, str]:
        """The program owning each mint (Token or Token-2022): it decides the token account address."""
        answer = self.rpc.call("getMultipleAccounts", [mints, {"encoding": "base64", "commitment": "confirmed"}])
        owners = [(account or {}).get("owner", TOKEN_PROGRAM) for account in answer["value"]]
        return dict(zip(mints, owners, strict=True))


@dataclass
class _Found:
    """A transaction carrying a watched reference, as one of the two ways found it."""

    target: WatchTarget
    signature: str
    slot: int
    tx: dict[str, Any]
    finalized: bool
    # The block's `blockTime` (unix seconds; null where the node does not know it).
    block_time: int | None = None


def _mint(network: str, target: WatchTarget | WatchedReceiver) -> str:
    mint = target.token_address or token_addresses(network).get(target.currency)
    if not mint:
        raise ChainError(f"{network}: no mint configured for {target.currency}")
    return mint


def _receivers(network: str, watched: list[WatchedReceiver]) -> set[tuple[str, str]]:
    """(receiver, mint or "") of the watched drafts: one listing each when watching by receiver."""
    return {(t.receiver_address, "" if t.currency == Currency.SOL else _mint(network, t)) for t in watched}


def _listing_addresses(client: SolanaClient, network: str, receivers: set[tuple[str, str]]) -> list[str]:
    mints = sorted({mint for _, mint in receivers if mint})
    key = f"chainwatch:solana-token-programs:{network}"
    programs: dict[str, str] = cache.get(key) or {}
    unknown = [m for m in mints if m not in programs]
    if unknown:
        programs |= client.token_programs(unknown)
        cache.set(key, programs, timeout=None)  # a mint's owning program never changes
    return sorted({r if not mint else associated_token_address(r, mint, programs[mint]) for r, mint in receivers})


def subscription_addresses(network: str, url: str) -> list[str]:
    """The accounts a payment to a payable draft lands on: the wallet (SOL) or its associated
    token account (SPL), as listed by receiver; the listener subscribes to them
    (chainwatch/push_solana.py). A paid draft's second payment, only reported, waits for a pass."""
    watched = watched_receivers(network=network, reportable=False)
    return _listing_addresses(SolanaClient(url), network, _receivers(network, watched))


def _first_reference(tx: dict[str, Any], by_reference: dict[str, WatchTarget]) -> WatchTarget | None:
    for key in _account_keys(tx):
        if key in by_reference:
            return by_reference[key]
    return None


def _references_in(network: str, txs: list[dict[str, Any]]) -> dict[str, WatchTarget]:
    """The drafts whose reference is an account of one of `txs`, by reference: read for the
    transactions in hand, never the whole list of watched drafts."""
    keys = {key for tx in txs for key in _account_keys(tx)}
    return {t.solana_reference: t for t in reference_targets(network=network, keys=keys) if t.solana_reference}


def _transfer(network: str, found: _Found) -> TransferData | None:
    target = found.target
    mint = "" if target.currency == Currency.SOL else _mint(network, target)
    amount = received_base_units(found.tx, receiver=target.receiver_address or "", mint=mint or None)
    if amount <= 0:
        return None
    return TransferData(
        network=network,
        txid=found.signature,
        index=WHOLE_TX_INDEX,
        currency=target.currency,
        token_address=mint,
        receiver_address=target.receiver_address or "",
        amount_base_units=amount,
        block_height=found.slot,
        block_hash="",
        block_time=_moment(found.block_time),
        finalized=found.finalized,
        solana_reference=target.solana_reference or "",
    )


def _moment(block_time: Any) -> datetime | None:
    """A `blockTime` as a time: matching reads it, so a payment made before a draft was created
    never pays it however late a pass reads it (docs/decisions.md)."""
    return datetime.fromtimestamp(int(block_time), UTC) if block_time else None


def _stored(transfer: ObservedTransfer, *, slot: int, finalized: bool) -> TransferData:
    return TransferData(
        network=transfer.network,
        txid=transfer.txid,
        index=transfer.index,
        currency=transfer.currency,
        token_address=transfer.token_address,
        receiver_address=transfer.receiver_address,
        amount_base_units=transfer.amount_base_units,
        block_height=slot,
        block_time=transfer.block_time,
        finalized=finalized,
        solana_reference=transfer.solana_reference,
    )


def choose_mode(*, receivers: int, cursor: int | None, slot: int) -> str:
    """By receiver costs a listing per receiver; by block a getBlock per new slot (plus one
    getBlocks). The first pass has no slot range to scan, so it lists."""
    if cursor is None or receivers <= slot - cursor + 1:
        return BY_RECEIVER
    return BY_BLOCK


def solana_pass(network: str, url: str) -> PassReport:
    client = SolanaClient(url)
    cursor = services.cursor_get(network=network, family=SOLANA, backend="solana-jsonrpc")
    slot = client.slot(network)
    # Receivers are read after the slot: a draft created later is paid in a later slot. Every
    # Solana draft has its reference; the drafts of the transactions found are read by it.
    receivers = _receivers(network, watched_receivers(network=network))
    mode = choose_mode(receivers=len(receivers), cursor=cursor.height, slot=slot)
    report = PassReport(network=network, family=SOLANA, head=slot, start=cursor.height, end=slot)
    report.notes.append(f"by {mode}")

    if mode == BY_RECEIVER:
        addresses = _listing_addresses(client, network, receivers)
        found, listed, end = _by_receiver(client, network, addresses, cursor.height, slot)
    else:
        assert cursor.height is not None  # by block only once a slot range exists (choose_mode)
        end = min(slot, cursor.height + settings.CHAINWATCH_BLOCKS_PER_PASS)
        found, listed = _by_block(client, network, cursor.height + 1, end), {}

    transfers = [t for t in (_transfer(network, f) for f in found) if t is not None]
    recorded = {t.txid for t in transfers}
    known = ObservedTransfer.objects.filter(network=network, index=WHOLE_TX_INDEX).exclude(txid__in=recorded)
    # Already stored and listed again: the listing tells its commitment (and that it is back).
    for transfer in known.filter(txid__in=list(listed)):
        entry = listed[transfer.txid]
        transfers.append(
            _stored(transfer, slot=int(entry["slot"]), finalized=entry.get("confirmationStatus") == "finalized")
        )
        recorded.add(transfer.txid)
    services.transfers_record(transfers=transfers)

    # Stored, not final, and no listing spoke of it this pass: ask the cluster.
    pending = list(known.filter(finalized=False, orphaned=False).exclude(txid__in=recorded))
    gone: list[tuple[str, int]] = []
    settled: list[TransferData] = []
    if pending:
        for transfer, status in zip(pending, client.statuses([t.txid for t in pending]), strict=True):
            if status is None or status.get("err") is not None:
                gone.append((transfer.txid, transfer.index))
            elif status.get("confirmationStatus") == "finalized":
                settled.append(_stored(transfer, slot=int(status["slot"]), finalized=True))
    services.transfers_record(transfers=settled)
    services.transfers_orphan(network=network, keys=gone)
    services.cursor_progress(network=network, family=SOLANA, head=slot, height=end)
    report.end, report.transfers = end, len(transfers)
    return report


def _by_receiver(
    client: SolanaClient,
    network: str,
    addresses: list[str],
    cursor: int | None,
    slot: int,
) -> tuple[list[_Found], dict[str, dict[str, Any]], int]:
    """List each address back to the cursor (less a margin that covers finality and drafts
    created during the last pass), fetch the signatures not inspected before, oldest first."""
    stop = cursor - settings.CHAINWATCH_SOLANA_RELIST_SLOTS if cursor is not None else None
    limit = settings.CHAINWATCH_SOLANA_SIGNATURES_PER_CALL
    listed: dict[str, dict[str, Any]] = {}
    asking: list[tuple[str, str | None]] = [(a, None) for a in addresses]
    while asking:
        again = []
        for (address, _), page in zip(asking, client.signatures(asking), strict=True):
            for entry in page:
                if stop is None or int(entry["slot"]) > stop:
                    listed.setdefault(entry["signature"], entry)
            # The first pass reads one page per address; later ones page back to the cursor.
            if stop is not None and len(page) >= limit and int(page[-1]["slot"]) > stop:
                again.append((address, page[-1]["signature"]))
        asking = again

    inspected_key = f"chainwatch:solana-inspected:{network}"
    inspected: set[str] = cache.get(inspected_key) or set()
    stored = set(ObservedTransfer.objects.filter(network=network, txid__in=list(listed)).values_list("txid", flat=True))
    fresh = sorted(
        (e for s, e in listed.items() if s not in stored and s not in inspected and e.get("err") is None),
        key=lambda e: int(e["slot"]),
    )
    end = slot
    cap = settings.CHAINWATCH_SOLANA_TRANSACTIONS_PER_PASS
    if len(fresh) > cap:
        # Oldest first; the rest (and their slots) are left to the next pass.
        end = int(fresh[cap]["slot"]) - 1
        fresh = fresh[:cap]
    found = []
    fetched = list(zip(fresh, client.transactions([e["signature"] for e in fresh]), strict=True))
    paid = [(entry, tx) for entry, tx in fetched if tx and (tx.get("meta") or {}).get("err") is None]
    by_reference = _references_in(network, [tx for _, tx in paid])
    for entry, tx in paid:
        target = _first_reference(tx, by_reference)
        if target is not None:
            finalized = entry.get("confirmationStatus") == "finalized"
            block_time = tx.get("blockTime") or entry.get("blockTime")
            found.append(_Found(target, entry["signature"], int(entry["slot"]), tx, finalized, block_time))
    matched = {f.signature for f in found}
    # Remember what paid nothing, as long as the listings still show it (the margin re-lists).
    cache.set(inspected_key, (inspected & set(listed)) | {e["signature"] for e in fresh} - matched, timeout=86400)
    return found, {s: e for s, e in listed.items() if s in stored}, end


def _by_block(client: SolanaClient, network: str, start: int, end: int) -> list[_Found]:
    if end < start:
        return []
    slots = client.produced_slots(start, end)
    succeeded = [
        (slot, block, tx)
        for slot, block in zip(slots, client.blocks(slots), strict=True)
        if block is not None  # None: skipped meanwhile (answered with an error), nothing to read
        for tx in block.get("transactions") or []
        if (tx.get("meta") or {}).get("err") is None
    ]
    by_reference = _references_in(network, [tx for _, _, tx in succeeded])
    found = []
    for slot, block, tx in succeeded:
        target = _first_reference(tx, by_reference)
        if target is not None:
            signature = tx["transaction"]["signatures"][0]
            found.append(_Found(target, signature, slot, tx, finalized=False, block_time=block.get("blockTime")))
    return found
