"""Bitcoin (Mainnet, Testnet) through Bitcoin Core JSON-RPC or an Esplora REST server.

Core: one getblock (verbosity 2) per block, whatever the number of open drafts, plus the
mempool (getrawmempool, then getrawtransaction for txids not inspected before).
Esplora has no "outputs to these addresses" query over a block range. Each pass takes the
cheaper of two ways (docs/decisions.md, Chain watching): poll each watched address
(/address/:addr/txs, paged back to the cursor; mempool included), or read the new blocks'
transactions 25 to a page (/blocks/:height lists ten blocks with their tx counts, then
/block/:hash/txs/:start) plus the mempool's new transactions (/mempool/txids, /tx/:txid).
Values: Core reports BTC as JSON numbers, parsed as Decimal and converted exactly to sats.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache

from chainwatch import services
from chainwatch.models import Cursor, ObservedTransfer
from chainwatch.networks import BITCOIN, Endpoints, bitcoin_source, endpoints
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, Http, JsonRpc, parse_json
from chainwatch.watcher import PassReport, ScanResult, _check_reorg, block_pass
from drafts.selectors import WatchedReceiver, watched_receivers
from payments.enums import Currency, Network

SATS_PER_BTC = 10**8
# getblockchaininfo "chain" per network (Testnet is testnet4).
CORE_CHAINS: dict[str, str] = {
    Network.MAINNET: "main",
    Network.TESTNET: "testnet4",
    Network.SIGNET: "signet",
    Network.REGTEST: "regtest",
}


def btc_to_sats(value: Decimal | int) -> int:
    sats = Decimal(value) * SATS_PER_BTC
    if sats != sats.to_integral_value():
        raise ChainError(f"{value} BTC is not a whole number of sats")
    return int(sats)


def watched_addresses(watched: list[WatchedReceiver]) -> set[str]:
    return {t.receiver_address for t in watched if t.currency == Currency.BTC}


def _core_address(vout: dict[str, Any]) -> str | None:
    spk = vout.get("scriptPubKey") or {}
    if spk.get("address"):
        return str(spk["address"])
    addresses = spk.get("addresses") or []  # Bitcoin Core before 22.0
    return addresses[0] if len(addresses) == 1 else None


def core_transfers(
    network: str,
    tx: dict[str, Any],
    addresses: set[str],
    *,
    height: int | None,
    block_hash: str,
    block_time: datetime | None = None,
    seen_at: datetime | None = None,
) -> list[TransferData]:
    outputs: dict[str, int] = {}
    for vout in tx.get("vout", []):
        address = _core_address(vout)
        if address:
            outputs[address] = outputs.get(address, 0) + btc_to_sats(vout["value"])
    coinbase = bool(tx.get("vin")) and "coinbase" in tx["vin"][0]
    found = []
    for vout in tx.get("vout", []):
        address = _core_address(vout)
        if address in addresses:
            found.append(
                TransferData(
                    network=network,
                    txid=tx["txid"],
                    index=int(vout["n"]),
                    currency=Currency.BTC,
                    receiver_address=address,
                    amount_base_units=btc_to_sats(vout["value"]),
                    block_height=height,
                    block_hash=block_hash,
                    block_time=block_time,
                    seen_at=seen_at,
                    coinbase=coinbase,
                    tx_outputs=outputs,
                )
            )
    return found


class CoreSource:
    family = BITCOIN
    backend = "bitcoin-core"

    def __init__(self, network: str, url: str) -> None:
        self.network = network
        self.rpc = JsonRpc(url, jsonrpc="1.0")

    @property
    def calls(self) -> int:
        return self.rpc.calls

    def head(self) -> int:
        """getblockchaininfo gives the height and the chain in one call; refuse a node of another chain."""
        info = self.rpc.call("getblockchaininfo")
        expected = CORE_CHAINS[self.network]
        if info["chain"] != expected:
            raise ChainError(f"{self.network} expects Bitcoin Core chain {expected!r}, got {info['chain']!r}")
        return int(info["blocks"])

    def block_hashes(self, heights: list[int]) -> dict[int, str | None]:
        results = self.rpc.batch([("getblockhash", [h]) for h in heights], allow_errors=True)
        return dict(zip(heights, results, strict=True))

    def blocks_per_pass(self, watched: list[WatchedReceiver]) -> int:
        return settings.CHAINWATCH_BLOCKS_PER_PASS

    def scan(self, start: int, end: int, watched: list[WatchedReceiver]) -> ScanResult:
        addresses = watched_addresses(watched)
        hashes = self.block_hashes(list(range(start, end + 1)))
        in_mempool_since = mempool_first_seen(self.network)
        blocks: dict[int, str] = {}
        transfers: list[TransferData] = []
        for height in range(start, end + 1):
            block_hash = hashes[height]
            if not block_hash:
                raise ChainError(f"{self.network}: no block at height {height}")
            blocks[height] = block_hash
            if not addresses:
                continue  # nothing to look for: the hashes alone move the cursor
            block = self.rpc.call("getblock", [block_hash, 2])
            block_time = datetime.fromtimestamp(int(block["time"]), UTC) if block.get("time") else None
            for tx in block["tx"]:
                transfers += core_transfers(
                    self.network,
                    tx,
                    addresses,
                    height=height,
                    block_hash=block_hash,
                    block_time=block_time,
                    seen_at=_moment(in_mempool_since.get(tx["txid"])),
                )
        return ScanResult(blocks=blocks, transfers=transfers, end_hash=blocks[end])


MEMPOOL_KEY = "chainwatch:mempool-first-seen:{}"  # per network


def mempool_first_seen(network: str) -> dict[str, float]:
    """txid -> when this watcher first saw it in the node's mempool (Unix time), for every
    transaction of the last mempool snapshot, whoever it pays: a transaction sent before a draft
    existed (to the address the draft gets later) keeps that time when it is found in a block."""
    seen = cache.get(MEMPOOL_KEY.format(network))
    return seen if isinstance(seen, dict) else {}


def _moment(unix: float | None) -> datetime | None:
    return datetime.fromtimestamp(unix, UTC) if unix is not None else None


# getmempoolentry's `time` is whole seconds of the node's clock: a transaction entered in the
# second a draft was made (or on a node whose clock runs a little ahead) is not taken as earlier.
NODE_TIME_SLACK = timedelta(seconds=3)


class CoreMempool:
    """Unconfirmed payments from Bitcoin Core's mempool."""

    def __init__(self, source: CoreSource) -> None:
        self.source = source
        self.network = source.network
        self.cache_key = MEMPOOL_KEY.format(self.network)

    def snapshot(self) -> set[str]:
        return set(self.source.rpc.call("getrawmempool"))

    def record(self, snapshot: set[str], watched: list[WatchedReceiver], *, caught_up: bool) -> None:
        addresses = watched_addresses(watched)
        now = time.time()
        inspected = mempool_first_seen(self.network)
        new = sorted(snapshot - inspected.keys())[: settings.CHAINWATCH_MEMPOOL_TXS_PER_PASS]
        transfers: list[TransferData] = []
        if addresses and new:
            txs = self.source.rpc.batch([("getrawtransaction", [txid, True]) for txid in new], allow_errors=True)
            for tx in txs:
                if tx:  # None: it left the mempool meanwhile
                    transfers += core_transfers(self.network, tx, addresses, height=None, block_hash="")
        if transfers:
            # When the node took each paying transaction into its mempool (it may predate this pass).
            txids = sorted({t.txid for t in transfers})
            entries = self.source.rpc.batch([("getmempoolentry", [txid]) for txid in txids], allow_errors=True)
            entered = {
                txid: datetime.fromtimestamp(int(entry["time"]), UTC) + NODE_TIME_SLACK
                for txid, entry in zip(txids, entries, strict=True)
                if entry and entry.get("time")
            }
            for transfer in transfers:
                transfer.seen_at = entered.get(transfer.txid)
        kept = {txid: at for txid, at in inspected.items() if txid in snapshot}
        cache.set(self.cache_key, kept | dict.fromkeys(new, now), timeout=86400)
        if transfers:
            services.transfers_record(transfers=transfers)
        if caught_up:
            # Not in a block up to the head and not in a mempool snapshot taken before the head
            # was read: dropped or replaced (RBF).
            gone = [
                (txid, index)
                for txid, index in ObservedTransfer.objects.filter(
                    network=self.network, block_height__isnull=True, orphaned=False, index__gte=0
                ).values_list("txid", "index")
                if txid not in snapshot
            ]
            services.transfers_orphan(network=self.network, keys=gone)


