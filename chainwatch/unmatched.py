"""Transfers that pay no draft, reported to the accounts whose addresses received them.

A transfer is reported once it is settled on chain (the asset's default confirmations, or
final) and still pays nothing: to every account with a draft for that address and asset that
was open around the time of the transfer (created before the grace window after it, not
expired before two grace windows before it: the first is the late-payment window, the second
catches payments that come after it), or still holding its amount (drafts.amounts). Each
account gets one `transfer.unmatched` event and email, and the exact amount of one of its
paid drafts also `draft.paid_again` on that draft; the owner can attach the transfer to one
of their drafts.

A report is made at the asset's default confirmations, then followed to finality as a draft's
payment is (`reports_follow`): `final` once the transfer cannot leave the chain any more, and
`revertedAt` (`onChain: false`) while a reorg has taken it off before then, so the merchant does
not refund or attach money that is gone (docs/decisions.md, Matching, Unmatched).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.models import User
from accounts.modes import livemode_of, owned, test_networks
from chainwatch.models import LIGHTNING_INDEX, ObservedTransfer, UnmatchedTransfer
from chainwatch.networks import token_address
from core.problems import Conflict, NotFound, Problem, worded
from core.wire import json_datetime
from drafts import services as draft_services
from drafts.enums import DraftStatus
from drafts.events import draft_event_data
from drafts.models import Draft
from drafts.selectors import at_address, report_window
from payments.enums import Method
from payments.registry import format_amount, get_asset
from webhooks.models import EventType
from webhooks.services import event_record


def _settled(transfer: ObservedTransfer, head: int | None) -> bool:
    if transfer.finalized:
        return True
    if transfer.block_height is None or head is None:
        return False
    required = get_asset(transfer.currency, transfer.network).default_confirmations
    return head - transfer.block_height + 1 >= required


def on_chain(transfer: ObservedTransfer) -> bool:
    """In a block of the chain (or final): not taken off by a reorg, and not merely back in a
    mempool after one (a Bitcoin node puts the transactions of the blocks it drops back there;
    a draft is Seen from a mempool, but a report is about money received, so until the
    transaction is mined again it is off the chain)."""
    return not transfer.orphaned and (transfer.block_height is not None or transfer.finalized)


def on_chain_q(prefix: str = "") -> Q:
    """`on_chain` as a filter (prefix: the path to the transfer, such as "transfer__")."""
    return Q(**{f"{prefix}orphaned": False}) & (
        Q(**{f"{prefix}block_height__isnull": False}) | Q(**{f"{prefix}finalized": True})
    )


def _same_asset(draft: Draft, transfer: ObservedTransfer) -> bool:
    expected = draft.token_address or token_address(draft.network, draft.currency) or ""
    return draft.currency == transfer.currency and expected.lower() == transfer.token_address.lower()


def candidate_drafts(transfer: ObservedTransfer) -> list[Draft]:
    """Drafts of any account for this address (or Solana reference) and asset, open around the
    transfer or still holding their amount then (drafts.amounts)."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    where = at_address(transfer.receiver_address)
    if transfer.solana_reference:
        where |= Q(solana_reference=transfer.solana_reference)
    drafts = (
        Draft.objects.filter(where, network=transfer.network, currency=transfer.currency)
        .exclude(method=Method.LIGHTNING)
        .filter(created_at__lte=transfer.first_seen_at + grace)
        .filter(
            Q(expires_at__gte=transfer.first_seen_at - report_window())
            | Q(amount_held_until__gte=transfer.first_seen_at)
        )
        .order_by("created_at")
    )
    return [d for d in drafts if _same_asset(d, transfer)]


# Why a report pays none of its candidate drafts, where the matcher can tell.
SENT_BEFORE_DRAFT = "sentBeforeDraft"  # made before any of them was created (chainwatch.matching)


def reports_record(*, transfers: list[ObservedTransfer], head: int | None, now: datetime) -> int:
    """Report settled transfers that pay nothing; each (account, transfer) once. Returns how many."""
    settled = [
        t
        for t in transfers
        if t.draft_id is None and not t.orphaned and t.index != LIGHTNING_INDEX and _settled(t, head)
    ]
    if not settled:
        return 0
    reported = set(UnmatchedTransfer.objects.filter(transfer__in=settled).values_list("transfer_id", "user_id"))
    count = 0
    for transfer in settled:
        by_user: dict[int, list[Draft]] = defaultdict(list)
        for draft in candidate_drafts(transfer):
            by_user[draft.user_id].append(draft)
        for user_id, drafts in by_user.items():
            if (transfer.pk, user_id) in reported:
                continue
            count += _report(transfer=transfer, user_id=user_id, drafts=drafts, now=now)
    return count


