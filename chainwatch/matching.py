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
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from chainwatch import quorum, unmatched
from chainwatch.models import LIGHTNING_INDEX, ObservedTransfer
from chainwatch.networks import token_address
from drafts import services as draft_services
from drafts.enums import DraftStatus
from drafts.models import OPEN_STATUSES, Draft
from drafts.selectors import at_address, watched_drafts
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


def paid_at(transfer: ObservedTransfer) -> datetime:
    """When the transfer was made (ObservedTransfer.made_at): a watcher that reads a block late
    must not let a payment made before a draft existed pay that draft."""
    return transfer.made_at


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
    # The drafts at the address an amount this close could pay (exact or within 10%), and a
    # receiving wallet's draft there whatever its amount: not every draft billed at the address.
    payable = drafts.filter(
        at_address(transfer.receiver_address), currency=transfer.currency, status__in=_PAYABLE
    ).exclude(method=Method.LIGHTNING)
    low, high = _near_range(transfer.amount_base_units)
    payable = payable.filter(Q(amount_base_units__range=(low, high)) | Q(receiving_wallet_id__isnull=False))
    candidates = [d for d in payable if _same_asset(d, transfer)]
    own = [d for d in candidates if d.receiving_wallet_id is not None]
    if own:  # a receiving wallet's fresh address is its draft's alone: matched by address
        candidates = own
    exact = [d for d in candidates if _is_exact(transfer, d)]
    if exact:
        if any(_is_exact(transfer, d) and d.status in _PAID for d in _holders(transfer, payable=candidates)):
            _not_guessed(transfer, "is the amount of a draft paid already")
            return None
        return _unambiguous(exact, transfer)
    near = [d for d in candidates if _is_near(transfer, d)]
    if not near:
        return None
    if len(near) > 1 or any(_is_near(transfer, d) for d in _holders(transfer, payable=candidates)):
        _not_guessed(transfer, "is near the amounts of several drafts")
        return None
    return near[0]


def _is_near(transfer: ObservedTransfer, draft: Draft) -> bool:
    return draft_services.is_within_mismatch_window(draft.amount_base_units, transfer.amount_base_units)


def _near_range(amount: int) -> tuple[int, int]:
    """Bounds (inclusive, a little wide) of the billed amounts `amount` is within 10% of."""
    percent = draft_services.MISMATCH_WINDOW_PERCENT
    return amount * 100 // (100 + percent), amount * 100 // (100 - percent) + 1


