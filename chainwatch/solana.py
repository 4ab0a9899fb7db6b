"""Solana through JSON-RPC (raw, batched; solana-py 0.41 has no sync client).

Solana Pay puts a unique reference key in each draft's transfer, so each open draft costs
one getSignaturesForAddress per pass (sent as JSON-RPC batches, rate-limited), and each
new signature one getTransaction (jsonParsed). The amount comes from the balance change of
the receiver: lamports from pre/postBalances, SPL tokens from pre/postTokenBalances of the
draft's mint owned by the receiver. Commitment: confirmed -> Seen, finalized -> Confirmed.
"""

from __future__ import annotations

from django.conf import settings

from chainwatch import services
from chainwatch.models import WHOLE_TX_INDEX, ObservedTransfer
from chainwatch.networks import SOLANA, token_addresses
from chainwatch.services import TransferData
from chainwatch.transport import ChainError, JsonRpc
from chainwatch.watcher import PassReport
from drafts.selectors import WatchTarget, watch_targets
from payments.enums import Currency, Network

GENESIS_HASHES = {
    Network.SOLANA: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    Network.SOLANA_DEVNET: "EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG",
}


def _account_keys(tx: dict) -> list[str]:
    keys = tx["transaction"]["message"]["accountKeys"]
    return [k["pubkey"] if isinstance(k, dict) else k for k in keys]


def received_base_units(tx: dict, *, receiver: str, mint: str | None) -> int:
    """What `receiver` gained in this transaction: lamports, or base units of `mint`."""
    meta = tx.get("meta") or {}
    if mint is None:
        keys = _account_keys(tx)
        if receiver not in keys:
            return 0
        i = keys.index(receiver)
        return int(meta["postBalances"][i]) - int(meta["preBalances"][i])

    def owned(balances: list[dict]) -> int:
        return sum(
            int(b["uiTokenAmount"]["amount"])
            for b in balances or []
            if b.get("mint") == mint and b.get("owner") == receiver
        )

    return owned(meta.get("postTokenBalances")) - owned(meta.get("preTokenBalances"))


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

    def signatures(self, references: list[str]) -> list[list[dict]]:
        limit = settings.CHAINWATCH_SOLANA_SIGNATURES_PER_REFERENCE
        calls = [("getSignaturesForAddress", [r, {"commitment": "confirmed", "limit": limit}]) for r in references]
        return [r or [] for r in self.rpc.batch(calls)]

    def transactions(self, signatures: list[str]) -> list[dict | None]:
        options = {"encoding": "jsonParsed", "commitment": "confirmed", "maxSupportedTransactionVersion": 0}
        return self.rpc.batch([("getTransaction", [s, options]) for s in signatures])


def solana_pass(network: str, url: str) -> PassReport:
    client = SolanaClient(url)
    cursor = services.cursor_get(network=network, family=SOLANA, backend="solana-jsonrpc")
    targets = [t for t in watch_targets(network=network) if t.solana_reference]
    slot = client.slot(network)
    report = PassReport(network=network, family=SOLANA, head=slot, start=cursor.height, end=slot)

    listings = client.signatures([t.solana_reference for t in targets])
    known = {
        t.txid: t
        for t in ObservedTransfer.objects.filter(
            network=network, solana_reference__in=[t.solana_reference for t in targets]
        )
    }
    wanted: list[tuple[WatchTarget, dict]] = []
    for target, listing in zip(targets, listings, strict=True):
        for entry in listing:
            if entry.get("err") is None:
                wanted.append((target, entry))
    fresh = [(t, e) for t, e in wanted if e["signature"] not in known]
    fetched = client.transactions([e["signature"] for _, e in fresh])
    details = {e["signature"]: tx for (_, e), tx in zip(fresh, fetched, strict=True)}

    transfers: list[TransferData] = []
    for target, entry in wanted:
        signature = entry["signature"]
        finalized = entry.get("confirmationStatus") == "finalized"
        if signature in known:
            old = known[signature]
            amount, mint = old.amount_base_units, old.token_address
        else:
            tx = details.get(signature)
            if not tx or (tx.get("meta") or {}).get("err") is not None:
                continue
            mint = "" if target.currency == Currency.SOL else _mint(network, target)
            amount = received_base_units(tx, receiver=target.receiver_address, mint=mint or None)
            if amount <= 0:
                continue
        transfers.append(
            TransferData(
                network=network,
                txid=signature,
                index=WHOLE_TX_INDEX,
                currency=target.currency,
                token_address=mint,
                receiver_address=target.receiver_address,
                amount_base_units=amount,
                block_height=int(entry["slot"]),
                block_hash="",
                finalized=finalized,
                solana_reference=target.solana_reference,
            )
        )
    services.transfers_record(transfers=transfers)
    # A confirmed (not finalized) signature that its reference no longer lists was rolled back.
    listed = {e["signature"] for _, e in wanted}
    gone = [(t.txid, t.index) for t in known.values() if not t.finalized and not t.orphaned and t.txid not in listed]
    services.transfers_orphan(network=network, keys=gone)
    services.cursor_progress(network=network, family=SOLANA, head=slot, height=slot)
    report.transfers = len(transfers)
    return report


def _mint(network: str, target: WatchTarget) -> str:
    mint = target.token_address or token_addresses(network).get(target.currency)
    if not mint:
        raise ChainError(f"{network}: no mint configured for {target.currency}")
    return mint
