"""Turn observed transfers into state-machine calls (drafts/services.py).

Bitcoin and EVM match by (network, receiver address, asset, exact base units); a draft paid at
a receiving wallet's fresh address (drafts.wallets) is the one draft of that address, so it
takes the transfers to it before any other account's draft there; Solana by
the draft's reference; Lightning by payment hash. A transfer within 10% of the amount of the
only draft near it at the same address and asset is reported as a mismatch on that draft.
A transfer is never guessed onto a draft when another draft's amount there fits it as well:
the exact amount of a paid draft (Seen, AmountMismatch, Confirmed), or within 10% of any
draft paid or holding its amount after it closed (drafts.amounts, AMOUNT_RESERVATION_DAYS).
It is then reported unmatched (chainwatch.unmatched), so a repeated payment of a paid draft
is reported on that draft and never pays another.
Every call here is safe to repeat: the state machine locks the draft and ignores what it
has already recorded, so two passes running at once never confirm or announce twice.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from datetime import datetime, timedelta
from itertools import combinations

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from chainwatch import unmatched
from chainwatch.models import LIGHTNING_INDEX, ObservedTransfer
from chainwatch.networks import token_address
from drafts import services as draft_services
from drafts.enums import DraftStatus
from drafts.models import OPEN_STATUSES, Draft
from drafts.selectors import watched_drafts
from payments.enums import Method

logger = logging.getLogger(__name__)

# Statuses in which a draft can still be paid by a transfer it has not seen yet.
_PAYABLE = (DraftStatus.PENDING, DraftStatus.EXPIRED)
# Statuses of a draft a transfer has paid: the exact amount arriving again is a repeated payment.
_PAID = (DraftStatus.SEEN, DraftStatus.AMOUNT_MISMATCH, DraftStatus.CONFIRMED)


def _same_asset(draft: Draft, transfer: ObservedTransfer) -> bool:
    if draft.currency != transfer.currency:
        return False
    expected = draft.token_address or token_address(draft.network, draft.currency) or ""
    return expected.lower() == transfer.token_address.lower()


def _is_exact(transfer: ObservedTransfer, draft: Draft) -> bool:
    # Native EVM amounts: a wei value that is not a whole number of gwei is never the billed amount.
    whole = transfer.raw_amount is None or transfer.raw_amount % 10**9 == 0 or transfer.currency != "ETH"
    return whole and transfer.amount_base_units == draft.amount_base_units


# A block's timestamp is set by its producer: on Ethereum the start of its 12-second slot, so a
# transaction may be a little younger than its block says. Allow that and some clock skew.
BLOCK_TIME_SLACK = timedelta(minutes=1)


def paid_at(transfer: ObservedTransfer) -> datetime:
    """When the transfer was made, as far as matching can tell: when first seen, or earlier when
    its block says so — a watcher that reads a block late must not let a payment made before a
    draft existed pay that draft."""
    if transfer.block_time is None:
        return transfer.first_seen_at
    return min(transfer.first_seen_at, transfer.block_time + BLOCK_TIME_SLACK)


def find_draft(transfer: ObservedTransfer, *, now: datetime) -> Draft | None:
    """The draft this transfer pays, if any (read only; the state machine decides the rest).

    Several accounts may bill the same amount to one address (uniqueness is per account): a
    transfer that fits drafts of more than one account is not given to any of them — the
    matcher never guesses whose money it is (docs/decisions.md, Matching).
    """
    drafts = watched_drafts(network=transfer.network, now=now).filter(created_at__lte=paid_at(transfer))
    if transfer.solana_reference:
        draft = drafts.filter(solana_reference=transfer.solana_reference).first()
        return draft if draft and _same_asset(draft, transfer) else None
    if transfer.index == LIGHTNING_INDEX:
        return drafts.filter(method=Method.LIGHTNING, payment_hash=transfer.txid).first()
    candidates = [
        d
        for d in drafts.filter(receiver_address__iexact=transfer.receiver_address, status__in=_PAYABLE).exclude(
            method=Method.LIGHTNING
        )
        if _same_asset(d, transfer)
    ]
    own = [d for d in candidates if d.receiving_wallet_id is not None]
    if own:  # a receiving wallet's fresh address is its draft's alone: matched by address
        candidates = own
    exact = [d for d in candidates if _is_exact(transfer, d)]
    if exact:
        if any(_is_exact(transfer, d) and d.status in _PAID for d in _holders(transfer, payable=candidates)):
            return _not_guessed(transfer, "is the amount of a draft paid already")
        return _unambiguous(exact, transfer)
    near = [d for d in candidates if _is_near(transfer, d)]
    if not near:
        return None
    if len(near) > 1 or any(_is_near(transfer, d) for d in _holders(transfer, payable=candidates)):
        return _not_guessed(transfer, "is near the amounts of several drafts")
    return near[0]


def _is_near(transfer: ObservedTransfer, draft: Draft) -> bool:
    return draft_services.is_within_mismatch_window(draft.amount_base_units, transfer.amount_base_units)


def _holders(transfer: ObservedTransfer, *, payable: list[Draft]) -> list[Draft]:
    """Drafts at the transfer's address and asset, other than the `payable` ones, whose amount
    is still theirs: paid (Seen, AmountMismatch), or closed and holding it (drafts.amounts).
    Only those within 10% of the transfer are read."""
    at = paid_at(transfer)
    amount = transfer.amount_base_units
    drafts = (
        Draft.objects.filter(
            network=transfer.network,
            receiver_address__iexact=transfer.receiver_address,
            currency=transfer.currency,
            created_at__lte=at,
            amount_base_units__gte=amount * 10 // 11,
            amount_base_units__lte=amount * 10 // 9 + 1,
        )
        .filter(Q(status__in=(DraftStatus.SEEN, DraftStatus.AMOUNT_MISMATCH)) | Q(amount_held_until__gte=at))
        .exclude(pk__in=[d.pk for d in payable])
        .exclude(method=Method.LIGHTNING)
    )
    return [d for d in drafts if _same_asset(d, transfer)]


def _not_guessed(transfer: ObservedTransfer, why: str) -> None:
    logger.info("%s transfer %s:%s %s; not matched, reported", transfer.network, transfer.txid, transfer.index, why)
    return None


def _unambiguous(drafts: list[Draft], transfer: ObservedTransfer) -> Draft | None:
    """The first draft, unless the list spans accounts."""
    if len({d.user_id for d in drafts}) > 1:
        logger.warning(
            "%s transfer %s:%s fits open drafts of %d accounts; not matched to any",
            transfer.network,
            transfer.txid,
            transfer.index,
            len({d.user_id for d in drafts}),
        )
        return None
    return drafts[0]


def _fee_output_present(transfer: ObservedTransfer, draft: Draft) -> bool | None:
    if draft.method != Method.MULTI_OUTPUT:
        return None
    if not draft.platform_fee_address or draft.fee_base_units <= 0:
        return None
    return transfer.tx_outputs.get(draft.platform_fee_address, 0) >= draft.fee_base_units


def _confirmations(transfer: ObservedTransfer, head: int | None) -> int:
    if transfer.block_height is None or head is None:
        return 0
    return max(head - transfer.block_height + 1, 0)


def _observation(transfers: list[ObservedTransfer], draft: Draft, head: int | None):
    """One observation of a draft's payment from the transfers that make it up (one, or the
    parts of a split payment): their sum, the fewest confirmations, final only when all are."""
    first = transfers[0]
    return draft_services.PaymentObservation(
        tx_id=first.txid,
        received_base_units=sum(t.amount_base_units for t in transfers),
        confirmations=min(_confirmations(t, head) for t in transfers),
        amount_exact=all(_is_exact_part(t) for t in transfers) if len(transfers) > 1 else _is_exact(first, draft),
        fee_output_present=_fee_output_present(first, draft) if len(transfers) == 1 else None,
        final=all(t.finalized for t in transfers),
        vanished=any(t.orphaned for t in transfers),
        parts=tuple(t.txid for t in transfers) if len(transfers) > 1 else (),
    )


def _is_exact_part(transfer: ObservedTransfer) -> bool:
    return transfer.raw_amount is None or transfer.raw_amount % 10**9 == 0 or transfer.currency != "ETH"


def _apply(draft: Draft, transfers: list[ObservedTransfer], *, head: int | None, now: datetime) -> Draft:
    """Hand the observation to the drafts door and record the link on the transfers it took."""
    transfers = sorted(transfers, key=lambda t: (t.txid != draft.paid_tx_id, t.first_seen_at, t.pk))
    result = draft_services.draft_payment_apply(
        draft_id=draft.id, observation=_observation(transfers, draft, head), now=now
    )
    paid = set(result.paid_tx_ids or ([result.paid_tx_id] if result.paid_tx_id else []))
    for transfer in transfers:
        if transfer.orphaned or transfer.txid not in paid:
            continue
        updates = {"confirmations": _confirmations(transfer, head)}
        if transfer.draft_id is None:
            updates |= {"draft": draft, "fee_output_present": _fee_output_present(transfer, draft)}
        ObservedTransfer.objects.filter(pk=transfer.pk).update(**updates)
        transfer.draft_id = draft.id
    if paid:
        unmatched.reports_matched(transfer_ids=[t.pk for t in transfers if t.txid in paid], draft=result, now=now)
    released = [t for t in transfers if t.draft_id == draft.id and t.txid not in paid]
    if released:
        # No longer this draft's payment (a reorg took it away and the draft went back to
        # Pending): from now on it is a transfer like any other, so if it comes back after the
        # draft was paid by another, it is reported rather than hidden behind a stale link.
        ObservedTransfer.objects.filter(pk__in=[t.pk for t in released]).update(draft=None)
        unmatched.reports_reopen(transfer_ids=[t.pk for t in released])
        for transfer in released:
            transfer.draft_id = None
    return result


def _apply_linked(draft: Draft, transfers: list[ObservedTransfer], *, head: int | None, now: datetime) -> None:
    """Transfers already linked to a draft: its current payment (confirmations, reorgs), or, for a
    draft sent back to Pending by a reorg, the linked transfers that are on chain again."""
    current = set(draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else []))
    if current:
        parts = [t for t in transfers if t.txid in current]
    else:
        parts = [t for t in transfers if not t.orphaned]
    if parts:
        _apply(draft, parts, head=head, now=now)


def transfer_apply(transfer: ObservedTransfer, *, head: int | None, now: datetime) -> Draft | None:
    """Find the draft one stored, unlinked transfer pays (exact or within 10%) and apply it."""
    if transfer.orphaned:
        return None
    draft = find_draft(transfer, now=now)
    if draft is None:
        return None
    return _apply(draft, [transfer], head=head, now=now)


def transfers_to_apply(*, network: str, lightning: bool, now: datetime):
    """Transfers that may still move a draft: unmatched recent ones and those of open drafts."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    open_draft = Q(draft__status__in=(*OPEN_STATUSES, DraftStatus.EXPIRED))
    recent_unmatched = Q(draft__isnull=True, orphaned=False, first_seen_at__gte=now - grace)
    transfers = ObservedTransfer.objects.filter(network=network).filter(open_draft | recent_unmatched)
    transfers = transfers.filter(index=LIGHTNING_INDEX) if lightning else transfers.exclude(index=LIGHTNING_INDEX)
    return transfers.select_related("draft").order_by("first_seen_at", "pk")