class EsploraClient:
    def __init__(self, url: str) -> None:
        self.http = Http(url)

    @property
    def calls(self) -> int:
        return self.http.calls

    def tip_height(self) -> int:
        return int(self.http.get_text("/blocks/tip/height").strip())

    def block_hash(self, height: int) -> str | None:
        response = self.http.request("GET", f"/block-height/{height}")
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise ChainError(f"/block-height/{height} answered {response.status_code}")
        return response.text.strip()

    def tx_status(self, txid: str) -> dict[str, Any] | None:
        """{confirmed, block_height, block_hash}, or None when the server no longer knows the tx."""
        response = self.http.request("GET", f"/tx/{txid}/status")
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise ChainError(f"/tx/{txid}/status answered {response.status_code}")
        status: dict[str, Any] | None = parse_json(response.text)
        return status

    def blocks_down_from(self, height: int) -> list[dict[str, Any]]:
        """Up to ten blocks (id, height, tx_count, previousblockhash, ...) from `height` down."""
        blocks: list[dict[str, Any]] = self.http.get_json(f"/blocks/{height}")
        return blocks

    def block_txs(self, block_hash: str, start: int) -> list[dict[str, Any]]:
        txs: list[dict[str, Any]] = self.http.get_json(f"/block/{block_hash}/txs/{start}")
        return txs

    def mempool_txids(self) -> list[str]:
        txids: list[str] = self.http.get_json("/mempool/txids")
        return txids

    def tx(self, txid: str) -> dict[str, Any] | None:
        response = self.http.request("GET", f"/tx/{txid}")
        if response.status_code == 404:
            return None  # left the mempool meanwhile
        if response.status_code >= 400:
            raise ChainError(f"/tx/{txid} answered {response.status_code}")
        tx: dict[str, Any] | None = parse_json(response.text)
        return tx

    def address_txs(self, address: str, *, since_height: int) -> list[dict[str, Any]]:
        """Mempool and confirmed transactions of `address`, paged back to `since_height`."""
        txs: list[dict[str, Any]] = self.http.get_json(f"/address/{address}/txs")
        page = [tx for tx in txs if tx["status"]["confirmed"]]
        pages = 1
        while len(page) >= 25 and pages < settings.CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS:
            if page[-1]["status"]["block_height"] < since_height:
                break
            page = self.http.get_json(f"/address/{address}/txs/chain/{page[-1]['txid']}")
            txs += page
            pages += 1
        return txs


