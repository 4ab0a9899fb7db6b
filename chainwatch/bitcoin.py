"""Bitcoin (Mainnet, Testnet) through Bitcoin Core JSON-RPC or an Esplora REST server.

Core: one getblock (verbosity 2) per block, whatever the number of open drafts, plus the
mempool (getrawmempool, then getrawtransaction for txids not inspected before).
Esplora has no "outputs to these addresses" query over a block range, so it polls each
watched address (/address/:addr/txs, paged back to the cursor), rate-limited.
Values: Core reports BTC as JSON numbers, parsed as Decimal and converted exactly to sats.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.cache import cache

from chainwatch import services
from chainwatch.models import ObservedTransfer
from chainwatch.networks import BITCOIN, bitcoin_source, endpoints
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, Http, JsonRpc, parse_json
from chainwatch.watcher import PassReport, ScanResult, _check_reorg, block_pass
from drafts.selectors import WatchTarget, watch_targets
from payments.enums import Currency, Method, Network

SATS_PER_BTC = 10**8
# getblockchaininfo "chain" per network (Testnet is testnet4).
CORE_CHAINS = {Network.MAINNET: "main", Network.TESTNET: "testnet4"}


def btc_to_sats(value: Decimal | int) -> int:
    sats = Decimal(value) * SATS_PER_BTC
    if sats != sats.to_integral_value():
        raise ChainError(f"{value} BTC is not a whole number of sats")
    return int(sats)


def watched_addresses(targets: list[WatchTarget]) -> set[str]:
    return {
        t.receiver_address
        for t in targets
        if t.receiver_address and t.currency == Currency.BTC and t.method != Method.LIGHTNING
    }


def _core_address(vout: dict) -> str | None:
    spk = vout.get("scriptPubKey") or {}
    if spk.get("address"):
        return spk["address"]
    addresses = spk.get("addresses") or []  # Bitcoin Core before 22.0
    return addresses[0] if len(addresses) == 1 else None


def core_transfers(
    network: str, tx: dict, addresses: set[str], *, height: int | None, block_hash: str
) -> list[TransferData]:
    outputs: dict[str, int] = {}
    for vout in tx.get("vout", []):
        address = _core_address(vout)
        if address:
            outputs[address] = outputs.get(address, 0) + btc_to_sats(vout["value"])
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

    def blocks_per_pass(self, targets: list[WatchTarget]) -> int:
        return settings.CHAINWATCH_BLOCKS_PER_PASS

    def scan(self, start: int, end: int, targets: list[WatchTarget]) -> ScanResult:
        addresses = watched_addresses(targets)
        hashes = self.block_hashes(list(range(start, end + 1)))
        transfers: list[TransferData] = []
        for height in range(start, end + 1):
            block_hash = hashes[height]
            if not block_hash:
                raise ChainError(f"{self.network}: no block at height {height}")
            if not addresses:
                continue  # nothing to look for: the hashes alone move the cursor
            block = self.rpc.call("getblock", [block_hash, 2])
            for tx in block["tx"]:
                transfers += core_transfers(self.network, tx, addresses, height=height, block_hash=block_hash)
        return ScanResult(blocks=hashes, transfers=transfers, end_hash=hashes[end])


class CoreMempool:
    """Unconfirmed payments from Bitcoin Core's mempool."""

    def __init__(self, source: CoreSource) -> None:
        self.source = source
        self.network = source.network
        self.cache_key = f"chainwatch:mempool-inspected:{self.network}"

    def snapshot(self) -> set[str]:
        return set(self.source.rpc.call("getrawmempool"))

    def record(self, snapshot: set[str], targets: list[WatchTarget], *, caught_up: bool) -> None:
        addresses = watched_addresses(targets)
        inspected: set[str] = cache.get(self.cache_key) or set()
        new = sorted(snapshot - inspected)[: settings.CHAINWATCH_MEMPOOL_TXS_PER_PASS]
        transfers: list[TransferData] = []
        if addresses and new:
            txs = self.source.rpc.batch([("getrawtransaction", [txid, True]) for txid in new], allow_errors=True)
            for tx in txs:
                if tx:  # None: it left the mempool meanwhile
                    transfers += core_transfers(self.network, tx, addresses, height=None, block_hash="")
        cache.set(self.cache_key, (inspected & snapshot) | set(new), timeout=86400)
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

    def tx_status(self, txid: str) -> dict | None:
        """{confirmed, block_height, block_hash}, or None when the server no longer knows the tx."""
        response = self.http.request("GET", f"/tx/{txid}/status")
        if response.status_code == 404:
            return None
        if response.status_code >= 400:
            raise ChainError(f"/tx/{txid}/status answered {response.status_code}")
        return parse_json(response.text)

    def address_txs(self, address: str, *, since_height: int) -> list[dict]:
        """Mempool and confirmed transactions of `address`, paged back to `since_height`."""
        txs = self.http.get_json(f"/address/{address}/txs")
        page = [tx for tx in txs if tx["status"]["confirmed"]]
        pages = 1
        while len(page) >= 25 and pages < settings.CHAINWATCH_ESPLORA_PAGES_PER_ADDRESS:
            if page[-1]["status"]["block_height"] < since_height:
                break
            page = self.http.get_json(f"/address/{address}/txs/chain/{page[-1]['txid']}")
            txs += page
            pages += 1
        return txs