def _holders(transfer: ObservedTransfer, *, payable: list[Draft]) -> list[Draft]:
    """Drafts at the transfer's address and asset, other than the `payable` ones, whose amount
    is still theirs: paid (Seen, AmountMismatch), or closed and holding it (drafts.amounts).
    Only those within 10% of the transfer are read."""
    at = paid_at(transfer)
    drafts = (
        Draft.objects.filter(
            at_address(transfer.receiver_address),
            network=transfer.network,
            currency=transfer.currency,
            created_at__lte=at,
            amount_base_units__range=_near_range(transfer.amount_base_units),
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
    return bool(transfer.tx_outputs.get(draft.platform_fee_address, 0) >= draft.fee_base_units)


def _confirmations(transfer: ObservedTransfer, head: int | None) -> int:
    if transfer.block_height is None or head is None:
        return 0
    return quorum.agreed_confirmations(transfer, max(head - transfer.block_height + 1, 0))


def _final(transfer: ObservedTransfer, finalized: int | None) -> bool:
    """Final by the network's own rule, or (EVM) in a block at or below the node's `finalized`
    block: the watcher orphans a transfer whose block a reorg replaced before then. With several
    endpoints, `finalized` is the quorum's (chainwatch.quorum.check) and the quorum must also
    have agreed on the transfer in that block, below each agreeing endpoint's `finalized`."""
    if finalized is not None and transfer.block_height is not None and not transfer.orphaned:
        if quorum.active(transfer.network):
            return transfer.block_height <= finalized and quorum.agreed_final(transfer)
        return transfer.block_height <= finalized
    return quorum.agreed_final(transfer)


def _observation(
    transfers: list[ObservedTransfer], draft: Draft, head: int | None, finalized: int | None = None
) -> draft_services.PaymentObservation:
    """One observation of a draft's payment from the transfers that make it up (one, or the
    parts of a split payment): their sum, the fewest confirmations, final only when all are.
    With the node's `finalized` block known, that alone makes it final (not the depth)."""
    first = transfers[0]
    return draft_services.PaymentObservation(
        tx_id=first.txid,
        received_base_units=sum(t.amount_base_units for t in transfers),
        confirmations=min(_confirmations(t, head) for t in transfers),
        amount_exact=all(_is_exact_part(t) for t in transfers) if len(transfers) > 1 else _is_exact(first, draft),
        fee_output_present=_fee_output_present(first, draft) if len(transfers) == 1 else None,
        final=all(_final(t, finalized) for t in transfers),
        final_by_depth=finalized is None,
        vanished=any(t.orphaned for t in transfers),
        # One transaction paying two outputs of the draft is one txid, listed once.
        parts=tuple(dict.fromkeys(t.txid for t in transfers)) if len(transfers) > 1 else (),
        coinbase=any(t.coinbase for t in transfers),
    )


def _is_exact_part(transfer: ObservedTransfer) -> bool:
    return transfer.raw_amount is None or transfer.raw_amount % 10**9 == 0 or transfer.currency != "ETH"


def _apply(
    draft: Draft, transfers: list[ObservedTransfer], *, head: int | None, finalized: int | None = None, now: datetime
) -> Draft:
    """Hand the observation to the drafts door and record the link on the transfers it took, in
    one transaction: a process that dies between the two leaves neither (the next pass applies
    the transfer again), never a paid draft whose transfer is not linked to it (that transfer
    would then look like a repeat of the draft's payment and never confirm it)."""
    with transaction.atomic():
        return _apply_and_link(draft, transfers, head=head, finalized=finalized, now=now)


def _apply_and_link(
    draft: Draft, transfers: list[ObservedTransfer], *, head: int | None, finalized: int | None, now: datetime
) -> Draft:
    transfers = sorted(transfers, key=lambda t: (t.txid != draft.paid_tx_id, t.first_seen_at, t.pk))
    result = draft_services.draft_payment_apply(
        draft_id=draft.id, observation=_observation(transfers, draft, head, finalized), now=now
    )
    paid = set(result.paid_tx_ids or ([result.paid_tx_id] if result.paid_tx_id else []))
    for transfer in transfers:
        if transfer.orphaned or transfer.txid not in paid:
            continue
        updates: dict[str, Any] = {"confirmations": _confirmations(transfer, head)}
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


def _apply_linked(
    draft: Draft, transfers: list[ObservedTransfer], *, head: int | None, finalized: int | None = None, now: datetime
) -> None:
    """Transfers already linked to a draft: its current payment (confirmations, reorgs), or, for a
    draft sent back to Pending by a reorg, the linked transfers that are on chain again."""
    current = set(draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else []))
    if current:
        parts = [t for t in transfers if t.txid in current]
    else:
        parts = [t for t in transfers if not t.orphaned]
    if parts:
        _apply(draft, parts, head=head, finalized=finalized, now=now)


def top_up_draft(transfer: ObservedTransfer, *, now: datetime) -> Draft | None:
    """The short-paid draft this transfer completes, if any: an AmountMismatch draft, not
    accepted, whose received amount falls short by exactly this transfer, at its address (or
    Solana reference) and asset, the transfer made after the draft was created and before it
    expires. The rest is then a split payment of that draft (docs/decisions.md, Top-ups)."""
    if transfer.index == LIGHTNING_INDEX or not _is_exact_part(transfer):
        return None
    at = paid_at(transfer)
    drafts = watched_drafts(network=transfer.network, now=now).filter(
        status=DraftStatus.AMOUNT_MISMATCH, accepted_by_owner=False, created_at__lte=at, expires_at__gte=at
    )
    if transfer.solana_reference:
        drafts = drafts.filter(solana_reference=transfer.solana_reference)
    else:
        drafts = drafts.filter(at_address(transfer.receiver_address)).exclude(method=Method.LIGHTNING)
    fitting = [
        d
        for d in drafts
        if _same_asset(d, transfer)
        and d.received_base_units is not None
        and transfer.amount_base_units == d.amount_base_units - d.received_base_units
    ]
    if len(fitting) != 1:
        if fitting:
            _not_guessed(transfer, "completes several short drafts")
        return None
    return fitting[0]


def _top_up_apply(
    draft: Draft, transfer: ObservedTransfer, *, head: int | None, finalized: int | None = None, now: datetime
) -> Draft:
    """The short payment's transfers plus the rest, as one split payment of the draft."""
    paid = set(draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else []))
    earlier = list(ObservedTransfer.objects.filter(draft=draft, orphaned=False, txid__in=paid))
    return _apply(draft, [*earlier, transfer], head=head, finalized=finalized, now=now)


def transfer_apply(
    transfer: ObservedTransfer, *, head: int | None, finalized: int | None = None, now: datetime
) -> Draft | None:
    """Find the draft one stored, unlinked transfer pays (exact or within 10%, or the exact rest
    of a short payment) and apply it."""
    if transfer.orphaned:
        return None
    top_up = top_up_draft(transfer, now=now)
    draft = find_draft(transfer, now=now)
    if top_up is not None:
        if draft is not None and draft.pk != top_up.pk and draft.status != DraftStatus.AMOUNT_MISMATCH:
            _not_guessed(transfer, "completes a short draft and fits another")
            return None
        return _top_up_apply(top_up, transfer, head=head, finalized=finalized, now=now)
    if draft is None:
        return None
    return _apply(draft, [transfer], head=head, finalized=finalized, now=now)