def esplora_transfers(network: str, tx: dict[str, Any], addresses: set[str]) -> list[TransferData]:
    status = tx.get("status") or {}
    height = status.get("block_height") if status.get("confirmed") else None
    block_hash = status.get("block_hash") or "" if height is not None else ""
    # Esplora gives a mempool transaction no entry time: until its block says when it was made,
    # it counts as made when this watcher first saw it (ObservedTransfer.first_seen_at).
    block_time = _moment(status.get("block_time") or None) if height is not None else None
    outputs: dict[str, int] = {}
    for vout in tx["vout"]:
        if vout.get("scriptpubkey_address"):
            address = vout["scriptpubkey_address"]
            outputs[address] = outputs.get(address, 0) + int(vout["value"])
    return [
        TransferData(
            network=network,
            txid=tx["txid"],
            index=n,
            currency=Currency.BTC,
            receiver_address=vout["scriptpubkey_address"],
            amount_base_units=int(vout["value"]),
            block_height=height,
            block_hash=block_hash,
            block_time=block_time,
            tx_outputs=outputs,
        )
        for n, vout in enumerate(tx["vout"])
        if vout.get("scriptpubkey_address") in addresses
    ]


class _EsploraHashes:
    def __init__(self, client: EsploraClient) -> None:
        self.client = client

    def block_hashes(self, heights: list[int]) -> dict[int, str | None]:
        return {h: self.client.block_hash(h) for h in heights}