def esplora_transfers(network: str, tx: dict, addresses: set[str]) -> list[TransferData]:
    status = tx.get("status") or {}
    height = status.get("block_height") if status.get("confirmed") else None
    block_hash = status.get("block_hash") or "" if height is not None else ""
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


def esplora_pass(network: str, url: str) -> PassReport:
    client = EsploraClient(url)
    cursor = services.cursor_get(network=network, family=BITCOIN, backend="esplora")
    targets = watch_targets(network=network)
    tip = client.tip_height()
    if cursor.height is None:
        cursor = services.cursor_start(
            network=network, family=BITCOIN, height=tip, block_hash=client.block_hash(tip) or ""
        )
    report = PassReport(network=network, family=BITCOIN, head=tip, start=cursor.height, end=cursor.height)

    fork = _check_reorg(network, BITCOIN, _EsploraHashes(client), cursor.height)
    if fork is not None:
        services.chain_rewind(network=network, family=BITCOIN, expected_height=cursor.height, fork_height=fork)
        report.reorged_to = fork
        cursor.height = fork

    addresses = watched_addresses(targets)
    since = cursor.height - settings.CHAINWATCH_REORG_DEPTH
    transfers: list[TransferData] = []
    for address in sorted(addresses):
        for tx in client.address_txs(address, since_height=since):
            transfers += esplora_transfers(network, tx, addresses)
    listed = {(t.txid, t.index) for t in transfers}
    blocks = {t.block_height: t.block_hash for t in transfers if t.block_height is not None}
    tip_hash = client.block_hash(tip) or ""
    services.blocks_record(
        network=network,
        family=BITCOIN,
        expected_height=cursor.height,
        new_height=tip,
        new_hash=tip_hash,
        blocks=blocks,
        transfers=transfers,
        head=tip,
    )
    # An unconfirmed payment to a polled address that its listing no longer shows: ask the
    # server about the transaction itself; unknown means dropped or replaced.
    missing = [
        (txid, index)
        for txid, index, receiver in ObservedTransfer.objects.filter(
            network=network, block_height__isnull=True, orphaned=False, index__gte=0
        ).values_list("txid", "index", "receiver_address")
        if receiver in addresses and (txid, index) not in listed
    ]
    gone = [(txid, index) for txid, index in missing if client.tx_status(txid) is None]
    services.transfers_orphan(network=network, keys=gone)
    report.end, report.transfers = tip, len(transfers)
    return report


def bitcoin_pass(network: str) -> PassReport:
    ends = endpoints(network)
    if bitcoin_source(network) == "core":
        source = CoreSource(network, ends.bitcoin_rpc_url)
        return block_pass(network, source, mempool=CoreMempool(source))
    return esplora_pass(network, ends.esplora_url)
