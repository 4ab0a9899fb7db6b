"""The data object of draft.* webhook events (interface spec, Events)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from core.wire import json_datetime, json_number
from drafts.models import Draft
from payments.registry import format_amount, get_asset


def draft_event_data(draft: Draft, *, occurred_at: datetime | None = None) -> dict[str, Any]:
    fee = draft.platform_fee or {}
    asset = get_asset(draft.currency, draft.network)
    data: dict[str, Any] = {
        "draftId": str(draft.id),
        "livemode": draft.livemode,
        "status": draft.status,
        "txId": draft.paid_tx_id,
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "sentCurrency": draft.currency,
        "network": draft.network,
        "method": draft.method,
        "amountSats": draft.amount_base_units,
        "sentAmount": format_amount(draft.amount_base_units, asset),
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": json_number(draft.fiat_amount),
        "conversionRate": json_number(draft.rate),
        "rateSource": draft.rate_source or None,
        "platformFee": {
            "accrued": bool(fee.get("accrued")),
            "waived": bool(fee.get("waived")),
            "percent": fee.get("percent"),
            "feeUsd": fee.get("feeUsd"),
            "feeBaseUnits": draft.fee_base_units,
            "feeAmount": fee.get("feeAmount"),
            "currency": draft.currency,
        },
        "paymentRequestId": str(draft.payment_request_id) if draft.payment_request_id else None,
        "orderId": draft.order_id,
        "templateId": str(draft.template_id) if draft.template_id else None,
        "memo": draft.memo,
        "paidLate": draft.paid_late,
        "isFeeSettlement": draft.is_fee_settlement,
        "occurredAt": json_datetime(occurred_at or timezone.now()),
    }
    split = len(draft.paid_tx_ids or []) > 1
    if split:
        data["txIds"] = list(draft.paid_tx_ids)
    if draft.received_base_units is not None and (split or draft.received_base_units != draft.amount_base_units):
        data["receivedAmountSats"] = draft.received_base_units
        data["receivedAmount"] = format_amount(draft.received_base_units, asset)
    if draft.accepted_by_owner:
        data["acceptedByOwner"] = True
    return data
