"""In-memory chains behind local HTTP servers that answer like the real APIs.

Response shapes are copied from the official docs into fixtures/*.json; these classes fill
them in. They are test doubles of the *network*, never of our code."""

from __future__ import annotations

import copy
import hashlib
import json
import re
import time
from dataclasses import dataclass, field
from decimal import Decimal

from tests.chainwatch.conftest import load_fixture

CORE = load_fixture("bitcoin_core_getblock_verbosity2.json")
ESPLORA = load_fixture("esplora_tx.json")


def _hash(*parts) -> str:
    return hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()


@dataclass
class FakeTx:
    txid: str
    outputs: list[tuple[str, int]]  # (address, sats)
    coinbase: bool = False


MINER = "bc1qm34lsc65zpw79lxes69zkqmk6ee3ewf0j77s3h"
SUBSIDY = 312_500_000


@dataclass
class FakeBitcoin:
    """A Bitcoin chain: blocks of transactions, a mempool, and reorgs on demand."""

    blocks: list[tuple[str, list[FakeTx]]] = field(default_factory=list)
    mempool: dict[str, FakeTx] = field(default_factory=dict)
    salt: int = 0
    counter: int = 0
    dropped: dict[str, FakeTx] = field(default_factory=dict)
    core_chain: str = "main"  # what getblockchaininfo names the chain
    # When each block was mined (its header's time) and each transaction entered the mempool.
    times: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.blocks:
            self.mine(1)  # genesis

    @property
    def height(self) -> int:
        return len(self.blocks) - 1

    def pay(self, *outputs: tuple[str, int]) -> str:
        self.counter += 1
        txid = _hash("tx", self.counter)
        self.mempool[txid] = FakeTx(txid, list(outputs))
        self.times[txid] = int(time.time())
        return txid

    def mine(self, count: int = 1, *, at: int | None = None) -> None:
        """Blocks of a coinbase (as every real block has) and the whole mempool; `at`: the
        blocks' header time (unix seconds), now by default."""
        for _ in range(count):
            coinbase = FakeTx(_hash("coinbase", len(self.blocks), self.salt), [(MINER, SUBSIDY)], coinbase=True)
            txs = [coinbase, *self.mempool.values()]
            self.mempool.clear()
            self.blocks.append((_hash("block", len(self.blocks), self.salt), txs))
            self.times[self.blocks[-1][0]] = at if at is not None else int(time.time())

    def reorg(self, depth: int, *, new_blocks: int | None = None, back_to_mempool: bool = False) -> list[FakeTx]:
        """Replace the last `depth` blocks with a longer branch that lacks their transactions."""
        removed = self.blocks[-depth:]
        del self.blocks[-depth:]
        dropped = [tx for _, txs in removed for tx in txs if not tx.coinbase]
        self.dropped.update({tx.txid: tx for tx in dropped})
        if back_to_mempool:
            self.mempool.update({tx.txid: tx for tx in dropped})
        self.salt += 1
        self.mine(new_blocks if new_blocks is not None else depth + 1)
        return dropped

    def find_dropped(self, txid: str) -> FakeTx:
        return self.dropped[txid]

    def find(self, txid: str) -> tuple[FakeTx, int | None]:
        if txid in self.mempool:
            return self.mempool[txid], None
        for height, (_, txs) in enumerate(self.blocks):
            for tx in txs:
                if tx.txid == txid:
                    return tx, height
        raise KeyError(txid)

    # --- Bitcoin Core JSON-RPC -------------------------------------------------------

    def core_tx(self, tx: FakeTx, height: int | None) -> dict:
        out = copy.deepcopy(CORE["tx"])
        out["txid"] = out["hash"] = tx.txid
        if tx.coinbase:
            out["vin"] = [{"coinbase": "03" + tx.txid[:8], "sequence": 4294967295}]
        out["vout"] = []
        for n, (address, sats) in enumerate(tx.outputs):
            vout = copy.deepcopy(CORE["vout"])
            vout["value"] = f"__BTC:{sats}__"
            vout["n"] = n
            vout["scriptPubKey"]["address"] = address
            vout["scriptPubKey"]["desc"] = f"addr({address})"
            out["vout"].append(vout)
        if height is not None:
            out["blockhash"] = self.blocks[height][0]
            out["confirmations"] = self.height - height + 1
        return out

    def core_call(self, method: str, params: list):
        if method == "getblockcount":
            return self.height
        if method == "getblockchaininfo":
            return dict(
                CORE["blockchaininfo"],
                chain=self.core_chain,
                blocks=self.height,
                headers=self.height,
                bestblockhash=self.blocks[-1][0],
            )
        if method == "getblockhash":
            if not 0 <= params[0] <= self.height:
                raise RpcError(-8, "Block height out of range")
            return self.blocks[params[0]][0]
        if method == "getblock":
            for height, (block_hash, txs) in enumerate(self.blocks):
                if block_hash == params[0]:
                    block = copy.deepcopy(CORE["block"])
                    block.update(hash=block_hash, height=height, confirmations=self.height - height + 1, nTx=len(txs))
                    block["time"] = block["mediantime"] = self.times[block_hash]
                    block["previousblockhash"] = self.blocks[height - 1][0] if height else None
                    block["tx"] = [self.core_tx(tx, height) for tx in txs]
                    return block
            raise RpcError(-5, "Block not found")
        if method == "getrawmempool":
            return list(self.mempool)
        if method == "getmempoolentry":
            if params[0] in self.mempool:
                return dict(CORE["mempoolentry"], time=self.times[params[0]])
            raise RpcError(-5, "Transaction not in mempool")
        if method == "getrawtransaction":
            if params[0] in self.mempool:
                return self.core_tx(self.mempool[params[0]], None)
            raise RpcError(-5, "No such mempool transaction. Use -txindex or provide a block hash.")
        raise RpcError(-32601, "Method not found")

    def core_handler(self, method: str, path: str, body: bytes, headers: dict):
        request = json.loads(body)
        requests = request if isinstance(request, list) else [request]
        answers = []
        for item in requests:
            envelope = dict(CORE["envelope"], id=item.get("id"))
            try:
                envelope["result"] = self.core_call(item["method"], item.get("params") or [])
            except RpcError as exc:
                envelope["error"] = {"code": exc.code, "message": exc.message}
            answers.append(envelope)
        text = json.dumps(answers if isinstance(request, list) else answers[0])
        text = re.sub(r'"__BTC:(\d+)__"', lambda m: str(Decimal(int(m.group(1))) / Decimal(10**8)), text)
        return 200, text.encode()

    # --- Esplora REST ----------------------------------------------------------------

    def esplora_tx(self, tx: FakeTx, height: int | None) -> dict:
        out = copy.deepcopy(ESPLORA["tx"])
        out["txid"] = tx.txid
        out["vout"] = []
        for address, sats in tx.outputs:
            vout = copy.deepcopy(ESPLORA["vout"])
            vout.update(scriptpubkey_address=address, value=sats)
            out["vout"].append(vout)
        if height is not None:
            out["status"] = self.esplora_status(height)
        return out

    def esplora_status(self, height: int) -> dict:
        block_hash = self.blocks[height][0]
        return dict(
            ESPLORA["confirmed_status"], block_height=height, block_hash=block_hash, block_time=self.times[block_hash]
        )

    def address_history(self, address: str) -> tuple[list[dict], list[dict]]:
        mempool = [self.esplora_tx(tx, None) for tx in reversed(self.mempool.values()) if _pays(tx, address)]
        chain = [
            self.esplora_tx(tx, height)
            for height in range(self.height, -1, -1)
            for tx in reversed(self.blocks[height][1])
            if _pays(tx, address)
        ]
        return mempool, chain

    def esplora_block(self, height: int) -> dict:
        block_hash, txs = self.blocks[height]
        return dict(
            ESPLORA["block"],
            id=block_hash,
            height=height,
            tx_count=len(txs),
            timestamp=self.times[block_hash],
            previousblockhash=self.blocks[height - 1][0] if height else None,
        )

    def esplora_handler(self, method: str, path: str, body: bytes, headers: dict):
        if match := re.fullmatch(r"/blocks(?:/(\d+))?", path):
            start = min(int(match.group(1)), self.height) if match.group(1) else self.height
            return 200, [self.esplora_block(h) for h in range(start, max(start - 10, -1), -1)]
        if match := re.fullmatch(r"/block/([0-9a-f]{64})/txs(?:/(\d+))?", path):
            start = int(match.group(2) or 0)
            if start % 25:
                return 400, "start index must be a multipication of 25"
            for height, (block_hash, txs) in enumerate(self.blocks):
                if block_hash == match.group(1):
                    return 200, [self.esplora_tx(tx, height) for tx in txs[start : start + 25]]
            return 404, "Block not found"
        if path == "/mempool/txids":
            return 200, list(self.mempool)
        if match := re.fullmatch(r"/tx/([0-9a-f]{64})", path):
            try:
                tx, height = self.find(match.group(1))
            except KeyError:
                return 404, "Transaction not found"
            return 200, self.esplora_tx(tx, height)
        if path == "/blocks/tip/height":
            return 200, str(self.height)
        if path == "/blocks/tip/hash":
            return 200, self.blocks[-1][0]
        if match := re.fullmatch(r"/block-height/(\d+)", path):
            height = int(match.group(1))
            return (200, self.blocks[height][0]) if height <= self.height else (404, "Block not found")
        if match := re.fullmatch(r"/address/([^/]+)/txs", path):
            mempool, chain = self.address_history(match.group(1))
            return 200, mempool[:50] + chain[:25]
        if match := re.fullmatch(r"/address/([^/]+)/txs/chain/([0-9a-f]+)", path):
            _, chain = self.address_history(match.group(1))
            ids = [tx["txid"] for tx in chain]
            start = ids.index(match.group(2)) + 1 if match.group(2) in ids else len(ids)
            return 200, chain[start : start + 25]
        if match := re.fullmatch(r"/tx/([0-9a-f]+)/status", path):
            try:
                _, height = self.find(match.group(1))
            except KeyError:
                return 404, "Transaction not found"
            if height is None:
                return 200, {"confirmed": False}
            return 200, self.esplora_status(height)
        return 404, "Not found"


