"""The data object of refund.* webhook events (docs/webhooks.md) and the emails about them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.wire import json_datetime, json_number
from payments.registry import format_amount, get_asset
from refunds.models import Refund


def refund_amount_base_units(refund: Refund) -> int | None:
    """What the customer receives, in base units: the exact amount, or (fiat-priced) the payout
    draft's once the merchant approved it; None while a fiat price is not yet converted."""
    if refund.amount_base_units is not None:
        return refund.amount_base_units
    if refund.payout_draft is not None:
        return refund.payout_draft.amount_base_units
    return None


def refund_event_data(refund: Refund, *, occurred_at: datetime | None) -> dict[str, Any]:
    amount = refund_amount_base_units(refund)
    payout = refund.payout_draft
    return {
        "refundId": str(refund.id),
        "draftId": str(refund.draft_id),
        "livemode": refund.livemode,
        "status": refund.status,
        "currency": refund.currency,
        "network": refund.network,
        "amountSats": amount,
        "amount": format_amount(amount, get_asset(refund.currency, refund.network)) if amount is not None else None,
        "fiatCurrency": refund.fiat_currency,
        "fiatAmount": json_number(refund.fiat_amount) if refund.fiat_amount is not None else None,
        "refundAddress": refund.refund_address,
        "payoutDraftId": str(payout.id) if payout else None,
        "txId": payout.paid_tx_id if payout else None,
        "occurredAt": json_datetime(occurred_at),
    }
