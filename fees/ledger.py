"""The accrued-fee ledger: accrual on confirmation, caps that block, and settlement.

Accrual and settlement are called by the draft state machine inside its transaction,
so a fee is owed exactly when its draft is Confirmed, and settled exactly when the
settlement draft is.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from accounts.modes import livemode_of
from core.problems import PaymentRequired, worded, wording_record
from core.sql.rows import Select
from core.wire import json_datetime, json_number
from fees.models import AccruedFee

Status = AccruedFee.Status


class FeesOutstanding(PaymentRequired):
    """Its detail names the API's settle request; a merchant's page or email says where to settle
    instead (its `wording`, worded again in the reader's language)."""

    default_code = "fees_outstanding"

    def __init__(self, detail: str | None = None, *, outstanding_usd: Decimal | None = None, **options: Any) -> None:
        super().__init__(detail, **options)
        if outstanding_usd is not None:
            self.wording = wording_record(
                worded(
                    gettext_noop("Accrued fees of %(amount)s USD must be settled first, on the Fees page."),
                    amount=f"{outstanding_usd.quantize(Decimal('0.01'))}",
                )
            )


@dataclass(frozen=True)
class Balance:
    outstanding_usd: Decimal
    draft_count: int
    oldest_accrued_at: datetime | None
    active_settlement_draft_id: UUID | None

    @property
    def blocked(self) -> bool:
        if self.outstanding_usd >= settings.FEE_MAX_OUTSTANDING_USD:
            return True
        oldest = self.oldest_accrued_at
        return oldest is not None and timezone.now() - oldest >= timedelta(days=settings.FEE_MAX_AGE_DAYS)

    def as_json(self) -> dict:
        return {
            "outstandingUsd": json_number(self.outstanding_usd),
            "draftCount": self.draft_count,
            "oldestAccruedAt": json_datetime(self.oldest_accrued_at),
            "maxOutstandingUsd": json_number(settings.FEE_MAX_OUTSTANDING_USD),
            "maxAgeDays": settings.FEE_MAX_AGE_DAYS,
            "blocked": self.blocked,
            "activeSettlementDraftId": str(self.active_settlement_draft_id)
            if self.active_settlement_draft_id
            else None,
        }


# Runs on every fee-accruing creation (the cap check): built once.
_OUTSTANDING_TOTALS = Select(
    AccruedFee,
    columns=[("sum", "fee_usd"), ("min", "accrued_at"), ("count", "id")],
    where=[("user", "="), ("status", "=", Status.OUTSTANDING)],
)


# The cap as reads that find a row when the account is blocked (Balance.blocked): the sum
# owed at or past the maximum, or an entry owed for the maximum age.
_OWED_PAST_CAP = Select(
    AccruedFee,
    columns=[("count", "id")],
    where=[("user", "="), ("status", "=", Status.OUTSTANDING)],
    having=(("sum", "fee_usd"), ">="),
)
_OWED_TOO_LONG = Select(
    AccruedFee,
    columns=["id"],
    where=[("user", "="), ("status", "=", Status.OUTSTANDING), ("accrued_at", "<=")],
    limit=1,
)


def blocked_reads(user) -> list[tuple[Select, tuple]]:
    """The cap `ensure_not_blocked` checks, as reads that each find a row only when the account
    is blocked: for a write that refuses itself when one does (core.sql.rows.insert_then_fetch
    `unless`), in place of reading the totals before it. Aged as Balance.blocked ages, from
    the present moment (not a caller's `now`)."""
    return [
        (_OWED_PAST_CAP, (user.pk, settings.FEE_MAX_OUTSTANDING_USD)),
        (_OWED_TOO_LONG, (user.pk, timezone.now() - timedelta(days=settings.FEE_MAX_AGE_DAYS))),
    ]


def outstanding_read(user) -> tuple[Select, tuple]:
    """The one read `ensure_not_blocked` makes, for a caller that sends it along with its own
    (core.sql.rows.rows_together); its rows go back as `ensure_not_blocked(user, totals=...)`."""
    return _OUTSTANDING_TOTALS, (user.pk,)


def balance_of(user, *, with_settlement: bool = True, totals: list[tuple] | None = None) -> Balance:
    if not livemode_of(user):  # test fees never accrue: a test key sees no balance (accounts.modes)
        return Balance(
            outstanding_usd=Decimal(0), draft_count=0, oldest_accrued_at=None, active_settlement_draft_id=None
        )
    usd, oldest, count = (totals if totals is not None else _OUTSTANDING_TOTALS.rows(user.pk))[0]
    active = None
    if with_settlement:
        # An open settlement holds the outstanding entries it covers; confirming it settles them,
        # and expiry or cancellation lets go of them (drafts.services calls back here).
        active = (
            AccruedFee.objects.filter(user=user, status=Status.OUTSTANDING, settlement_draft__isnull=False)
            .values_list("settlement_draft_id", flat=True)
            .first()
        )
    return Balance(
        outstanding_usd=usd or Decimal(0),
        draft_count=count,
        oldest_accrued_at=oldest,
        active_settlement_draft_id=active,
    )


def ensure_not_blocked(user, *, totals: list[tuple] | None = None) -> None:
    """A blocked account cannot open new fee-accruing drafts (SingleOutput, Lightning, pay links).
    One read, on every such creation: `totals` are its rows when the caller made it already."""
    balance = balance_of(user, with_settlement=False, totals=totals)
    if balance.blocked:
        raise FeesOutstanding(
            f"Accrued fees of {balance.outstanding_usd.quantize(Decimal('0.01'))} USD must be settled first "
            "(POST /api/v1/fees/accrued/settle). MultiOutput drafts remain available.",
            outstanding_usd=balance.outstanding_usd,
            extra={
                "outstandingUsd": json_number(balance.outstanding_usd),
                "maxOutstandingUsd": json_number(settings.FEE_MAX_OUTSTANDING_USD),
            },
        )


def fee_accrue(*, draft, now: datetime) -> AccruedFee | None:
    """Record the fee of a confirmed draft whose fee was not paid as an output. Idempotent."""
    if draft.is_fee_settlement or draft.fee_base_units == 0:
        return None
    entry, _ = AccruedFee.objects.get_or_create(
        draft=draft,
        defaults={
            "user_id": draft.user_id,
            "fee_usd": draft.fee_usd,
            "fee_base_units": draft.fee_base_units,
            "currency": draft.currency,
            "network": draft.network,
            "accrued_at": now,
        },
    )
    if entry.status == Status.WAIVED and entry.waived_reason == PAYMENT_REVERTED:  # paid again after a reorg
        entry.status, entry.waived_reason, entry.waived_at, entry.accrued_at = Status.OUTSTANDING, "", None, now
        entry.save(update_fields=["status", "waived_reason", "waived_at", "accrued_at"])
    return entry


PAYMENT_REVERTED = "The payment left the chain after it was confirmed."


def fee_revert(*, draft, now: datetime) -> int:
    """A confirmed draft's payment left the chain (a reorg): its outstanding fee, not yet in a
    settlement, is waived (accrued again if the payment comes back)."""
    return AccruedFee.objects.filter(draft=draft, status=Status.OUTSTANDING, settlement_draft__isnull=True).update(
        status=Status.WAIVED, waived_reason=PAYMENT_REVERTED, waived_at=now
    )


def settlement_confirmed(*, settlement, now: datetime) -> int:
    """The settlement draft is Confirmed: the entries it covers are settled."""
    return AccruedFee.objects.filter(settlement_draft=settlement, status=Status.OUTSTANDING).update(
        status=Status.SETTLED, settled_at=now
    )


def settlement_abandoned(*, settlement) -> int:
    """The settlement draft expired or was cancelled: its entries stay outstanding."""
    return AccruedFee.objects.filter(settlement_draft=settlement, status=Status.OUTSTANDING).update(
        settlement_draft=None
    )


def fee_waive(*, entry: AccruedFee, reason: str, now: datetime | None = None) -> AccruedFee:
    """An operator forgives one entry."""
    with transaction.atomic():
        locked = AccruedFee.objects.select_for_update().get(pk=entry.pk)
        if locked.status == Status.OUTSTANDING:
            locked.status, locked.waived_reason, locked.waived_at = Status.WAIVED, reason, now or timezone.now()
            locked.settlement_draft = None
            locked.save()
        return locked
