"""EVM chains (Ethereum, Base and their test networks) through web3.py over JSON-RPC.

ERC-20 payments come from Transfer logs: one eth_getLogs per (block range, chunk of
receiver topics), filtered by the watched token contracts, so the number of calls does
not grow with the number of open drafts. Native ETH needs the block's transactions:
one eth_getBlockByNumber per block, only while some native-ETH draft is watched.
Our ETH base unit is gwei; a wei value converts exactly or not at all.
"""

from __future__ import annotations

from django.conf import settings
from web3 import Web3
from web3.providers.rpc import HTTPProvider

from chainwatch.models import NATIVE_INDEX
from chainwatch.networks import EVM, chain_id_of, token_addresses
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, RateLimiter
from chainwatch.watcher import ScanResult
from drafts.selectors import WatchTarget
from payments.enums import Currency, Method

TRANSFER_TOPIC = "0x" + Web3.keccak(text="Transfer(address,address,uint256)").hex().removeprefix("0x")
WEI_PER_GWEI = 10**9
MAX_BASE_UNITS = 2**63 - 1  # drafts and transfers store base units as BIGINT


class CountingProvider(HTTPProvider):
    """HTTPProvider that counts requests (the benchmark reads it) and keeps to a rate."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.calls = 0
        self.limiter = RateLimiter(settings.CHAINWATCH_MAX_REQUESTS_PER_SECOND)

    def make_request(self, method, params):
        self.limiter.wait()
        self.calls += 1
        return super().make_request(method, params)

    def make_batch_request(self, requests):
        self.limiter.wait()
        self.calls += 1
        return super().make_batch_request(requests)


def _hex(value) -> str:
    text = value.hex() if hasattr(value, "hex") and not isinstance(value, str) else str(value)
    return text if text.startswith("0x") else "0x" + text


def address_topic(address: str) -> str:
    return "0x" + "0" * 24 + address.lower().removeprefix("0x")


def topic_address(topic) -> str:
    return "0x" + _hex(topic)[-40:]


def wei_to_gwei(wei: int) -> tuple[int, bool]:
    """(gwei, exact): exact only when the wei value is a whole number of gwei."""
    return wei // WEI_PER_GWEI, wei % WEI_PER_GWEI == 0


class EvmSource:
    family = EVM
    backend = "web3-jsonrpc"

    def __init__(self, network: str, rpc_url: str) -> None:
        self.network = network
        self.provider = CountingProvider(rpc_url, request_kwargs={"timeout": settings.CHAINWATCH_HTTP_TIMEOUT_SECONDS})
        self.w3 = Web3(self.provider)

    @property
    def calls(self) -> int:
        return self.provider.calls

    def head(self) -> int:
        """The head block, after checking the node serves this network's chain (one batched request):
        a Sepolia URL set for Ethereum must never 'pay' real drafts."""
        answers = self.provider.make_batch_request([("eth_chainId", []), ("eth_blockNumber", [])])
        if not isinstance(answers, list) or any("result" not in a for a in answers):
            raise ChainError(f"{self.network}: node answered {answers!r:.200}")
        by_id = sorted(answers, key=lambda a: a["id"])
        chain_id, head = int(by_id[0]["result"], 16), int(by_id[1]["result"], 16)
        expected = chain_id_of(self.network)
        if expected is not None and chain_id != expected:
            raise ChainError(f"{self.network} expects chain id {expected}, the node at RPC_URL is chain {chain_id}")
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
                blocks = batch.execute()
            for height, block in zip(chunk, blocks, strict=True):
                out[height] = _hex(block["hash"]) if block else None
        return out

    def _native_targets(self, targets: list[WatchTarget]) -> set[str]:
        return {
            t.receiver_address.lower()
            for t in targets
            if t.currency == Currency.ETH and t.receiver_address and t.method != Method.LIGHTNING
        }

    def _token_targets(self, targets: list[WatchTarget]) -> tuple[dict[str, str], set[str]]:
        """({token contract (lower) -> currency}, receivers) for the watched token drafts."""
        registry = {addr.lower(): cur for cur, addr in token_addresses(self.network).items()}
        contracts: dict[str, str] = {}
        receivers: set[str] = set()
        for t in targets:
            if t.currency == Currency.ETH or not t.receiver_address:
                continue
            contract = (t.token_address or token_addresses(self.network).get(t.currency) or "").lower()
            if not contract:
                continue
            contracts[contract] = registry.get(contract, t.currency)
            receivers.add(t.receiver_address.lower())
        return contracts, receivers

    def blocks_per_pass(self, targets: list[WatchTarget]) -> int:
        if self._native_targets(targets):
            return settings.CHAINWATCH_BLOCKS_PER_PASS
        return settings.CHAINWATCH_LOG_BLOCKS_PER_CALL

    def scan(self, start: int, end: int, targets: list[WatchTarget]) -> ScanResult:
        blocks: dict[int, str] = {}
        transfers: list[TransferData] = []
        contracts, receivers = self._token_targets(targets)
        if contracts and receivers:
            transfers += self._token_transfers(start, end, contracts, sorted(receivers), blocks)
        natives = self._native_targets(targets)
        end_hash = ""
        if natives:
            transfers += self._native_transfers(start, end, natives, blocks)
            end_hash = blocks[end]
        if not end_hash:
            end_hash = self.block_hashes([end])[end] or ""
        if not end_hash:
            raise ChainError(f"{self.network}: block {end} has no hash yet")
        return ScanResult(blocks=blocks, transfers=transfers, end_hash=end_hash)

    def _token_transfers(
        self, start: int, end: int, contracts: dict[str, str], receivers: list[str], blocks: dict[int, str]
    ) -> list[TransferData]:
        found: list[TransferData] = []
        size = settings.CHAINWATCH_ADDRESSES_PER_LOG_CALL
        step = settings.CHAINWATCH_LOG_BLOCKS_PER_CALL
        contract_list = [Web3.to_checksum_address(c) for c in sorted(contracts)]
        for range_start in range(start, end + 1, step):
            range_end = min(end, range_start + step - 1)
            for chunk_start in range(0, len(receivers), size):
                chunk = receivers[chunk_start : chunk_start + size]
                logs = self.w3.eth.get_logs(
                    {
                        "fromBlock": range_start,
                        "toBlock": range_end,
                        "address": contract_list,
                        "topics": [TRANSFER_TOPIC, None, [address_topic(a) for a in chunk]],
                    }
                )
                for log in logs:
                    if log.get("removed") or len(log["topics"]) != 3:
                        continue
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
                            receiver_address=Web3.to_checksum_address(topic_address(log["topics"][2])),
                            amount_base_units=amount,
                            block_height=height,
                            block_hash=block_hash,
                        )
                    )
        return self._succeeded(found)

    def _native_transfers(
        self, start: int, end: int, receivers: set[str], blocks: dict[int, str]
    ) -> list[TransferData]:
        found: list[TransferData] = []
        heights = list(range(start, end + 1))
        size = settings.CHAINWATCH_JSONRPC_BATCH_SIZE
        for chunk_start in range(0, len(heights), size):
            chunk = heights[chunk_start : chunk_start + size]
            with self.w3.batch_requests() as batch:
                for height in chunk:
                    batch.add(self.w3.eth.get_block(height, full_transactions=True))
                fetched = batch.execute()
            for height, block in zip(chunk, fetched, strict=True):
                if not block:
                    raise ChainError(f"{self.network}: block {height} not found")
                block_hash = _hex(block["hash"])
                blocks[height] = block_hash
                for tx in block["transactions"]:
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
        return self._succeeded(found)

    def _succeeded(self, transfers: list[TransferData]) -> list[TransferData]:
        """Drop reverted transactions: their value never moved (only payments to watched receivers get here)."""
        if not transfers:
            return transfers
        with self.w3.batch_requests() as batch:
            for t in transfers:
                batch.add(self.w3.eth.get_transaction_receipt(t.txid))
            receipts = batch.execute()
        return [t for t, r in zip(transfers, receipts, strict=True) if r and int(r["status"]) == 1]
