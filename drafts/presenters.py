"""JSON bodies for drafts (DraftResponse). Built by hand rather than by a DRF serializer:
it is the hottest path of the API; drafts.api.serializers.DraftResponseSerializer
documents the same shape and a test keeps the two in step."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from drafts.models import Draft
from payments.enums import Currency, FeePlacement, Method
from payments.registry import format_amount, get_asset


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _number(value: Decimal | None) -> float | int | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def quote_json(draft: Draft) -> dict[str, Any]:
    return {
        "rate": _number(draft.rate),
        "fiatCurrency": draft.fiat_currency or "USD",
        "asset": draft.currency,
        "source": draft.rate_source,
        "lockedAt": _iso(draft.quote_locked_at),
        "expiresAt": _iso(draft.quote_expires_at),
        "nudgeBaseUnits": draft.quote_nudge_base_units,
    }


def fee_outputs_json(draft: Draft) -> list[dict[str, Any]] | None:
    if draft.method != Method.MULTI_OUTPUT or draft.fee_placement != FeePlacement.OUTPUT:
        return None
    return [{"address": draft.platform_fee_address, "amountSats": draft.fee_base_units, "purpose": "PlatformFee"}]


def amount_mismatch_json(draft: Draft) -> dict[str, Any] | None:
    info = draft.amount_mismatch
    if not info:
        return None
    asset = get_asset(draft.currency, draft.network)
    difference = info["differenceBaseUnits"]
    sign = "-" if difference < 0 else "+"
    return {
        **info,
        "receivedFormatted": f"{format_amount(info['receivedBaseUnits'], asset)} {draft.currency}",
        "differenceFormatted": f"{sign}{format_amount(abs(difference), asset)} {draft.currency}",
    }


def draft_json(draft: Draft) -> dict[str, Any]:
    asset = get_asset(draft.currency, draft.network)
    amount = format_amount(draft.amount_base_units, asset)
    return {
        "id": str(draft.id),
        "receiverAddress": draft.receiver_address,
        "senderAddress": draft.sender_address,
        "network": draft.network,
        "amountSats": draft.amount_base_units,
        "amountBtc": amount if draft.currency == Currency.BTC else None,
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": _number(draft.fiat_amount),
        "quote": quote_json(draft),
        "platformFeeSats": draft.fee_base_units if draft.fee_placement == FeePlacement.OUTPUT else 0,
        "platformFeeAddress": draft.platform_fee_address,
        "platformFee": draft.platform_fee,
        "paymentMethod": draft.method,
        "bolt11": draft.bolt11,
        "memo": draft.memo,
        "status": draft.status,
        "paidTxId": draft.paid_tx_id,
        "requiredConfirmations": draft.required_confirmations,
        "expiresAt": _iso(draft.expires_at),
        "createdAt": _iso(draft.created_at),
        "updatedAt": _iso(draft.updated_at),
        "sek": draft.sek,
        "feeOutputs": fee_outputs_json(draft),
        "currency": draft.currency,
        "tokenAddress": draft.token_address,
        "feeAccrued": draft.fee_placement == FeePlacement.ACCRUED,
        "isFeeSettlement": draft.is_fee_settlement,
        "paymentUri": draft.payment_uri,
        "amountMismatch": amount_mismatch_json(draft),
        "lightningAddress": draft.lightning_address,
        "amount": amount,
        "confirmations": draft.confirmations,
        "receivedAmountSats": draft.received_base_units,
        "paidLate": draft.paid_late,
        "paymentHash": draft.payment_hash,
        "solanaReference": draft.solana_reference,
        "paymentRequestId": str(draft.payment_request_id) if draft.payment_request_id else None,
        "orderId": draft.order_id,
    }


def draft_status_json(draft: Draft) -> dict[str, Any]:
    return {
        "id": str(draft.id),
        "status": draft.status,
        "txId": draft.paid_tx_id,
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "updatedAt": _iso(draft.updated_at),
    }