def transfers_to_apply(*, network: str, lightning: bool, now: datetime) -> QuerySet[ObservedTransfer]:
    """Transfers that may still move a draft: unmatched recent ones, those of open drafts and
    those of Confirmed drafts not yet final (followed for reorgs to FINALITY_DEPTHS)."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    open_draft = Q(draft__status__in=(*OPEN_STATUSES, DraftStatus.EXPIRED)) | Q(
        draft__status=DraftStatus.CONFIRMED, draft__finalized_at__isnull=True
    )
    recent_unmatched = Q(draft__isnull=True, orphaned=False, first_seen_at__gte=now - grace)
    transfers = ObservedTransfer.objects.filter(network=network).filter(open_draft | recent_unmatched)
    transfers = transfers.filter(index=LIGHTNING_INDEX) if lightning else transfers.exclude(index=LIGHTNING_INDEX)
    return transfers.select_related("draft", "quorum").order_by("first_seen_at", "pk")


def match_network(
    *,
    network: str,
    head: int | None,
    finalized: int | None = None,
    lightning: bool = False,
    now: datetime | None = None,
) -> int:
    """Apply every transfer that can still matter on `network`; returns how many were applied.

    1. Transfers already paying a draft: one observation per draft (confirmations, reorgs), until
       the draft's payment is final.
    2. Each other transfer: the draft it pays alone, exact or within 10%.
    3. What is left: split payments — parts that together pay a draft exactly.
    4. What is still left, once settled on chain: reported as unmatched to each account with
       a draft at that address (chainwatch.unmatched).
    """
    now = now or timezone.now()
    transfers = list(transfers_to_apply(network=network, lightning=lightning, now=now))
    linked: dict[UUID, list[ObservedTransfer]] = defaultdict(list)
    free: list[ObservedTransfer] = []
    for transfer in transfers:
        (linked[transfer.draft_id] if transfer.draft_id else free).append(transfer)
    for parts in linked.values():
        draft = parts[0].draft
        assert draft is not None  # linked: grouped by their draft
        _apply_linked(draft, parts, head=head, finalized=finalized, now=now)
    for transfer in free:
        transfer_apply(transfer, head=head, finalized=finalized, now=now)
    left = [t for t in free if t.draft_id is None]
    if not lightning:
        left = _split_payments(left, head=head, finalized=finalized, now=now)
        unmatched.reports_record(transfers=left, head=head, now=now)
        unmatched.reports_follow(network=network, final=lambda t: _settled_final(t, head, finalized), now=now)
    return len(transfers)


def _settled_final(transfer: ObservedTransfer, head: int | None, finalized: int | None) -> bool:
    """A transfer that pays no draft is final by the rule a draft's payment is: the (quorum's)
    `finalized` block on EVM, Solana's finalized commitment, else FINALITY_DEPTHS below the head."""
    if transfer.orphaned:
        return False
    if finalized is not None or transfer.finalized:
        return _final(transfer, finalized)
    if transfer.block_height is None or head is None:
        return False
    return _confirmations(transfer, head) >= settings.FINALITY_DEPTHS.get(transfer.network, 0)


# --- Split payments -----------------------------------------------------------------------

MAX_SPLIT_PARTS = 3
MAX_SPLIT_CANDIDATES = 20  # most recent free transfers per address considered for one split


def _group_key(transfer: ObservedTransfer) -> tuple[Any, ...]:
    if transfer.solana_reference:
        return ("reference", transfer.solana_reference)
    return ("address", transfer.receiver_address.lower(), transfer.currency, transfer.token_address.lower())


def _split_payments(
    free: list[ObservedTransfer], *, head: int | None, finalized: int | None = None, now: datetime
) -> list[ObservedTransfer]:
    """Pay Pending drafts whose exact amount is the sum of 2..3 transfers that pay nothing alone.

    Rules (docs/decisions.md): every part arrived after the draft was created, each is smaller
    than the draft, the parts are whole base units; a draft takes the earliest such set; a set
    that would fit drafts of two accounts, or one transfer that could complete two drafts, is
    not guessed — those transfers stay unmatched. Returns the transfers still unmatched.
    """
    groups: dict[tuple[Any, ...], list[ObservedTransfer]] = defaultdict(list)
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
            _apply(draft, parts, head=head, finalized=finalized, now=now)
            used.update(p.pk for p in parts)
    return [t for t in free if t.pk not in used and t.draft_id is None]


def _split_candidates(key: tuple[Any, ...], sample: ObservedTransfer, *, now: datetime) -> list[Draft]:
    drafts = watched_drafts(network=sample.network, now=now).filter(status__in=_PAYABLE)
    if key[0] == "reference":
        drafts = drafts.filter(solana_reference=key[1])
    else:
        drafts = drafts.filter(at_address(sample.receiver_address)).exclude(method=Method.LIGHTNING)
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
