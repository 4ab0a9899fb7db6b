"""EVM chains (Ethereum, Base and their test networks) through web3.py over JSON-RPC.

ERC-20 payments come from Transfer logs of the watched token contracts, read one of two
ways, whichever takes fewer eth_getLogs calls for the pass's range: filtered by receiver
topic (one call per block range and chunk of receivers), or every Transfer of each
contract over shorter ranges, the receivers picked here. A steady-state pass is one call
whatever the number of open drafts. Native ETH needs the block's transactions:
one eth_getBlockByNumber per block, only while some native-ETH draft is watched, plus the
node's traces for ETH moved by contracts' internal calls when it offers them
(chainwatch/traces.py). Our ETH base unit is gwei; a wei value converts exactly or not at all.
The head is read with the node's `finalized` block, which decides when a payment is final.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, cast

from django.conf import settings
from web3 import Web3
from web3.providers.rpc import HTTPProvider
from web3.types import BlockData, HexStr, RPCEndpoint, RPCResponse, TxData, TxReceipt

from chainwatch import services, traces
from chainwatch.models import INTERNAL_CALL_INDEX, NATIVE_INDEX
from chainwatch.networks import EVM, chain_id_of, token_addresses
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, RateLimiter
from chainwatch.watcher import ScanResult
from drafts.selectors import WatchedReceiver
from payments.enums import Currency

TRANSFER_TOPIC = "0x" + Web3.keccak(text="Transfer(address,address,uint256)").hex().removeprefix("0x")
WEI_PER_GWEI = 10**9
MAX_BASE_UNITS = 2**63 - 1  # drafts and transfers store base units as BIGINT


class CountingProvider(HTTPProvider):
    """HTTPProvider that counts requests (the benchmark reads it) and keeps to a rate."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0
        self.limiter = RateLimiter(settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND)

    def make_request(self, method: RPCEndpoint, params: Any) -> RPCResponse:
        self.limiter.wait()
        self.calls += 1
        return super().make_request(method, params)

    def make_batch_request(self, requests: Any) -> Any:  # web3's own: the node's answers, in order
        self.limiter.wait()
        self.calls += 1
        return super().make_batch_request(requests)


def _hex(value: Any) -> str:
    text = value.hex() if hasattr(value, "hex") and not isinstance(value, str) else str(value)
    return text if text.startswith("0x") else "0x" + text


