"""The data object of payment_request.* webhook events (docs/webhooks.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from core.wire import json_datetime, json_number
from drafts.models import Draft
from paylinks.models import PaymentRequest
from payments.registry import format_amount, get_asset


def payment_request_event_data(
    payment_request: PaymentRequest,
    *,
    occurred_at: datetime | None,
    draft: Draft | None = None,
    paid_late: bool = False,
) -> dict[str, Any]:
    draft = draft or payment_request.draft
    data: dict[str, Any] = {
        "paymentRequestId": str(payment_request.id),
        "livemode": payment_request.livemode,
        "orderId": payment_request.order_id,
        "status": payment_request.status,
        "fiatCurrency": payment_request.fiat_currency,
        "fiatAmount": json_number(payment_request.fiat_amount),
        "expiresAt": json_datetime(payment_request.expires_at),
        "draftId": str(draft.id) if draft else None,
        "sentCurrency": draft.currency if draft else None,
        "network": draft.network if draft else None,
        "amountSats": draft.amount_base_units if draft else None,
        "sentAmount": format_amount(draft.amount_base_units, get_asset(draft.currency, draft.network))
        if draft
        else None,
        "txId": draft.paid_tx_id if draft else None,
        "paidLate": paid_late,
        "occurredAt": json_datetime(occurred_at),
    }
    return data
