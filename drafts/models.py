from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Upper
from django.utils import timezone

from core.ids import time_ordered_uuid
from drafts.enums import DraftStatus
from drafts.requests import OriginKind
from payments.enums import Currency, FeePlacement, Method, Network
from payments.money import MoneyField

OPEN_STATUSES = (DraftStatus.PENDING, DraftStatus.SEEN, DraftStatus.AMOUNT_MISMATCH)
# Networks matched by (network, address, asset, exact amount); Solana uses a reference, Lightning a hash.
TUPLE_MATCHED_NETWORKS = (
    Network.MAINNET,
    Network.TESTNET,
    Network.SIGNET,
    Network.REGTEST,
    Network.ETHEREUM,
    Network.SEPOLIA,
    Network.BASE,
    Network.BASE_SEPOLIA,
)


class Draft(models.Model):
    """A payment instruction: what to pay, to whom, and what has been seen on chain."""

    id = models.UUIDField(primary_key=True, default=time_ordered_uuid, editable=False)  # core/ids.py
    # Indexed by (user, -created_at) below: a plain user index would only slow every INSERT.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="drafts", db_index=False)

    network = models.CharField(max_length=16, choices=Network.choices)
    currency = models.CharField(max_length=8, choices=Currency.choices)
    method = models.CharField(max_length=16, choices=Method.choices)
    token_address = models.CharField(max_length=64, null=True, blank=True)

    receiver_address = models.CharField(max_length=128, null=True, blank=True)
    sender_address = models.CharField(max_length=128, null=True, blank=True)
    lightning_address = models.CharField(max_length=320, null=True, blank=True)
    memo = models.CharField(max_length=500, null=True, blank=True)

    # Receiver amount in base units of the sent asset (sats, 6-decimal token units, lamports, gwei).
    amount_base_units = models.BigIntegerField()

    # Pricing. For fiat-priced drafts, rate is fiat per whole asset unit; usd_rate is USD per whole unit.
    fiat_currency = models.CharField(max_length=3, null=True, blank=True)
    fiat_amount = MoneyField(null=True, blank=True)
    rate = MoneyField(null=True, blank=True)
    usd_rate = MoneyField(null=True, blank=True)
    rate_source = models.CharField(max_length=200, blank=True)
    # Kept for audit: whether the rate was live, and each source's price behind each leg.
    quote_sources = models.JSONField(null=True, blank=True)
    quote_locked_at = models.DateTimeField(null=True, blank=True)
    quote_expires_at = models.DateTimeField(null=True, blank=True)
    quote_nudge_base_units = models.BigIntegerField(default=0)
    sek = models.JSONField(null=True, blank=True)

    # Fee
    fee_usd = MoneyField(default=0)
    fee_base_units = models.BigIntegerField(default=0)
    fee_placement = models.CharField(max_length=8, choices=FeePlacement.choices)
    platform_fee = models.JSONField(default=dict)
    platform_fee_address = models.CharField(max_length=128, null=True, blank=True)
    is_fee_settlement = models.BooleanField(default=False)

    # Lightning
    bolt11 = models.TextField(null=True, blank=True)
    payment_hash = models.CharField(max_length=64, null=True, blank=True)  # indexed below (equality only)
    invoice_expires_at = models.DateTimeField(null=True, blank=True)
    lnurl_verify_url = models.URLField(max_length=2048, null=True, blank=True)

    # Solana Pay reference (unique public key per draft)
    solana_reference = models.CharField(max_length=64, null=True, blank=True, unique=True)
    payment_uri = models.TextField(null=True, blank=True)

    # Lifecycle
    status = models.CharField(max_length=16, choices=DraftStatus.choices, default=DraftStatus.PENDING)
    paid_tx_id = models.CharField(max_length=128, null=True, blank=True)
    # Every transaction that pays the draft: one, or the parts of a split payment.
    paid_tx_ids = models.JSONField(default=list, blank=True)
    confirmations = models.IntegerField(default=0)
    required_confirmations = models.IntegerField()
    received_base_units = models.BigIntegerField(null=True, blank=True)
    amount_mismatch = models.JSONField(null=True, blank=True)
    accepted_by_owner = models.BooleanField(default=False)
    paid_late = models.BooleanField(default=False)
    expires_at = models.DateTimeField()
    seen_at = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    # A Confirmed payment stays watched until it is this deep or final (FINALITY_DEPTHS); a reorg
    # before then takes the draft back (payment_reverted_at, reverted_tx_ids).
    finalized_at = models.DateTimeField(null=True, blank=True)
    # The last payment that left the chain after the draft was Seen or Confirmed: when, and its txids.
    payment_reverted_at = models.DateTimeField(null=True, blank=True)
    reverted_tx_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)

    # Where the draft came from (drafts.requests.Origin): the API, a pay link and its order,
    # a recurring template, the demo or a fee settlement.
    origin = models.CharField(max_length=20, choices=OriginKind.choices, default=OriginKind.API)
    payment_request_id = models.UUIDField(null=True, blank=True, db_index=True)
    order_id = models.CharField(max_length=200, null=True, blank=True)
    template_id = models.UUIDField(null=True, blank=True)
    # A pay link's payer switched to another option: this draft was left (cancelled, or expired
    # when already past its time). Hidden from the default list, shown under its pay link.
    superseded_at = models.DateTimeField(null=True, blank=True)
    # A matched-by-amount draft that was paid, expired or cancelled keeps its amount at its
    # address until then (AMOUNT_RESERVATION_DAYS): no new draft bills it meanwhile (drafts.amounts).
    amount_held_until = models.DateTimeField(null=True, blank=True)
    # False for a draft made in test mode (accounts.modes): seen only by test keys, never in fees.
    livemode = models.BooleanField(default=True)
    # Paid at a fresh address of the merchant's receiving wallet (wallets.ReceivingWallet):
    # the wallet and the index of receiver_address on its receive branch.
    receiving_wallet_id = models.UUIDField(null=True, blank=True)
    derivation_index = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # An account's lists in its mode, newest first (keyset on created, id), and their
            # counts read from the index alone; a status filter has its own.
            models.Index(fields=["user", "livemode", "-created_at", "-id"], name="draft_account_list"),
            models.Index(fields=["user", "livemode", "status", "-created_at", "-id"], name="draft_account_status"),
            models.Index(
                fields=["user", "livemode", "network", "currency", "-created_at", "-id"], name="draft_account_asset"
            ),
            models.Index(fields=["status", "expires_at"]),
            # Every fiat-priced creation reads the open amounts just above its own to the same
            # address (the unique-amount nudge): only open drafts, so the look-up stays one short
            # range however many drafts that address has had.
            models.Index(
                fields=["network", "receiver_address", "currency", "amount_base_units"],
                condition=Q(status__in=OPEN_STATUSES),
                name="draft_open_amounts",
            ),
            # The amounts closed drafts still hold (drafts.amounts): the same look-up as above, over
            # the drafts closed within the reservation window only (older ones end the range scan
            # in the index, as their end lies in the past).
            models.Index(
                fields=["network", "receiver_address", "currency", "amount_base_units", "amount_held_until"],
                condition=Q(amount_held_until__isnull=False),
                name="draft_held_amounts",
            ),
            models.Index(fields=["user"], condition=Q(is_fee_settlement=True), name="draft_fee_settlements"),
            # The needs-attention list's reverted payments (attention/): few rows, however many
            # open drafts the account has.
            models.Index(
                fields=["user", "livemode"],
                condition=Q(payment_reverted_at__isnull=False, paid_tx_id__isnull=True),
                name="draft_reverted_unpaid",
            ),
            # Confirmed payments the watchers follow until finality (chainwatch.matching).
            models.Index(
                fields=["network"],
                condition=Q(status=DraftStatus.CONFIRMED, finalized_at__isnull=True),
                name="draft_confirmed_not_final",
            ),
            # Looked up by equality only: no second, LIKE-shaped index as db_index=True would add.
            models.Index(fields=["payment_hash"], name="draft_payment_hash"),
            # The list's search (drafts.selectors.draft_list `q`): one index per exact branch of
            # its OR (the memo's is a range of draft_account_list), so the few matching rows are read.
            models.Index(Upper("receiver_address"), name="draft_search_receiver"),
            models.Index(Upper("paid_tx_id"), name="draft_search_paid_tx"),
            models.Index(fields=["order_id"], condition=Q(order_id__isnull=False), name="draft_search_order_id"),
            models.Index(
                fields=["receiving_wallet_id", "derivation_index"],
                condition=Q(receiving_wallet_id__isnull=False),
                name="draft_wallet_addresses",
            ),
        ]
        constraints = [
            # Exact-amount matching must be unambiguous among an account's open drafts (between
            # accounts the matcher refuses to guess; docs/decisions.md, Matching).
            models.UniqueConstraint(
                fields=["user", "network", "receiver_address", "currency", "amount_base_units"],
                condition=Q(status__in=OPEN_STATUSES, network__in=TUPLE_MATCHED_NETWORKS),
                name="draft_unique_open_match_tuple",
            ),
            models.CheckConstraint(condition=Q(amount_base_units__gt=0), name="draft_amount_positive"),
            # One Lightning invoice pays one draft: the watcher matches by payment hash, so a second
            # draft on the same invoice would be confirmed by the same payment (or never).
            models.UniqueConstraint(
                fields=["payment_hash"],
                condition=Q(payment_hash__isnull=False) & ~Q(status=DraftStatus.CANCELLED),
                name="draft_unique_payment_hash",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.amount_base_units} {self.currency} on {self.network} ({self.status})"

    @property
    def is_open(self) -> bool:
        return self.status in OPEN_STATUSES


class IdempotencyKey(models.Model):
    """One Idempotency-Key per account, holding the answer of the first request made with it."""

    class State(models.TextChoices):
        IN_PROGRESS = "in_progress"
        DONE = "done"

    # The unique (user, key) constraint serves look-ups by user: no index of its own.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, db_index=False)
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=State.choices, default=State.IN_PROGRESS)
    response_status = models.IntegerField(null=True, blank=True)
    # The answer's JSON text exactly as it was sent, so a replay sends the same bytes (and
    # PostgreSQL stores text, which costs it a fifth of parsing the same answer into jsonb).
    response_body = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique_per_user")]

    def __str__(self) -> str:
        return f"{self.key} ({self.state})"
