"""JSON bodies for drafts (DraftResponse). Built by hand rather than by a DRF serializer:
it is the hottest path of the API; drafts.api.serializers.DraftResponseSerializer
documents the same shape and a test keeps the two in step."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.utils.dateparse import parse_datetime

from core.wire import json_datetime, json_number
from drafts.models import Draft
from drafts.solana_pay import transaction_request_url
from payments.enums import Currency, FeePlacement, Method
from payments.registry import format_amount, get_asset


def quote_json(draft: Draft) -> dict[str, Any]:
    return {
        "rate": json_number(draft.rate),
        "fiatCurrency": draft.fiat_currency or "USD",
        "asset": draft.currency,
        "source": draft.rate_source,
        "live": quote_is_live(draft),
        "sources": draft.quote_sources,
        "lockedAt": json_datetime(draft.quote_locked_at),
        "expiresAt": json_datetime(draft.quote_expires_at),
        "nudgeBaseUnits": draft.quote_nudge_base_units,
    }


def quote_is_live(draft: Draft) -> bool:
    """Whether the draft's rate came from live sources (drafts quoted before sources were
    recorded say so in their source: the bundled table's is "... (bundled, not live)")."""
    if draft.quote_sources and "live" in draft.quote_sources:
        return bool(draft.quote_sources["live"])
    return "not live" not in (draft.rate_source or "")


def quote_prices_date(draft: Draft) -> date | None:
    """For a rate that is not live (the bundled table's): the date of the prices behind it, so
    a payer sees how old they are; None for a live rate or one with no recorded sources."""
    if quote_is_live(draft) or not draft.quote_sources:
        return None
    stamps = [
        parse_datetime(source["asOf"])
        for leg in ("crypto", "fx")
        for source in (draft.quote_sources.get(leg) or {}).get("sources", [])
        if source.get("asOf") and source.get("used", True)
    ]
    found = [stamp for stamp in stamps if stamp is not None]
    return min(found).date() if found else None


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
    body = {
        "id": str(draft.id),
        "receiverAddress": draft.receiver_address,
        "senderAddress": draft.sender_address,
        "network": draft.network,
        "amountSats": draft.amount_base_units,
        "amountBtc": amount if draft.currency == Currency.BTC else None,
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": json_number(draft.fiat_amount),
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
        "expiresAt": json_datetime(draft.expires_at),
        "createdAt": json_datetime(draft.created_at),
        "updatedAt": json_datetime(draft.updated_at),
        "sek": draft.sek,
        "feeOutputs": fee_outputs_json(draft),
        "currency": draft.currency,
        "tokenAddress": draft.token_address,
        "feeAccrued": draft.fee_placement == FeePlacement.ACCRUED,
        "isFeeSettlement": draft.is_fee_settlement,
        "paymentUri": draft.payment_uri,
        "lightningAddress": draft.lightning_address,
        "amount": amount,
        "confirmations": draft.confirmations,
        "receivedAmountSats": draft.received_base_units,
        "paidTxIds": list(dict.fromkeys(draft.paid_tx_ids or [])),
        "finalizedAt": json_datetime(draft.finalized_at),
        "paymentReverted": payment_reverted(draft),
        "paymentRevertedAt": json_datetime(draft.payment_reverted_at),
        "revertedTxIds": list(draft.reverted_tx_ids or []),
        "paidLate": draft.paid_late,
        "paymentHash": draft.payment_hash,
        "solanaReference": draft.solana_reference,
        "transactionRequestUrl": transaction_request_url(draft),
        "paymentRequestId": str(draft.payment_request_id) if draft.payment_request_id else None,
        "orderId": draft.order_id,
        "livemode": draft.livemode,
        "receivingWalletId": str(draft.receiving_wallet_id) if draft.receiving_wallet_id else None,
        "addressIndex": draft.derivation_index,
    }
    mismatch = amount_mismatch_json(draft)
    if mismatch is not None:  # the spec's AmountMismatchInfo is not nullable: absent until there is one
        body["amountMismatch"] = mismatch
    return body


def payment_reverted(draft: Draft) -> bool:
    """A payment left the chain after it was seen, and the draft is not paid again since."""
    return draft.payment_reverted_at is not None and draft.paid_tx_id is None


def draft_status_json(draft: Draft) -> dict[str, Any]:
    return {
        "id": str(draft.id),
        "status": draft.status,
        "txId": draft.paid_tx_id,
        "txIds": list(dict.fromkeys(draft.paid_tx_ids or [])),
        "receivedAmountSats": draft.received_base_units,
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "updatedAt": json_datetime(draft.updated_at),
    }
