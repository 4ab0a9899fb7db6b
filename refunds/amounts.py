"""What a refund is worth in the paid draft's asset: its share of the payment, fiat prices and
other assets valued through locked quotes (refunds.services issues with these)."""

from __future__ import annotations

from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from uuid import UUID

from django.db.models import Sum

from core.problems import Problem
from drafts.models import Draft
from payments.quotes import base_units_to_fiat, fiat_to_base_units, quote_lock
from payments.rates import normalise_fiat
from payments.rates.fiat import fiat_minor_units
from payments.registry import Asset
from refunds.models import OPEN_REFUND_STATUSES, Refund, RefundStatus


def paid_base_units(draft: Draft) -> int:
    return draft.received_base_units if draft.received_base_units is not None else draft.amount_base_units


def refunded_base_units(draft_id: UUID) -> int:
    """What the draft's open and paid refunds already take off its payment."""
    taken = Refund.objects.filter(draft_id=draft_id, status__in=(*OPEN_REFUND_STATUSES, RefundStatus.PAID)).aggregate(
        total=Sum("share_base_units")
    )
    return taken["total"] or 0


def fiat_checked(fiat_currency: str, fiat_amount: Decimal) -> tuple[str, Decimal]:
    fiat_currency = normalise_fiat(fiat_currency)
    if fiat_amount <= 0:
        raise Problem("fiatAmount must be positive.", code="min_value", field="fiatAmount")
    places = fiat_minor_units(fiat_currency)
    if fiat_amount != fiat_amount.quantize(Decimal(1).scaleb(-places)):
        raise Problem(
            f"{fiat_currency} amounts have {places} decimal places; {fiat_amount} is more precise than that.",
            code="too_precise",
            field="fiatAmount",
        )
    return fiat_currency, fiat_amount


def in_paid_asset(*, base_units: int, asset: Asset, paid: Asset, now: datetime) -> tuple[int, dict]:
    """Another asset's amount valued in the paid asset's base units, through USD quotes."""
    mine, theirs = (
        quote_lock(asset=asset, fiat_currency="USD", now=now),
        quote_lock(asset=paid, fiat_currency="USD", now=now),
    )
    usd = base_units_to_fiat(base_units, mine.rate, asset.decimals)
    share = fiat_to_base_units(usd, theirs.rate, paid.decimals)
    return share, {"refundAsset": mine.as_json(), "paidAsset": theirs.as_json()}


def fiat_share(draft: Draft, paid: Asset, fiat_currency: str, fiat_amount: Decimal, now: datetime) -> tuple[int, dict]:
    """A fiat price's value in the paid asset: at the draft's own price when it was priced in
    the same fiat (a full refund of 25 EUR is the whole payment), else at a rate locked now."""
    if draft.fiat_currency == fiat_currency and draft.fiat_amount:
        exact = Decimal(paid_base_units(draft)) * fiat_amount / draft.fiat_amount
        return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP)), {"atDraftPrice": True}
    quote = quote_lock(asset=paid, fiat_currency=fiat_currency, now=now)
    return fiat_to_base_units(fiat_amount, quote.rate, paid.decimals), {"paidAsset": quote.as_json()}
