"""What each endpoint of a network says of the transfers waiting for their confirmations
(chainwatch.quorum asks them): one witness per chain family, one batched request per pass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from chainwatch import networks
from chainwatch.models import INTERNAL_CALL_INDEX, NATIVE_INDEX, ObservedTransfer
from chainwatch.transport import ChainError, Http, JsonRpc

AGREES, DIFFERS, MISSING, BEHIND, DOWN = "agrees", "differs", "missing", "behind", "down"
DISAGREEING = (DIFFERS, MISSING)


@dataclass
class Said:
    """What one endpoint says of one stored transfer."""

    says: str
    confirmations: int = 0
    final: bool = False
    detail: dict[str, Any] = field(default_factory=dict)


def witness(network: str, family: str, url: str) -> EvmWitness | EsploraWitness | CoreWitness | SolanaWitness:
    if family == networks.EVM:
        return EvmWitness(network, url)
    if family == networks.BITCOIN:
        if networks.bitcoin_source(network) == "esplora":
            return EsploraWitness(network, url)
        return CoreWitness(network, url)
    if family == networks.SOLANA:
        return SolanaWitness(network, url)
    raise ValueError(f"no quorum for {family}")


def _unfound(height: int | None, head: int, what: str) -> Said:
    """An endpoint without the transaction: behind when it has not reached its block yet."""
    if height is not None and head < height:
        return Said(BEHIND, detail={"head": head})
    return Said(MISSING, detail={"head": head, "missing": what})


def _same(a: str | None, b: str | None) -> bool:
    return (a or "").lower() == (b or "").lower()


class EvmWitness:
    """eth_getTransactionReceipt for every transfer (and eth_getTransactionByHash for native
    ETH), with eth_chainId, eth_blockNumber and the `finalized` block, in one batch.

    A transfer the endpoint agrees on is `final` for it when its block is at or below the
    endpoint's `finalized` block; an endpoint that answers the tag with an error (a node without
    it) counts FINALITY_DEPTHS instead, as one endpoint alone would (docs/decisions.md, Finality)."""

    def __init__(self, network: str, url: str) -> None:
        self.network = network
        self.rpc = JsonRpc(url)
        # The highest block final for this endpoint at the last say(): its `finalized` block, or
        # the block FINALITY_DEPTHS below its head where it names none.
        self.final_height: int | None = None

    def say(self, transfers: list[ObservedTransfer]) -> dict[int, Said]:
        from chainwatch.evm import TRANSFER_TOPIC, topic_address

        txids = list(dict.fromkeys(t.txid for t in transfers))
        natives = list(dict.fromkeys(t.txid for t in transfers if t.index == NATIVE_INDEX))
        calls: list[tuple[str, list[Any]]] = [
            ("eth_chainId", []),
            ("eth_blockNumber", []),
            ("eth_getBlockByNumber", ["finalized", False]),
        ]
        calls += [("eth_getTransactionReceipt", [txid]) for txid in txids]
        calls += [("eth_getTransactionByHash", [txid]) for txid in natives]
        answers = self.rpc.batch(calls, optional={2})
        chain_id, head = int(answers[0], 16), int(answers[1], 16)
        expected = networks.chain_id_of(self.network)
        if expected is not None and chain_id != expected:
            raise ChainError(f"{self.network} expects chain id {expected}, the endpoint is chain {chain_id}")
        finalized = min(int(answers[2]["number"], 16), head) if answers[2] else None
        depth = settings.FINALITY_DEPTHS.get(self.network, 0)
        self.final_height = finalized if finalized is not None else head - depth + 1
        receipts = dict(zip(txids, answers[3 : 3 + len(txids)], strict=True))
        txs = dict(zip(natives, answers[3 + len(txids) :], strict=True))
        out = {}
        for t in transfers:
            receipt = receipts.get(t.txid)
            if not receipt or not receipt.get("blockHash"):
                out[t.pk] = _unfound(t.block_height, head, "receipt")
                continue
            height, block_hash = int(receipt["blockNumber"], 16), receipt["blockHash"]
            detail = {"head": head, "blockHeight": height, "blockHash": block_hash, "finalized": finalized}
            if height != t.block_height or not _same(block_hash, t.block_hash):
                out[t.pk] = Said(DIFFERS, detail={**detail, "differs": "block"})
                continue
            if int(receipt.get("status") or "0x0", 16) != 1:
                out[t.pk] = Said(DIFFERS, detail={**detail, "differs": "reverted"})
                continue
            if t.index >= 0:
                log = next((g for g in receipt.get("logs") or [] if int(g["logIndex"], 16) == t.index), None)
                ok = (
                    log is not None
                    and _same(log["address"], t.token_address)
                    and len(log["topics"]) == 3
                    and _same(log["topics"][0], TRANSFER_TOPIC)
                    and _same(topic_address(log["topics"][2]), t.receiver_address)
                    and int(log["data"], 16) == t.amount_base_units
                )
                if log is not None:
                    detail["receiver"] = topic_address(log["topics"][-1])
                    detail["amount"] = str(int(log["data"] or "0x0", 16))
            elif t.index == NATIVE_INDEX:
                tx = txs.get(t.txid) or {}
                wei = int(tx.get("value") or "0x0", 16)
                ok = _same(tx.get("to"), t.receiver_address) and wei == int(t.raw_amount or 0)
                detail |= {"receiver": tx.get("to"), "amount": str(wei)}
            else:  # ETH moved by an internal call (index <= INTERNAL_CALL_INDEX): the receipt's block and status
                ok = t.index <= INTERNAL_CALL_INDEX
            confirmations = max(head - height + 1, 0)
            if not ok:
                detail["differs"] = "content"
            final = height <= self.final_height
            out[t.pk] = Said(AGREES, confirmations, final, detail=detail) if ok else Said(DIFFERS, detail=detail)
        return out


class CoreWitness:
    """Bitcoin Core JSON-RPC: getblockchaininfo and `getblock <hash> 2` for each block holding a
    transfer, in one batch (no txindex needed)."""

    def __init__(self, network: str, url: str) -> None:
        self.network = network
        self.rpc = JsonRpc(url, jsonrpc="1.0")

    def say(self, transfers: list[ObservedTransfer]) -> dict[int, Said]:
        from chainwatch.bitcoin import CORE_CHAINS, _core_address, btc_to_sats

        hashes = list(dict.fromkeys(t.block_hash for t in transfers if t.block_hash))
        answers = self.rpc.batch(
            [("getblockchaininfo", []), *(("getblock", [h, 2]) for h in hashes)], allow_errors=True
        )
        info = answers[0]
        if info is None:
            raise ChainError(f"{self.network}: getblockchaininfo failed")
        if info["chain"] != CORE_CHAINS[self.network]:
            raise ChainError(f"{self.network} expects chain {CORE_CHAINS[self.network]!r}, got {info['chain']!r}")
        head = int(info["blocks"])
        blocks = dict(zip(hashes, answers[1:], strict=True))
        out = {}
        for t in transfers:
            block = blocks.get(t.block_hash)
            if not block:
                out[t.pk] = _unfound(t.block_height, head, "block")
                continue
            confirmations = int(block.get("confirmations", 0))
            detail = {"head": head, "blockHeight": block.get("height"), "blockHash": block.get("hash")}
            if confirmations < 1 or block.get("height") != t.block_height:
                out[t.pk] = Said(DIFFERS, detail={**detail, "differs": "block"})
                continue
            tx = next((x for x in block.get("tx") or [] if x.get("txid") == t.txid), None)
            vout = next((v for v in (tx or {}).get("vout") or [] if int(v.get("n", -1)) == t.index), None)
            if vout is None:
                out[t.pk] = Said(MISSING, detail={**detail, "missing": "output"})
                continue
            receiver, sats = _core_address(vout), btc_to_sats(vout["value"])
            detail |= {"receiver": receiver, "amount": sats}
            ok = receiver == t.receiver_address and sats == t.amount_base_units
            out[t.pk] = Said(AGREES, confirmations, detail=detail) if ok else Said(DIFFERS, detail=detail)
        return out


class EsploraWitness:
    """Esplora REST: /blocks/tip/height and /tx/<txid> for each transaction."""

    def __init__(self, network: str, url: str) -> None:
        self.network = network
        self.http = Http(url)

    def say(self, transfers: list[ObservedTransfer]) -> dict[int, Said]:
        head = int(self.http.get_text("/blocks/tip/height").strip())
        txs: dict[str, dict[str, Any] | None] = {}
        for txid in dict.fromkeys(t.txid for t in transfers):
            response = self.http.request("GET", f"/tx/{txid}")
            if response.status_code == 404:
                txs[txid] = None
            elif response.status_code >= 400:
                raise ChainError(f"{self.network}: /tx answered {response.status_code}")
            else:
                txs[txid] = response.json()
        out = {}
        for t in transfers:
            tx = txs.get(t.txid)
            status = (tx or {}).get("status") or {}
            if not tx or not status.get("confirmed"):
                out[t.pk] = _unfound(t.block_height, head, "transaction")
                continue
            detail = {"head": head, "blockHeight": status.get("block_height"), "blockHash": status.get("block_hash")}
            if status.get("block_height") != t.block_height or not _same(status.get("block_hash"), t.block_hash):
                out[t.pk] = Said(DIFFERS, detail={**detail, "differs": "block"})
                continue
            vouts = tx.get("vout") or []
            vout = vouts[t.index] if 0 <= t.index < len(vouts) else None
            if vout is None:
                out[t.pk] = Said(MISSING, detail={**detail, "missing": "output"})
                continue
            detail |= {"receiver": vout.get("scriptpubkey_address"), "amount": int(vout.get("value", -1))}
            ok = detail["receiver"] == t.receiver_address and detail["amount"] == t.amount_base_units
            confirmations = max(head - int(status["block_height"]) + 1, 0)
            out[t.pk] = Said(AGREES, confirmations, detail=detail) if ok else Said(DIFFERS, detail=detail)
        return out


class SolanaWitness:
    """Solana JSON-RPC: getGenesisHash, the confirmed slot, getSignatureStatuses (finalized or
    not) and getTransaction for each signature, in one batch."""

    def __init__(self, network: str, url: str) -> None:
        self.network = network
        self.rpc = JsonRpc(url)

    def say(self, transfers: list[ObservedTransfer]) -> dict[int, Said]:
        from chainwatch.solana import GENESIS_HASHES, STATUSES_PER_CALL, _account_keys, received_base_units

        signatures = list(dict.fromkeys(t.txid for t in transfers))
        chunks = [signatures[i : i + STATUSES_PER_CALL] for i in range(0, len(signatures), STATUSES_PER_CALL)]
        options = {"encoding": "jsonParsed", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}
        answers = self.rpc.batch(
            [
                ("getGenesisHash", []),
                ("getSlot", [{"commitment": "confirmed"}]),
                *(("getSignatureStatuses", [chunk, {"searchTransactionHistory": True}]) for chunk in chunks),
                *(("getTransaction", [s, options]) for s in signatures),
            ]
        )
        if answers[0] != GENESIS_HASHES[self.network]:
            raise ChainError(f"{self.network}: the endpoint has genesis {answers[0]}")
        head = int(answers[1])
        statuses = [status for answer in answers[2 : 2 + len(chunks)] for status in answer["value"]]
        finalized = {s for s, status in zip(signatures, statuses, strict=True) if _finalized(status)}
        txs = dict(zip(signatures, answers[2 + len(chunks) :], strict=True))
        out = {}
        for t in transfers:
            tx = txs.get(t.txid)
            if not tx:
                out[t.pk] = _unfound(t.block_height, head, "transaction")
                continue
            slot = int(tx.get("slot", -1))
            detail = {"head": head, "slot": slot}
            if t.block_height is not None and slot != t.block_height:
                out[t.pk] = Said(DIFFERS, detail={**detail, "differs": "slot"})
                continue
            amount = received_base_units(tx, receiver=t.receiver_address, mint=t.token_address or None)
            detail["amount"] = amount
            ok = (
                (tx.get("meta") or {}).get("err") is None
                and amount == t.amount_base_units
                and (not t.solana_reference or t.solana_reference in _account_keys(tx))
            )
            final = t.txid in finalized
            out[t.pk] = Said(AGREES, 0, final=final, detail=detail) if ok else Said(DIFFERS, detail=detail)
        return out


def _finalized(status: dict[str, Any] | None) -> bool:
    return status is not None and status.get("confirmationStatus") == "finalized" and not status.get("err")