def address_topic(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def topic_address(topic: Any) -> str:
    return "0x" + _hex(topic)[-40:]


def _int(value: Any) -> int:
    return value if isinstance(value, int) else int(str(value), 16)


def wei_to_gwei(wei: int) -> tuple[int, bool]:
    """(gwei, exact): exact only when the wei value is a whole number of gwei."""
    return wei // WEI_PER_GWEI, wei % WEI_PER_GWEI == 0


def token_targets(network: str, watched: list[WatchedReceiver]) -> tuple[dict[str, str], set[str]]:
    """({token contract (lower) -> currency}, receivers (lower)) for the watched token drafts."""
    registry = {addr.lower(): cur for cur, addr in token_addresses(network).items()}
    contracts: dict[str, str] = {}
    receivers: set[str] = set()
    for t in watched:
        if t.currency == Currency.ETH:
            continue
        contract = (t.token_address or token_addresses(network).get(t.currency) or "").lower()
        if not contract:
            continue
        contracts[contract] = registry.get(contract, t.currency)
        receivers.add(t.receiver_address.lower())
    return contracts, receivers


def transfer_log_filter(network: str, watched: list[WatchedReceiver], max_receivers: int) -> dict[str, Any] | None:
    """The `eth_subscribe` `logs` filter for Transfers to the watched token drafts' receivers
    (topic0 Transfer, topic2 the receiver), or None when no token draft is watched or more
    than `max_receivers` receivers are (a node may refuse a long topic list)."""
    contracts, receivers = token_targets(network, watched)
    if not contracts or not receivers or len(receivers) > max_receivers:
        return None
    return {
        "address": [Web3.to_checksum_address(c) for c in sorted(contracts)],
        "topics": [TRANSFER_TOPIC, None, [address_topic(r) for r in sorted(receivers)]],
    }


class EvmSource:
    family = EVM
    backend = "web3-jsonrpc"

    def __init__(self, network: str, rpc_url: str) -> None:
        self.network = network
        self.rpc_url = rpc_url
        self.traces = traces.NO_TRACES
        # The node's `finalized` block at the last head(), or None where it answers the tag with
        # an error or nothing (finality then by FINALITY_DEPTHS; docs/decisions.md, Finality).
        self.finalized: int | None = None
        self.provider = CountingProvider(rpc_url, request_kwargs={"timeout": settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS})
        self.w3 = Web3(self.provider)

    @property
    def calls(self) -> int:
        return self.provider.calls

    def head(self) -> int:
        """The head block, after checking the node serves this network's chain, and the node's
        `finalized` block (one batched request): a Sepolia URL set for Ethereum must never 'pay'
        real drafts."""
        answers = self.provider.make_batch_request(
            [("eth_chainId", []), ("eth_blockNumber", []), ("eth_getBlockByNumber", ["finalized", False])]
        )
        if not isinstance(answers, list) or len(answers) != 3:
            raise ChainError(f"{self.network}: node answered {answers!r:.200}")
        by_id = sorted(answers, key=lambda a: a["id"])
        if any("result" not in a or a.get("error") for a in by_id[:2]):
            raise ChainError(f"{self.network}: node answered {answers!r:.200}")
        chain_id, head = int(by_id[0]["result"], 16), int(by_id[1]["result"], 16)
        final_block = None if by_id[2].get("error") else by_id[2].get("result")
        self.finalized = min(_int(final_block["number"]), head) if final_block else None
        expected = chain_id_of(self.network)
        if expected is not None and chain_id != expected:
            raise ChainError(f"{self.network} expects chain id {expected}, the node at RPC_URL is chain {chain_id}")
        self.traces, detected = traces.detect(self.network, self.rpc_url, self.provider.make_request, head)
        if detected:
            services.cursor_traces_record(network=self.network, family=EVM, traces=self.traces)
        return head

    def block_hashes(self, heights: list[int]) -> dict[int, str | None]:
        if not heights:
            return {}
        if len(heights) == 1:
            block = self.w3.eth.get_block(heights[0])
            return {heights[0]: _hex(block["hash"]) if block else None}
        out: dict[int, str | None] = {}
        size = settings.CHAINWATCH_JSONRPC_BATCH_SIZE
        for start in range(0, len(heights), size):
            chunk = heights[start : start + size]
            with self.w3.batch_requests() as batch:
                for height in chunk:
                    batch.add(self.w3.eth.get_block(height))
                blocks = cast(list[BlockData | None], batch.execute())  # the blocks asked for, in order
            for height, found in zip(chunk, blocks, strict=True):
                out[height] = _hex(found["hash"]) if found else None
        return out

    def _native_targets(self, watched: list[WatchedReceiver]) -> set[str]:
        return {t.receiver_address.lower() for t in watched if t.currency == Currency.ETH}

    def blocks_per_pass(self, watched: list[WatchedReceiver]) -> int:
        if self._native_targets(watched):
            return settings.CHAINWATCH_BLOCKS_PER_PASS
        return settings.CHAINWATCH_LOG_BLOCKS_PER_CALL

    def scan(self, start: int, end: int, watched: list[WatchedReceiver]) -> ScanResult:
        blocks: dict[int, str] = {}
        transfers: list[TransferData] = []
        notes: list[str] = []
        contracts, receivers = token_targets(self.network, watched)
        if contracts and receivers:
            transfers += self._token_transfers(start, end, contracts, sorted(receivers), blocks, notes)
        natives = self._native_targets(watched)
        end_hash = ""
        if natives:
            found, block_txs = self._native_transfers(start, end, natives, blocks)
            found += self._internal_transfers(start, end, natives, blocks, block_txs)
            transfers += self._succeeded(found)
            end_hash = blocks[end]
        if not end_hash:
            end_hash = self.block_hashes([end])[end] or ""
        if not end_hash:
            raise ChainError(f"{self.network}: block {end} has no hash yet")
        self._stamp(transfers)
        return ScanResult(blocks=blocks, transfers=transfers, end_hash=end_hash, notes=notes)

    def _stamp(self, transfers: list[TransferData]) -> None:
        """Each transfer's block timestamp (one batch for the blocks holding transfers): matching
        reads it, so a transfer read only after a draft was created still counts as made before it."""
        heights = sorted({t.block_height for t in transfers if t.block_height is not None})
        if not heights:
            return
        headers = self._rpc_batch([("eth_getBlockByNumber", [hex(height), False]) for height in heights])
        times = {
            height: datetime.fromtimestamp(_int(header["timestamp"]), tz=UTC)
            for height, header in zip(heights, headers, strict=True)
            if header
        }
        for transfer in transfers:
            transfer.block_time = times.get(transfer.block_height) if transfer.block_height is not None else None

    def _log_queries(
        self, start: int, end: int, contracts: Sequence[str], receivers: list[str]
    ) -> tuple[str, list[Any]]:
        """The eth_getLogs filters of a range, the way that takes fewer calls: by receiver topic
        (CHAINWATCH_LOG_BLOCKS_PER_CALL blocks and CHAINWATCH_ADDRESSES_PER_LOG_CALL receivers a
        call), or every Transfer of one contract (CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL blocks
        a call, as a busy token's full log is large). A tie goes to the receiver filter."""
        size = settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL
        chunks = [receivers[i : i + size] for i in range(0, len(receivers), size)]
        step = settings.CHAINWATCH_LOG_BLOCKS_PER_CALL
        ranges = [(s, min(end, s + step - 1)) for s in range(start, end + 1, step)]
        wide = settings.CHAINWATCH_LOG_BLOCKS_PER_UNFILTERED_CALL
        wide_ranges = [(s, min(end, s + wide - 1)) for s in range(start, end + 1, wide)]
        if len(contracts) * len(wide_ranges) < len(chunks) * len(ranges):
            return "contract", [
                {"fromBlock": a, "toBlock": b, "address": contract, "topics": [TRANSFER_TOPIC]}
                for a, b in wide_ranges
                for contract in contracts
            ]
        return "receiver", [
            {
                "fromBlock": a,
                "toBlock": b,
                "address": contracts,
                "topics": [TRANSFER_TOPIC, None, [address_topic(r) for r in chunk]],
            }
            for a, b in ranges
            for chunk in chunks
        ]

    def _token_transfers(
        self,
        start: int,
        end: int,
        contracts: dict[str, str],
        receivers: list[str],
        blocks: dict[int, str],
        notes: list[str],
    ) -> list[TransferData]:
        found: list[TransferData] = []
        contract_list = [Web3.to_checksum_address(c) for c in sorted(contracts)]
        way, queries = self._log_queries(start, end, contract_list, receivers)
        notes.append(f"token logs by {way}")
        watched = set(receivers)
        for query in queries:
            for log in self.w3.eth.get_logs(query):
                if log.get("removed") or len(log["topics"]) != 3:
                    continue  # ERC-721 Transfers index a fourth topic (the token id)
                receiver = topic_address(log["topics"][2]).lower()
                if receiver not in watched:
                    continue  # read by contract: most Transfers are someone else's
                amount = int(_hex(log["data"]), 16)
                if amount > MAX_BASE_UNITS:
                    continue  # no draft bills that much; a hostile token event must not stall the watcher
                height, block_hash = int(log["blockNumber"]), _hex(log["blockHash"])
                blocks[height] = block_hash
                contract = log["address"].lower()
                found.append(
                    TransferData(
                        network=self.network,
                        txid=_hex(log["transactionHash"]),
                        index=int(log["logIndex"]),
                        currency=contracts.get(contract, ""),
                        token_address=log["address"],
                        receiver_address=Web3.to_checksum_address(receiver),
                        amount_base_units=amount,
                        block_height=height,
                        block_hash=block_hash,
                    )
                )
        return self._succeeded(found)

    def _native_transfers(
        self, start: int, end: int, receivers: set[str], blocks: dict[int, str]
    ) -> tuple[list[TransferData], dict[int, list[str]]]:
        """Top-level ETH to `receivers`, and the transaction hashes of every block read."""
        found: list[TransferData] = []
        block_txs: dict[int, list[str]] = {}
        heights = list(range(start, end + 1))
        size = settings.CHAINWATCH_JSONRPC_BATCH_SIZE
        for chunk_start in range(0, len(heights), size):
            chunk = heights[chunk_start : chunk_start + size]
            with self.w3.batch_requests() as batch:
                for height in chunk:
                    batch.add(self.w3.eth.get_block(height, full_transactions=True))
                fetched = cast(list[BlockData | None], batch.execute())  # the blocks asked for, in order
            for height, block in zip(chunk, fetched, strict=True):
                if not block:
                    raise ChainError(f"{self.network}: block {height} not found")
                block_hash = _hex(block["hash"])
                blocks[height] = block_hash
                txs = cast(list[TxData], block["transactions"])  # full_transactions: each a transaction
                block_txs[height] = [_hex(tx["hash"]) for tx in txs]
                for tx in txs:
                    to = (tx.get("to") or "").lower()
                    value = int(tx.get("value") or 0)
                    if to not in receivers or value <= 0:
                        continue
                    gwei, _exact = wei_to_gwei(value)
                    if gwei > MAX_BASE_UNITS:
                        continue
                    found.append(
                        TransferData(
                            network=self.network,
                            txid=_hex(tx["hash"]),
                            index=NATIVE_INDEX,
                            currency=Currency.ETH,
                            receiver_address=tx["to"],
                            amount_base_units=gwei,
                            raw_amount=value,
                            block_height=height,
                            block_hash=block_hash,
                        )
                    )
        return found, block_txs

    def _rpc_batch(self, calls: list[tuple[str, list[Any]]]) -> list[Any]:
        """Raw JSON-RPC results in call order, CHAINWATCH_JSONRPC_BATCH_SIZE calls per request."""
        results: list[Any] = []
        size = settings.CHAINWATCH_JSONRPC_BATCH_SIZE
        for start in range(0, len(calls), size):
            chunk = calls[start : start + size]
            answers = self.provider.make_batch_request(chunk)
            if not isinstance(answers, list) or len(answers) != len(chunk):
                raise ChainError(f"{self.network}: node answered {answers!r:.200}")
            for (method, _), answer in zip(chunk, answers, strict=True):
                if "result" not in answer or answer.get("error"):
                    raise ChainError(f"{self.network} {method}: {answer.get('error')!r:.200}")
                results.append(answer["result"])
        return results

    def _internal_transfers(
        self, start: int, end: int, receivers: set[str], blocks: dict[int, str], block_txs: dict[int, list[str]]
    ) -> list[TransferData]:
        """ETH sent to `receivers` by contracts' internal calls, when the node offers traces."""
        if self.traces == traces.TRACE_FILTER:
            # Fewer blocks than receiver chunks (a pass per new block, many drafts): block by block.
            chunks = -(-len(receivers) // settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL)
            paid = None
            if end - start + 1 < chunks and traces.trace_block_offered(self.rpc_url):
                paid = self._payments_by_trace_block(start, end, receivers, blocks)
            if paid is None:
                paid = self._payments_by_trace_filter(start, end, receivers, blocks)
        elif self.traces == traces.DEBUG_TRACE:
            paid = self._payments_by_block_trace(start, end, receivers, block_txs)
        else:
            return []
        found = []
        for txid, height, payment in paid:
            gwei, _exact = wei_to_gwei(payment.wei)
            if gwei > MAX_BASE_UNITS:
                continue
            found.append(
                TransferData(
                    network=self.network,
                    txid=txid,
                    index=INTERNAL_CALL_INDEX - payment.ordinal,
                    currency=Currency.ETH,
                    receiver_address=Web3.to_checksum_address(payment.to),
                    amount_base_units=gwei,
                    raw_amount=payment.wei,
                    block_height=height,
                    block_hash=blocks[height],
                )
            )
        return found

    def _check_block(self, height: int, block_hash: str, blocks: dict[int, str]) -> None:
        if (blocks.get(height) or "").lower() != block_hash.lower():
            raise ChainError(f"{self.network}: block {height} changed while its traces were read")

    def _payments_by_trace_filter(
        self, start: int, end: int, receivers: set[str], blocks: dict[int, str]
    ) -> list[tuple[str, int, traces.InternalPayment]]:
        """trace_filter finds the transactions with a call to a receiver (receivers in chunks,
        all chunks in one batch); trace_transaction then gives each such transaction's whole
        call tree, so a call under a reverted caller is told apart. Those are few: payments."""
        ordered = sorted(receivers)
        size = settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL
        filters = [
            (
                traces.TRACE_FILTER,
                [{"fromBlock": hex(start), "toBlock": hex(end), "toAddress": ordered[i : i + size]}],
            )
            for i in range(0, len(ordered), size)
        ]
        candidates: dict[str, None] = {}
        for answer in self._rpc_batch(filters):
            for trace in answer or []:
                action = trace.get("action") or {}
                if (
                    trace.get("type") == "call"
                    and trace.get("traceAddress")
                    and _int(action.get("value") or 0) > 0
                    and (action.get("to") or "").lower() in receivers
                    and trace.get("transactionHash")
                ):
                    candidates[trace["transactionHash"]] = None
        if not candidates:
            return []
        paid = []
        trees = self._rpc_batch([("trace_transaction", [txid]) for txid in candidates])
        for txid, tree in zip(candidates, trees, strict=True):
            if not tree:
                raise ChainError(f"{self.network}: no trace of {txid}")
            height = _int(tree[0]["blockNumber"])
            self._check_block(height, tree[0]["blockHash"], blocks)
            for payment in traces.internal_payments(traces.frames_from_trace_list(tree), receivers):
                paid.append((txid, height, payment))
        return paid

    def _payments_by_trace_block(
        self, start: int, end: int, receivers: set[str], blocks: dict[int, str]
    ) -> list[tuple[str, int, traces.InternalPayment]] | None:
        """Every trace of each block (`trace_block`, trace_filter's format: each transaction's
        whole call tree), for a range of fewer blocks than trace_filter's receiver chunks: a pass
        per new block then costs one call however many receivers are watched. None when the node
        refuses it (then trace_filter, and this node is not asked again in this process)."""
        heights = list(range(start, end + 1))
        answers = self.provider.make_batch_request([(traces.TRACE_BLOCK, [hex(height)]) for height in heights])
        if not isinstance(answers, list) or len(answers) != len(heights):
            raise ChainError(f"{self.network}: node answered {answers!r:.200}")
        if any("result" not in answer or answer.get("error") for answer in answers):
            traces.trace_block_refused(self.rpc_url)
            return None
        paid = []
        for height, answer in zip(heights, sorted(answers, key=lambda a: a["id"]), strict=True):
            trees: dict[str, list[dict[str, Any]]] = {}
            for trace in answer["result"] or []:
                if trace.get("transactionHash"):  # block and uncle rewards belong to no transaction
                    self._check_block(height, trace.get("blockHash") or "", blocks)
                    trees.setdefault(trace["transactionHash"], []).append(trace)
            for txid, tree in trees.items():
                for payment in traces.internal_payments(traces.frames_from_trace_list(tree), receivers):
                    paid.append((txid, height, payment))
        return paid

    def _payments_by_block_trace(
        self, start: int, end: int, receivers: set[str], block_txs: dict[int, list[str]]
    ) -> list[tuple[str, int, traces.InternalPayment]]:
        """Every block's call trees (one debug_traceBlockByNumber per block, batched)."""
        heights = list(range(start, end + 1))
        answers = self._rpc_batch([(traces.DEBUG_TRACE, [hex(height), traces.CALL_TRACER]) for height in heights])
        paid = []
        for height, answer in zip(heights, answers, strict=True):
            txids = block_txs[height]
            if not isinstance(answer, list) or len(answer) != len(txids):
                raise ChainError(f"{self.network}: block {height} changed while its traces were read")
            for txid, item in zip(txids, answer, strict=True):
                if item.get("txHash") not in (None, txid) or "result" not in item:
                    raise ChainError(f"{self.network}: trace of {txid} in block {height}: {item!r:.200}")
                for payment in traces.internal_payments(traces.frames_from_call_tracer(item["result"]), receivers):
                    paid.append((txid, height, payment))
        return paid

    def _succeeded(self, transfers: list[TransferData]) -> list[TransferData]:
        """Drop reverted transactions: their value never moved (only payments to watched receivers get here)."""
        if not transfers:
            return transfers
        with self.w3.batch_requests() as batch:
            for t in transfers:
                batch.add(self.w3.eth.get_transaction_receipt(HexStr(t.txid)))
            receipts = cast(list[TxReceipt | None], batch.execute())  # the receipts asked for, in order
        return [t for t, r in zip(transfers, receipts, strict=True) if r and int(r["status"]) == 1]
