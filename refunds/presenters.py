"""Refunds as the API (and MCP) show them."""

from __future__ import annotations

from typing import Any

from core.wire import json_datetime, json_number
from payments.registry import format_amount, get_asset
from refunds.branding import merchant_name
from refunds.events import refund_amount_base_units
from refunds.models import Refund
from refunds.services import claim_url


def payout_json(refund: Refund) -> dict[str, Any] | None:
    """The outgoing payment the merchant makes from their own wallet, once approved."""
    payout = refund.payout_draft
    if payout is None:
        return None
    asset = get_asset(payout.currency, payout.network)
    return {
        "draftId": str(payout.id),
        "status": payout.status,
        "paymentUri": payout.payment_uri,
        # Bitcoin: the unsigned transaction template of the drafts API (GET /drafts/{id}/tx-template).
        "txTemplateUrl": f"/api/v1/drafts/{payout.id}/tx-template" if asset.family == "bitcoin" else None,
        "txId": payout.paid_tx_id,
    }


def refund_json(refund: Refund) -> dict[str, Any]:
    amount = refund_amount_base_units(refund)
    asset = get_asset(refund.currency, refund.network)
    return {
        "id": str(refund.id),
        "draftId": str(refund.draft_id),
        "livemode": refund.livemode,
        "status": refund.status,
        "currency": refund.currency,
        "network": refund.network,
        "amountSats": amount,
        "amount": format_amount(amount, asset) if amount is not None else None,
        "fiatCurrency": refund.fiat_currency,
        "fiatAmount": json_number(refund.fiat_amount) if refund.fiat_amount is not None else None,
        "shareBaseUnits": refund.share_base_units,
        "reason": refund.reason,
        "customerEmail": refund.customer_email,
        "refundAddress": refund.refund_address,
        "claimUrl": claim_url(refund),
        "payout": payout_json(refund),
        "expiresAt": json_datetime(refund.expires_at),
        "claimedAt": json_datetime(refund.claimed_at),
        "approvedAt": json_datetime(refund.approved_at),
        "paidAt": json_datetime(refund.paid_at),
        "createdAt": json_datetime(refund.created_at),
    }


def refund_claim_json(refund: Refund) -> dict[str, Any]:
    """What the customer sees: the refund, not the merchant's other data."""
    amount = refund_amount_base_units(refund)
    payout = refund.payout_draft
    return {
        "merchantName": merchant_name(refund.user) or None,
        "livemode": refund.livemode,
        "status": refund.status,
        "currency": refund.currency,
        "network": refund.network,
        "amount": format_amount(amount, get_asset(refund.currency, refund.network)) if amount is not None else None,
        "fiatCurrency": refund.fiat_currency,
        "fiatAmount": json_number(refund.fiat_amount) if refund.fiat_amount is not None else None,
        "reason": refund.reason,
        "refundAddress": refund.refund_address,
        "txId": payout.paid_tx_id if payout else None,
        "expiresAt": json_datetime(refund.expires_at),
    }