def reports_follow(*, network: str, final: Callable[[ObservedTransfer], bool], now: datetime) -> int:
    """Follow the reports of `network` not final yet: a transfer a reorg took off the chain is
    marked reverted (cleared if the same transaction is mined again); one `final` says can no
    longer leave is marked final, and no longer followed. Reverted ones are followed for the
    late-payment grace window. Returns how many reports changed."""
    grace = timedelta(hours=settings.DRAFT_LATE_PAYMENT_GRACE_HOURS)
    reports = (
        UnmatchedTransfer.objects.filter(transfer__network=network, final_at__isnull=True)
        .filter(Q(reverted_at__isnull=True) | Q(reverted_at__gte=now - grace))
        .select_related("transfer")
    )
    changed = 0
    for report in reports:
        transfer = report.transfer
        update: dict[str, datetime | None]
        if not on_chain(transfer):
            update = {"reverted_at": now} if report.reverted_at is None else {}
        elif final(transfer):
            update = {"final_at": now, "reverted_at": None}
        else:
            update = {"reverted_at": None} if report.reverted_at is not None else {}
        if update:
            changed += UnmatchedTransfer.objects.filter(pk=report.pk, final_at__isnull=True).update(**update)
    return changed


def _report(*, transfer: ObservedTransfer, user_id: int, drafts: list[Draft], now: datetime) -> int:
    with transaction.atomic():
        report, created = UnmatchedTransfer.objects.get_or_create(
            user_id=user_id,
            transfer=transfer,
            defaults={
                "candidate_draft_ids": [str(d.id) for d in drafts],
                "created_at": now,
                "reason": SENT_BEFORE_DRAFT if all(d.created_at > transfer.made_at for d in drafts) else "",
            },
        )
        if created:
            user = get_user_model().objects.get(pk=user_id)
            # In the mode of the drafts it may have been meant for: a transfer to a test draft's
            # address reaches the account's test webhooks (accounts.modes).
            event_record(
                user=user,
                type=EventType.TRANSFER_UNMATCHED,
                data=unmatched_event_data(report, now=now),
                livemode=any(d.livemode for d in drafts),
            )
            _paid_again(report, drafts=drafts, user=user, now=now)
        return int(created)


def _paid_again(report: UnmatchedTransfer, *, drafts: list[Draft], user: User, now: datetime) -> None:
    """The transfer is the exact amount of one paid draft of the account (a payer paid it
    again): `draft.paid_again` on that draft, which every endpoint gets by default. None when
    several paid drafts fit: the transfer.unmatched report names them all."""
    transfer = report.transfer
    paid = [
        d
        for d in drafts
        if d.status in (DraftStatus.SEEN, DraftStatus.CONFIRMED)
        and d.amount_base_units == transfer.amount_base_units
        and transfer.txid not in (d.paid_tx_ids or [d.paid_tx_id])
    ]
    if len(paid) != 1:
        return
    (draft,) = paid
    body = unmatched_json(report)
    again = {"transferId": body["id"], "txId": body["txId"], "outputIndex": body["outputIndex"]}
    data = draft_event_data(draft, occurred_at=now) | {"again": again | {"amountSats": body["amountSats"]}}
    event_record(user=user, type=EventType.DRAFT_PAID_AGAIN, data=data, draft_id=draft.id, livemode=draft.livemode)


def simulated_transfer_report(*, draft: Draft, tx_id: str, amount_base_units: int, now: datetime) -> int:
    """A test-mode transfer to a draft's address that pays nothing (the test helpers' second
    payment): recorded as the watcher records a transfer, settled at once, and reported through
    `reports_record` like any other. Returns how many reports it made."""
    transfer, _ = ObservedTransfer.objects.get_or_create(
        network=draft.network,
        txid=tx_id,
        index=0,
        defaults={
            "currency": draft.currency,
            "token_address": draft.token_address or token_address(draft.network, draft.currency) or "",
            "receiver_address": draft.receiver_address or "",
            "amount_base_units": amount_base_units,
            "finalized": True,
            "solana_reference": draft.solana_reference or "",
            "first_seen_at": now,
        },
    )
    return reports_record(transfers=[transfer], head=None, now=now)


def reports_matched(*, transfer_ids: list[int], draft: Draft, now: datetime) -> None:
    """Transfers reported unmatched went on to pay a draft (a split payment completed, or the
    owner attached them): the draft's owner sees which; other accounts only that it is settled."""
    reports = UnmatchedTransfer.objects.filter(transfer_id__in=transfer_ids, matched_at__isnull=True)
    reports.filter(user_id=draft.user_id).update(matched_draft=draft, matched_at=now)
    reports.exclude(user_id=draft.user_id).update(matched_at=now)


