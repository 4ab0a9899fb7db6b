"""Watcher state: one cursor per network, the block hashes it remembers, and every
transfer it has observed (stored once under its on-chain key)."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from payments.enums import Network

# A block's timestamp is set by its producer: on Ethereum the start of its 12-second slot, so a
# transaction may be a little younger than its block says. Allow that and some clock skew. A
# Bitcoin miner may stamp a block up to an hour behind (the median-time rule): its time counts
# only with ten minutes of slack; the mempool entry time is the watchers' first evidence there.
BLOCK_TIME_SLACK = timedelta(minutes=1)
BITCOIN_BLOCK_TIME_SLACK = timedelta(minutes=10)
BITCOIN_NETWORKS = (Network.MAINNET, Network.TESTNET, Network.SIGNET, Network.REGTEST)

# ObservedTransfer.index for transfers that have no output or log index of their own.
NATIVE_INDEX = -1  # native ETH value of an EVM transaction
LIGHTNING_INDEX = -2  # a settled Lightning invoice (txid is the payment hash)
WHOLE_TX_INDEX = 0  # a Solana transaction
# Native ETH moved by a contract's internal CALL: this minus the call's ordinal among the
# transaction's value-moving internal calls (-1000, -1001, ...), so one transaction paying
# two drafts is two transfers and never collides with a log index.
INTERNAL_CALL_INDEX = -1000


class Cursor(models.Model):
    """Where a network's watcher stopped: the last block (or slot) it fully processed."""

    network = models.CharField(max_length=16, choices=Network.choices)
    # Chain family: bitcoin, evm, solana, lightning (Lightning drafts share Bitcoin's network names).
    family = models.CharField(max_length=16)
    backend = models.CharField(max_length=32, blank=True)
    height = models.BigIntegerField(null=True, blank=True)
    block_hash = models.CharField(max_length=128, blank=True)
    head = models.BigIntegerField(null=True, blank=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_advanced_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    # EVM: the trace method the node answered on the watcher's first pass in its process
    # ("trace_filter", "debug_traceBlockByNumber"), "none", or empty before it was asked.
    traces = models.CharField(max_length=32, blank=True)
    # Where a watcher without blocks stopped in its provider's own index: LND's settle_index
    # ("settle:N") or, until a settlement was read, its add_index before the oldest invoice
    # still open; LNbits' newest updated_at of a settled payment.
    position = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["network", "family"]
        constraints = [models.UniqueConstraint(fields=["network", "family"], name="cursor_unique_watcher")]

    def __str__(self) -> str:
        return f"{self.network} {self.family} at {self.height}"

    @property
    def lag(self) -> int | None:
        if self.head is None or self.height is None:
            return None
        return max(self.head - self.height, 0)


class SeenBlock(models.Model):
    """A block hash the watcher built on; re-checked each pass to notice reorgs."""

    network = models.CharField(max_length=16, choices=Network.choices)
    height = models.BigIntegerField()
    block_hash = models.CharField(max_length=128)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["network", "-height"]
        constraints = [models.UniqueConstraint(fields=["network", "height"], name="seen_block_unique_height")]

    def __str__(self) -> str:
        return f"{self.network} #{self.height} {self.block_hash[:16]}"


class ObservedTransfer(models.Model):
    """One payment to a watched receiver: a Bitcoin output, an ERC-20 Transfer log, a native
    transfer, a Solana transaction or a settled Lightning invoice.

    `index` is the output index (Bitcoin) or the log index (ERC-20); see NATIVE_INDEX,
    INTERNAL_CALL_INDEX, LIGHTNING_INDEX and WHOLE_TX_INDEX for the rest.
    """

    network = models.CharField(max_length=16, choices=Network.choices)
    txid = models.CharField(max_length=128)
    index = models.IntegerField()
    currency = models.CharField(max_length=8)
    token_address = models.CharField(max_length=64, blank=True)
    receiver_address = models.CharField(max_length=128)
    amount_base_units = models.BigIntegerField()
    # Native EVM amounts arrive in wei; only exact multiples of 1 gwei can match a draft exactly.
    raw_amount = models.DecimalField(max_digits=78, decimal_places=0, null=True, blank=True)
    # None while only in the mempool (or not yet in a block the watcher trusts).
    block_height = models.BigIntegerField(null=True, blank=True)
    block_hash = models.CharField(max_length=128, blank=True)
    # The block's own timestamp where the chain's is trustworthy (EVM); matching reads it.
    block_time = models.DateTimeField(null=True, blank=True)
    # Solana commitment ("processed", "confirmed", "finalized") and Lightning settlement.
    finalized = models.BooleanField(default=False)
    # A coinbase output (Bitcoin): spendable only after COINBASE_MATURITY blocks.
    coinbase = models.BooleanField(default=False)
    # True once the block holding it left the chain; cleared when it shows up again.
    orphaned = models.BooleanField(default=False)
    # Other outputs of the same transaction {address: base units}, for the MultiOutput fee check.
    tx_outputs = models.JSONField(default=dict, blank=True)
    # MultiOutput only: did the paying transaction carry the platform fee output?
    # None where it does not apply. False means the fee accrues instead (fee ledger reads this).
    fee_output_present = models.BooleanField(null=True, blank=True)
    solana_reference = models.CharField(max_length=64, blank=True)
    draft = models.ForeignKey(
        "drafts.Draft", null=True, blank=True, on_delete=models.PROTECT, related_name="observed_transfers"
    )
    confirmations = models.IntegerField(default=0)
    first_seen_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-first_seen_at"]
        constraints = [
            models.UniqueConstraint(fields=["network", "txid", "index"], name="observed_transfer_unique_key"),
        ]
        indexes = [
            models.Index(fields=["network", "receiver_address"]),
            models.Index(fields=["network", "block_height"]),
        ]

    def __str__(self) -> str:
        return f"{self.network} {self.txid}:{self.index} {self.amount_base_units} {self.currency}"

    @property
    def made_at(self) -> datetime:
        """When the transfer was made, as far as the watchers can tell: when first seen (the
        node's mempool entry time where it gives one), or earlier when its block says so, so a
        payment made before a draft existed never pays that draft (docs/decisions.md)."""
        if self.block_time is None:
            return self.first_seen_at
        slack = BITCOIN_BLOCK_TIME_SLACK if self.network in BITCOIN_NETWORKS else BLOCK_TIME_SLACK
        return min(self.first_seen_at, self.block_time + slack)


class UnmatchedTransfer(models.Model):
    """A transfer to an address where the account has (or had, within the late-payment grace
    window) a draft for the same asset, which pays none of them: an amount too far off, a
    second payment, a payment before the draft existed or after its grace window. Kept per
    account so the owner can account for it or attach it to a draft."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="unmatched_transfers")
    transfer = models.ForeignKey(ObservedTransfer, on_delete=models.CASCADE, related_name="unmatched_reports")
    candidate_draft_ids = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)
    # Set when it later pays a draft (the last part of a split payment, or attached by the owner).
    matched_draft = models.ForeignKey(
        "drafts.Draft", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    matched_at = models.DateTimeField(null=True, blank=True)
    # Why it paid none of the candidate drafts, when the matcher can tell: "sentBeforeDraft".
    reason = models.CharField(max_length=32, blank=True)
    # Followed to finality as a draft's payment is (chainwatch.unmatched.reports_follow): final
    # once it can no longer leave the chain; reverted while a reorg has taken it off the chain.
    final_at = models.DateTimeField(null=True, blank=True)
    reverted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["user", "transfer"], name="unmatched_transfer_once_per_account")]
        indexes = [models.Index(fields=["created_at"], name="unmatched_transfer_created_at")]  # retention

    def __str__(self) -> str:
        return f"{self.transfer} for {self.user_id}"


class TransferQuorum(models.Model):
    """What each of a network's endpoints says about one observed transfer, when several are
    configured (chainwatch/quorum.py): the transfer is Seen from the endpoint in `source`, and
    Confirmed only at the depth `agreed_confirmations` (or `agreed_final`) that the quorum of
    endpoints agrees on. `answers`: one entry per endpoint (its label, never its URL)."""

    transfer = models.OneToOneField(ObservedTransfer, on_delete=models.CASCADE, related_name="quorum")
    source = models.CharField(max_length=128, blank=True)
    answers = models.JSONField(default=list, blank=True)
    agreed_confirmations = models.IntegerField(default=0)
    agreed_final = models.BooleanField(default=False)
    # Set while an endpoint that is up and has the block says something else (or nothing).
    disagreeing_since = models.DateTimeField(null=True, blank=True)
    operator_notified_at = models.DateTimeField(null=True, blank=True)
    checked_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["disagreeing_since"])]

    def __str__(self) -> str:
        return f"{self.transfer}: {self.agreed_confirmations} agreed"