def match_network(*, network: str, head: int | None, lightning: bool = False, now: datetime | None = None) -> int:
    """Apply every transfer that can still matter on `network`; returns how many were applied.

    1. Transfers already paying a draft: one observation per draft (confirmations, reorgs).
    2. Each other transfer: the draft it pays alone, exact or within 10%.
    3. What is left: split payments — parts that together pay a draft exactly.
    4. What is still left, once settled on chain: reported as unmatched to each account with
       a draft at that address (chainwatch.unmatched).
    """
    now = now or timezone.now()
    transfers = list(transfers_to_apply(network=network, lightning=lightning, now=now))
    linked: dict = defaultdict(list)
    free: list[ObservedTransfer] = []
    for transfer in transfers:
        (linked[transfer.draft_id] if transfer.draft_id else free).append(transfer)
    for parts in linked.values():
        _apply_linked(parts[0].draft, parts, head=head, now=now)
    for transfer in free:
        transfer_apply(transfer, head=head, now=now)
    left = [t for t in free if t.draft_id is None]
    if not lightning:
        left = _split_payments(left, head=head, now=now)
        unmatched.reports_record(transfers=left, head=head, now=now)
    return len(transfers)


# --- Split payments -----------------------------------------------------------------------

MAX_SPLIT_PARTS = 3
MAX_SPLIT_CANDIDATES = 20  # most recent free transfers per address considered for one split