def reports_reopen(*, transfer_ids: list[int]) -> None:
    """Reported transfers that paid a draft no longer do (a reorg): they are unmatched again."""
    UnmatchedTransfer.objects.filter(transfer_id__in=transfer_ids).update(matched_draft=None, matched_at=None)


def unmatched_json(report: UnmatchedTransfer) -> dict[str, Any]:
    transfer = report.transfer
    asset = get_asset(transfer.currency, transfer.network)
    return {
        "id": str(report.id),
        "network": transfer.network,
        "currency": transfer.currency,
        "tokenAddress": transfer.token_address or None,
        "receiverAddress": transfer.receiver_address,
        "txId": transfer.txid,
        "outputIndex": transfer.index if transfer.index >= 0 else None,
        "amountSats": transfer.amount_base_units,
        "amount": format_amount(transfer.amount_base_units, asset),
        "blockHeight": transfer.block_height,
        "onChain": on_chain(transfer),
        "final": report.final_at is not None,
        "revertedAt": json_datetime(report.reverted_at) if report.reverted_at else None,
        "candidateDraftIds": list(report.candidate_draft_ids),
        "reason": report.reason or None,
        "matched": report.matched_at is not None,
        "matchedDraftId": str(report.matched_draft_id) if report.matched_draft_id else None,
        "firstSeenAt": json_datetime(transfer.first_seen_at),
        "reportedAt": json_datetime(report.created_at),
    }


def unmatched_event_data(report: UnmatchedTransfer, *, now: datetime) -> dict[str, Any]:
    body = unmatched_json(report)
    return {
        "transferId": body["id"],
        **{k: body[k] for k in ("network", "currency", "tokenAddress", "receiverAddress", "txId", "outputIndex")},
        "amountSats": body["amountSats"],
        "amount": body["amount"],
        "blockHeight": body["blockHeight"],
        "candidateDraftIds": body["candidateDraftIds"],
        "occurredAt": json_datetime(now),
    }


def unmatched_list(*, user: User, matched: bool | None) -> QuerySet[UnmatchedTransfer]:
    reports = UnmatchedTransfer.objects.filter(user=user).select_related("transfer").order_by("-created_at", "-pk")
    if not livemode_of(user):  # test mode: transfers seen on test networks only (accounts.modes)
        reports = reports.filter(transfer__network__in=test_networks())
    if matched is not None:
        reports = reports.filter(matched_at__isnull=not matched)
    return reports


class TransferAlreadyMatched(Conflict):
    default_code = "transfer_already_matched"


def transfer_attach(
    *, user: User, report_id: UUID | str, draft_id: UUID | str, accept_amount: bool = False, now: datetime | None = None
) -> Draft:
    """The owner attaches a reported transfer to one of their drafts (Pending or Expired)."""
    now = now or timezone.now()
    report = UnmatchedTransfer.objects.select_related("transfer").filter(pk=report_id, user=user).first()
    if report is None:
        raise NotFound(worded(gettext_noop("No such unmatched transfer.")))
    draft = owned(Draft, user).filter(pk=draft_id).first()
    if draft is None:
        raise NotFound(worded(gettext_noop("No such draft.")), field="draftId")
    transfer = report.transfer
    if not candidate_fits(draft, transfer):
        raise Problem(
            worded(gettext_noop("The transfer went to another address or asset than this draft bills.")),
            code="not_this_draft",
            field="draftId",
        )
    with transaction.atomic():
        locked = ObservedTransfer.objects.select_for_update().get(pk=transfer.pk)
        if locked.draft_id is not None or report.matched_at is not None:
            raise TransferAlreadyMatched(worded(gettext_noop("This transfer already pays a draft.")))
        if not on_chain(locked):
            raise Conflict(worded(gettext_noop("This transfer is no longer on chain.")), code="transfer_not_on_chain")
        observation = draft_services.PaymentObservation(
            tx_id=locked.txid,
            received_base_units=locked.amount_base_units,
            confirmations=locked.confirmations,
            amount_exact=locked.raw_amount is None or locked.raw_amount % 10**9 == 0 or locked.currency != "ETH",
            final=locked.finalized,
        )
        paid = draft_services.draft_payment_attach(
            draft=draft, observation=observation, accept_amount=accept_amount, now=now
        )
        ObservedTransfer.objects.filter(pk=locked.pk).update(draft=paid)
        reports_matched(transfer_ids=[locked.pk], draft=paid, now=now)
        return paid


def candidate_fits(draft: Draft, transfer: ObservedTransfer) -> bool:
    if draft.network != transfer.network or not _same_asset(draft, transfer):
        return False
    if transfer.solana_reference and draft.solana_reference == transfer.solana_reference:
        return True
    return (draft.receiver_address or "").lower() == transfer.receiver_address.lower()
