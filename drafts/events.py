"""The data object of draft.* webhook events (interface spec, Events)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.utils import timezone

from drafts.models import Draft

# Replaced by the asset registry's formatter once it lands.
_DECIMALS = {"BTC": 8, "USDC": 6, "USDT": 6, "EURC": 6, "SOL": 9, "ETH": 9}


def _format(base_units: int | None, currency: str) -> str | None:
    if base_units is None:
        return None
    text = format(Decimal(base_units).scaleb(-_DECIMALS[currency]), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _number(value: Decimal | None) -> float | None:
    # JSON numbers at the edge only; the service computes with Decimal.
    return float(value) if value is not None else None


def draft_event_data(draft: Draft, *, occurred_at: datetime | None = None) -> dict[str, Any]:
    fee = draft.platform_fee or {}
    data: dict[str, Any] = {
        "draftId": str(draft.id),
        "status": draft.status,
        "txId": draft.paid_tx_id,
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "sentCurrency": draft.currency,
        "network": draft.network,
        "method": draft.method,
        "amountSats": draft.amount_base_units,
        "sentAmount": _format(draft.amount_base_units, draft.currency),
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": _number(draft.fiat_amount),
        "conversionRate": _number(draft.rate),
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
        "memo": draft.memo,
        "paidLate": draft.paid_late,
        "isFeeSettlement": draft.is_fee_settlement,
        "occurredAt": (occurred_at or timezone.now()).isoformat().replace("+00:00", "Z"),
    }
    if draft.received_base_units is not None and draft.received_base_units != draft.amount_base_units:
        data["receivedAmountSats"] = draft.received_base_units
        data["receivedAmount"] = _format(draft.received_base_units, draft.currency)
    if draft.accepted_by_owner:
        data["acceptedByOwner"] = True
    return data