def _group_key(transfer: ObservedTransfer) -> tuple:
    if transfer.solana_reference:
        return ("reference", transfer.solana_reference)
    return ("address", transfer.receiver_address.lower(), transfer.currency, transfer.token_address.lower())


def _split_payments(free: list[ObservedTransfer], *, head: int | None, now: datetime) -> list[ObservedTransfer]:
    """Pay Pending drafts whose exact amount is the sum of 2..3 transfers that pay nothing alone.

    Rules (docs/decisions.md): every part arrived after the draft was created, each is smaller
    than the draft, the parts are whole base units; a draft takes the earliest such set; a set
    that would fit drafts of two accounts, or one transfer that could complete two drafts, is
    not guessed — those transfers stay unmatched. Returns the transfers still unmatched.
    """
    groups: dict[tuple, list[ObservedTransfer]] = defaultdict(list)
    for transfer in free:
        if not transfer.orphaned and transfer.draft_id is None:
            groups[_group_key(transfer)].append(transfer)
    used: set[int] = set()
    for key, transfers in groups.items():
        if len(transfers) < 2:
            continue
        transfers = sorted(transfers, key=lambda t: (t.first_seen_at, t.pk))[-MAX_SPLIT_CANDIDATES:]
        proposals = []
        for draft in _split_candidates(key, transfers[0], now=now):
            parts = _earliest_subset(draft, transfers)
            if parts:
                proposals.append((draft, parts))
        claims: dict[int, int] = defaultdict(int)
        for _, parts in proposals:
            for part in parts:
                claims[part.pk] += 1
        for draft, parts in proposals:
            if any(claims[part.pk] > 1 for part in parts):
                logger.warning("split payment to %s fits several drafts; not matched", draft.receiver_address)
                continue
            _apply(draft, parts, head=head, now=now)
            used.update(p.pk for p in parts)
    return [t for t in free if t.pk not in used and t.draft_id is None]


def _split_candidates(key: tuple, sample: ObservedTransfer, *, now: datetime) -> list[Draft]:
    drafts = watched_drafts(network=sample.network, now=now).filter(status__in=_PAYABLE)
    if key[0] == "reference":
        drafts = drafts.filter(solana_reference=key[1])
    else:
        drafts = drafts.filter(receiver_address__iexact=sample.receiver_address).exclude(method=Method.LIGHTNING)
    return [d for d in drafts if _same_asset(d, sample)]


def _earliest_subset(draft: Draft, transfers: list[ObservedTransfer]) -> list[ObservedTransfer] | None:
    eligible = [
        t
        for t in transfers
        if paid_at(t) >= draft.created_at and t.amount_base_units < draft.amount_base_units and _is_exact_part(t)
    ]
    for size in range(2, MAX_SPLIT_PARTS + 1):
        for parts in combinations(eligible, size):
            if sum(t.amount_base_units for t in parts) == draft.amount_base_units:
                return list(parts)
    return None