ESPLORA_TXS_PER_PAGE = 25
ESPLORA_BLOCKS_PER_LISTING = 10


@dataclass
class BlockPlan:
    """What reading blocks would take this pass, learnt from the cheap listings."""

    end: int
    blocks: list[dict[str, Any]]  # ascending by height, from the cursor's next block to `end`
    mempool: set[str]
    new_txids: list[str]

    @property
    def cost(self) -> int:
        pages = sum(-(-int(b["tx_count"]) // ESPLORA_TXS_PER_PAGE) for b in self.blocks)
        return pages + len(self.new_txids)


INSPECTED_KEY = "chainwatch:esplora-mempool-inspected:{}"  # per network


def esplora_block_plan(
    client: EsploraClient, network: str, *, addresses: int, height: int, tip: int
) -> BlockPlan | None:
    """A BlockPlan when reading blocks costs fewer requests than polling `addresses` addresses,
    else None. The listings it needs are asked only when no cheaper bound already decides."""
    end = min(tip, height + settings.CHAINWATCH_BLOCKS_PER_PASS)
    count = end - height
    # Every block has a coinbase, so at least one page each; the mempool listing is one more.
    if addresses <= -(-count // ESPLORA_BLOCKS_PER_LISTING) + count + 1:
        return None
    blocks: dict[int, dict[str, Any]] = {}
    top = end
    while top > height:
        for block in client.blocks_down_from(top):
            if height < int(block["height"]) <= end:
                blocks[int(block["height"])] = block
        top -= ESPLORA_BLOCKS_PER_LISTING
    if sorted(blocks) != list(range(height + 1, end + 1)):
        raise ChainError(f"/blocks did not list every block from {height + 1} to {end}")
    mempool = set(client.mempool_txids())
    inspected: set[str] = cache.get(INSPECTED_KEY.format(network)) or set()
    new = sorted(mempool - inspected)[: settings.CHAINWATCH_MEMPOOL_TXS_PER_PASS]
    plan = BlockPlan(end=end, blocks=[blocks[h] for h in sorted(blocks)], mempool=mempool, new_txids=new)
    if addresses <= plan.cost:
        # Polling the addresses sees their mempool transactions too: this snapshot is covered.
        cache.set(INSPECTED_KEY.format(network), mempool, timeout=86400)
        return None
    return plan


def esplora_pass(network: str, url: str) -> PassReport:
    client = EsploraClient(url)
    cursor = services.cursor_get(network=network, family=BITCOIN, backend="esplora")
    tip = client.tip_height()
    # Receivers are read after the tip: a draft created later is paid in a later block.
    watched = watched_receivers(network=network)
    if cursor.height is None:
        cursor = services.cursor_start(
            network=network, family=BITCOIN, height=tip, block_hash=client.block_hash(tip) or ""
        )
    assert cursor.height is not None  # started above
    report = PassReport(network=network, family=BITCOIN, head=tip, start=cursor.height, end=cursor.height)

    fork = _check_reorg(network, BITCOIN, _EsploraHashes(client), cursor.height)
    if fork is not None:
        services.chain_rewind(network=network, family=BITCOIN, expected_height=cursor.height, fork_height=fork)
        report.reorged_to = fork
        cursor = services.cursor_get(network=network, family=BITCOIN)

    height = cursor.height
    assert height is not None  # started above (a rewind keeps it started)
    addresses = watched_addresses(watched)
    plan = esplora_block_plan(client, network, addresses=len(addresses), height=height, tip=tip)
    if plan is None:
        report.notes.append("by address")
        listed, end = _esplora_by_address(client, network, addresses, height, tip)
    else:
        report.notes.append("by block")
        listed, end = _esplora_by_block(client, network, addresses, cursor, plan, tip=tip)
    report.end, report.transfers = end, len(listed)

    # An unconfirmed payment that this pass did not see again: ask the server about the
    # transaction itself; unknown means dropped or replaced.
    missing = [
        (txid, index)
        for txid, index, receiver in ObservedTransfer.objects.filter(
            network=network, block_height__isnull=True, orphaned=False, index__gte=0
        ).values_list("txid", "index", "receiver_address")
        if (plan is not None or receiver in addresses) and (txid, index) not in listed
    ]
    gone = [(txid, index) for txid, index in missing if client.tx_status(txid) is None]
    services.transfers_orphan(network=network, keys=gone)
    return report


def _esplora_by_address(
    client: EsploraClient, network: str, addresses: set[str], height: int, tip: int
) -> tuple[set[tuple[str, int]], int]:
    since = height - settings.CHAINWATCH_REORG_DEPTH
    transfers: list[TransferData] = []
    for address in sorted(addresses):
        for tx in client.address_txs(address, since_height=since):
            transfers += esplora_transfers(network, tx, addresses)
    blocks = {t.block_height: t.block_hash for t in transfers if t.block_height is not None}
    tip_hash = client.block_hash(tip) or ""
    services.blocks_record(
        network=network,
        family=BITCOIN,
        expected_height=height,
        new_height=tip,
        new_hash=tip_hash,
        blocks=blocks,
        transfers=transfers,
        head=tip,
    )
    return {(t.txid, t.index) for t in transfers}, tip


def _esplora_by_block(
    client: EsploraClient, network: str, addresses: set[str], cursor: Cursor, plan: BlockPlan, *, tip: int
) -> tuple[set[tuple[str, int]], int]:
    transfers: list[TransferData] = []
    hashes: dict[int, str] = {}
    previous = cursor.block_hash
    for block in plan.blocks:
        if previous and block.get("previousblockhash") != previous:
            raise ChainError(f"block {block['height']} does not build on the block before it; the chain moved")
        previous = block["id"]
        hashes[int(block["height"])] = block["id"]
        for start in range(0, int(block["tx_count"]), ESPLORA_TXS_PER_PAGE):
            for tx in client.block_txs(block["id"], start):
                transfers += esplora_transfers(network, tx, addresses)
    end_hash = hashes.get(plan.end, cursor.block_hash)
    assert cursor.height is not None  # a started cursor: the pass started it first
    services.blocks_record(
        network=network,
        family=BITCOIN,
        expected_height=cursor.height,
        new_height=plan.end,
        new_hash=end_hash,
        blocks=hashes,
        transfers=transfers,
        head=tip,
    )
    unconfirmed: list[TransferData] = []
    for txid in plan.new_txids:
        found = client.tx(txid)
        if found is not None and not (found.get("status") or {}).get("confirmed"):
            unconfirmed += esplora_transfers(network, found, addresses)
    inspected: set[str] = cache.get(INSPECTED_KEY.format(network)) or set()
    cache.set(INSPECTED_KEY.format(network), (inspected & plan.mempool) | set(plan.new_txids), timeout=86400)
    services.transfers_record(transfers=unconfirmed)
    return {(t.txid, t.index) for t in transfers + unconfirmed} | {
        (txid, index)
        for txid, index in ObservedTransfer.objects.filter(
            network=network, txid__in=list(plan.mempool), block_height__isnull=True
        ).values_list("txid", "index")
    }, plan.end


def bitcoin_pass(network: str, ends: Endpoints | None = None) -> PassReport:
    ends = ends or endpoints(network)
    if bitcoin_source(network) == "core":
        source = CoreSource(network, ends.bitcoin_rpc_url)
        return block_pass(network, source, mempool=CoreMempool(source))
    return esplora_pass(network, ends.esplora_url)