def _pays(tx: FakeTx, address: str) -> bool:
    return any(a == address for a, _ in tx.outputs)


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


SOLANA = load_fixture("solana_rpc.json")
SYSTEM_PROGRAM = "11111111111111111111111111111111"


@dataclass
class FakeSolana:
    """A Solana cluster: one transaction per slot, listed for every account it touches."""

    slot: int = 1000
    genesis: str = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d"  # mainnet-beta
    listings: dict[str, list[dict]] = field(default_factory=dict)  # account -> signature entries, newest first
    transactions: dict[str, dict] = field(default_factory=dict)
    by_slot: dict[int, list[str]] = field(default_factory=dict)  # slot -> signatures in its block
    counter: int = 0
    blockhash: str = "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N"
    times: dict[int, int] = field(default_factory=dict)  # slot -> its block's blockTime (unix seconds)
    # The next payment's block time (unix seconds), now when None.
    at: int | None = None

    def pay_sol(
        self,
        *,
        reference: str,
        receiver: str,
        lamports: int,
        payer: str = "PayerSo1111111111111111111111111111111111111",
    ) -> str:
        keys = [(payer, True), (receiver, False), (reference, False), (SYSTEM_PROGRAM, False)]
        pre = [10**12, 5_000_000, 0, 1]
        post = [10**12 - lamports - 5000, 5_000_000 + lamports, 0, 1]
        return self._add(reference, keys, pre, post, [], [])

    def pay_token(
        self,
        *,
        reference: str,
        receiver: str,
        mint: str,
        amount: int,
        payer: str = "PayerSo1111111111111111111111111111111111111",
    ) -> str:
        """An SPL transfer as Solana Pay builds it: to the receiver's associated token account
        (the receiver's wallet itself is not among the transaction's accounts)."""
        from chainwatch.solana import TOKEN_PROGRAM, associated_token_address

        keys = [
            (payer, True),
            ("PayerAta111111111111111111111111111111111111", False),
            (associated_token_address(receiver, mint), False),
            (reference, False),
            (TOKEN_PROGRAM, False),
        ]
        pre_tokens = [self._balance(1, mint, payer, 10**12), self._balance(2, mint, receiver, 7)]
        post_tokens = [self._balance(1, mint, payer, 10**12 - amount), self._balance(2, mint, receiver, 7 + amount)]
        return self._add(
            reference,
            keys,
            [10**9, 2039280, 2039280, 0, 1],
            [10**9 - 5000, 2039280, 2039280, 0, 1],
            pre_tokens,
            post_tokens,
        )

    def add_executed(self, reference: str, effects: dict) -> str:
        """A transaction a Solana runtime executed (its signature, account keys and balance
        changes), listed and served as getTransaction shows it."""
        mint_balances = [
            [self._balance(b["accountIndex"], b["mint"], b["owner"], int(b["amount"])) for b in effects[side]]
            for side in ("preTokenBalances", "postTokenBalances")
        ]
        self.counter += 1
        self.slot += 1
        signature = effects["signature"]
        tx = copy.deepcopy(SOLANA["transaction"])
        tx["slot"] = self.slot
        self.times[self.slot] = self.at if self.at is not None else int(time.time())
        tx["blockTime"] = self.times[self.slot]
        tx["meta"].update(
            preBalances=effects["preBalances"],
            postBalances=effects["postBalances"],
            preTokenBalances=mint_balances[0],
            postTokenBalances=mint_balances[1],
        )
        tx["transaction"]["signatures"] = [signature]
        tx["transaction"]["message"]["accountKeys"] = [dict(SOLANA["account_key"], **k) for k in effects["accountKeys"]]
        self.transactions[signature] = tx
        self.by_slot.setdefault(self.slot, []).append(signature)
        for key in effects["accountKeys"]:
            entry = dict(SOLANA["signature_entry"], signature=signature, slot=self.slot, blockTime=tx["blockTime"])
            self.listings.setdefault(key["pubkey"], []).insert(0, entry)
        return signature

    def _balance(self, index: int, mint: str, owner: str, amount: int) -> dict:
        balance = copy.deepcopy(SOLANA["token_balance"])
        balance.update(accountIndex=index, mint=mint, owner=owner)
        ui = Decimal(amount) / Decimal(10**6)
        balance["uiTokenAmount"].update(amount=str(amount), uiAmountString=str(ui), uiAmount=float(ui))
        return balance

    def _add(self, reference, keys, pre, post, pre_tokens, post_tokens) -> str:
        self.counter += 1
        self.slot += 1
        signature = hashlib.sha256(f"sig{self.counter}".encode()).hexdigest()[:64] + "Sig"
        tx = copy.deepcopy(SOLANA["transaction"])
        tx["slot"] = self.slot
        self.times[self.slot] = self.at if self.at is not None else int(time.time())
        tx["blockTime"] = self.times[self.slot]
        tx["meta"].update(
            preBalances=pre, postBalances=post, preTokenBalances=pre_tokens, postTokenBalances=post_tokens
        )
        tx["transaction"]["signatures"] = [signature]
        tx["transaction"]["message"]["accountKeys"] = [
            dict(SOLANA["account_key"], pubkey=k, signer=s, writable=k != reference) for k, s in keys
        ]
        self.transactions[signature] = tx
        self.by_slot.setdefault(self.slot, []).append(signature)
        for key, _ in keys:
            entry = dict(SOLANA["signature_entry"], signature=signature, slot=self.slot, blockTime=tx["blockTime"])
            self.listings.setdefault(key, []).insert(0, entry)  # newest first
        return signature

    def finalize(self, signature: str) -> None:
        for listing in self.listings.values():
            for entry in listing:
                if entry["signature"] == signature:
                    entry["confirmationStatus"] = "finalized"

    def roll_back(self, signature: str) -> None:
        """A confirmed (not finalized) transaction dropped from the fork the cluster chose."""
        for listing in self.listings.values():
            listing[:] = [e for e in listing if e["signature"] != signature]
        for signatures in self.by_slot.values():
            if signature in signatures:
                signatures.remove(signature)
        self.transactions.pop(signature, None)

    def _status(self, signature: str) -> dict | None:
        for listing in self.listings.values():
            for entry in listing:
                if entry["signature"] == signature:
                    finalized = entry["confirmationStatus"] == "finalized"
                    return dict(
                        SOLANA["signature_status"],
                        slot=entry["slot"],
                        confirmations=None if finalized else max(self.slot - entry["slot"], 0),
                        confirmationStatus=entry["confirmationStatus"],
                    )
        return None

    def _signatures(self, address: str, options: dict) -> list[dict]:
        listing = self.listings.get(address, [])
        ids = [e["signature"] for e in listing]
        before = options.get("before")
        start = 0 if not before else ids.index(before) + 1 if before in ids else len(ids)
        out = []
        for entry in listing[start:]:
            if entry["signature"] == options.get("until"):
                break
            out.append(entry)
        return out[: options.get("limit", 1000)]

    def _block(self, slot: int) -> dict:
        if slot > self.slot:
            raise RpcError(-32004, f"Block not available for slot {slot}")
        block = copy.deepcopy(SOLANA["block"])
        block.update(blockHeight=slot - 100, parentSlot=slot - 1, blockhash=_hash("block", slot)[:44])
        block["blockTime"] = self.times.get(slot, int(time.time()))
        block["previousBlockhash"] = _hash("block", slot - 1)[:44]
        block["transactions"] = []
        for signature in self.by_slot.get(slot, []):
            tx = copy.deepcopy(self.transactions[signature])
            block["transactions"].append({"meta": tx["meta"], "transaction": tx["transaction"], "version": 0})
        return block

    def call(self, method: str, params: list):
        if method == "getSlot":
            return self.slot
        if method == "getGenesisHash":
            return self.genesis
        if method == "getLatestBlockhash":
            return {
                "context": {"slot": self.slot},
                "value": {"blockhash": self.blockhash, "lastValidBlockHeight": self.slot + 150},
            }
        if method == "getSignaturesForAddress":
            return self._signatures(params[0], params[1] if len(params) > 1 else {})
        if method == "getTransaction":
            return self.transactions.get(params[0])
        if method == "getSignatureStatuses":
            return {"context": {"slot": self.slot}, "value": [self._status(s) for s in params[0]]}
        if method == "getBlocks":
            end = min(params[1], self.slot)
            return list(range(params[0], end + 1))  # every slot produced a block here
        if method == "getBlock":
            return self._block(params[0])
        if method == "getMultipleAccounts":
            from chainwatch.solana import TOKEN_PROGRAM

            return {
                "context": {"slot": self.slot},
                "value": [dict(SOLANA["mint_account"], owner=TOKEN_PROGRAM) for _ in params[0]],
            }
        raise RpcError(-32601, "Method not found")

    def handler(self, method: str, path: str, body: bytes, headers: dict):
        request = json.loads(body)
        requests = request if isinstance(request, list) else [request]
        answers = []
        for item in requests:
            envelope = dict(SOLANA["envelope"], id=item["id"])
            try:
                envelope["result"] = self.call(item["method"], item.get("params") or [])
            except RpcError as exc:
                envelope.pop("result")
                envelope["error"] = {"code": exc.code, "message": exc.message}
            answers.append(envelope)
        return 200, answers if isinstance(request, list) else answers[0]
