"""Turn observed transfers into state-machine calls (drafts/services.py).

Bitcoin and EVM match by (network, receiver address, asset, exact base units); Solana by
the draft's reference; Lightning by payment hash. A transfer within 10% of an open
draft's amount at the same address and asset is reported as a mismatch to the closest one.
Every call here is safe to repeat: the state machine locks the draft and ignores what it
has already recorded, so two passes running at once never confirm or announce twice.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from chainwatch.models import LIGHTNING_INDEX, ObservedTransfer
from chainwatch.networks import token_address
from drafts import services as draft_services
from drafts.models import OPEN_STATUSES, Draft
from drafts.selectors import watched_drafts
from payments.enums import DraftStatus, Method

logger = logging.getLogger(__name__)

# Statuses in which a draft can still be paid by a transfer it has not seen yet.
_PAYABLE = (DraftStatus.PENDING, DraftStatus.EXPIRED)


def _same_asset(draft: Draft, transfer: ObservedTransfer) -> bool:
    if draft.currency != transfer.currency:
        return False
    expected = draft.token_address or token_address(draft.network, draft.currency) or ""
    return expected.lower() == transfer.token_address.lower()


def _is_exact(transfer: ObservedTransfer, draft: Draft) -> bool:
    # Native EVM amounts: a wei value that is not a whole number of gwei is never the billed amount.
    whole = transfer.raw_amount is None or transfer.raw_amount % 10**9 == 0 or transfer.currency != "ETH"
    return whole and transfer.amount_base_units == draft.amount_base_units


def find_draft(transfer: ObservedTransfer, *, now: datetime) -> Draft | None:
    """The draft this transfer pays, if any (read only; the state machine decides the rest).

    Several accounts may bill the same amount to one address (uniqueness is per account): a
    transfer that fits drafts of more than one account is not given to any of them — the
    matcher never guesses whose money it is (docs/decisions.md, Matching).
    """
    drafts = watched_drafts(network=transfer.network, now=now).filter(created_at__lte=transfer.first_seen_at)
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
    exact = [d for d in candidates if _is_exact(transfer, d)]
    if exact:
        return _unambiguous(exact, transfer)
    near = [
        d
        for d in candidates
        if draft_services.is_within_mismatch_window(d.amount_base_units, transfer.amount_base_units)
    ]
    if not near:
        return None
    closest = min(abs(d.amount_base_units - transfer.amount_base_units) for d in near)
    nearest = sorted(
        (d for d in near if abs(d.amount_base_units - transfer.amount_base_units) == closest),
        key=lambda d: d.created_at,
    )
    return _unambiguous(nearest, transfer)


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


def transfer_apply(transfer: ObservedTransfer, *, head: int | None, now: datetime) -> Draft | None:
    """Find the draft one stored transfer pays, hand the observation to the drafts door, and
    record the link on the transfer."""
    draft = transfer.draft
    if draft is None:
        if transfer.orphaned:
            return None
        draft = find_draft(transfer, now=now)
        if draft is None:
            return None
    confirmations = _confirmations(transfer, head)
    fee_output_present = _fee_output_present(transfer, draft)
    observation = draft_services.PaymentObservation(
        tx_id=transfer.txid,
        received_base_units=transfer.amount_base_units,
        confirmations=confirmations,
        amount_exact=_is_exact(transfer, draft),
        fee_output_present=fee_output_present,
        final=transfer.finalized,
        vanished=transfer.orphaned,
    )
    result = draft_services.draft_payment_apply(draft_id=draft.id, observation=observation, now=now)
    if not transfer.orphaned and result.paid_tx_id == transfer.txid:
        updates = {"confirmations": confirmations}
        if transfer.draft_id is None:
            updates |= {"draft": draft, "fee_output_present": fee_output_present}
        ObservedTransfer.objects.filter(pk=transfer.pk).update(**updates)
    return result


def transfers_to_apply(*, network: str, lightning: bool, now: datetime):
    """Transfers that may still move a draft: unmatched recent ones and those of open drafts."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    open_draft = Q(draft__status__in=(*OPEN_STATUSES, DraftStatus.EXPIRED))
    recent_unmatched = Q(draft__isnull=True, orphaned=False, first_seen_at__gte=now - grace)
    transfers = ObservedTransfer.objects.filter(network=network).filter(open_draft | recent_unmatched)
    transfers = transfers.filter(index=LIGHTNING_INDEX) if lightning else transfers.exclude(index=LIGHTNING_INDEX)
    return transfers.select_related("draft").order_by("first_seen_at", "pk")


def match_network(*, network: str, head: int | None, lightning: bool = False, now: datetime | None = None) -> int:
    """Apply every transfer that can still matter on `network`; returns how many were applied."""
    now = now or timezone.now()
    count = 0
    for transfer in transfers_to_apply(network=network, lightning=lightning, now=now):
        transfer_apply(transfer, head=head, now=now)
        count += 1
    return count
