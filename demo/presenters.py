"""The JSON shapes of the demo (the spec's DemoConfigResponse and DemoDraftResponse)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from core.wire import json_datetime
from demo.selectors import DemoNetwork
from drafts.models import Draft
from payments.registry import format_amount, get_asset


def demo_config_json(networks: list[DemoNetwork]) -> dict[str, Any]:
    return {
        "enabled": bool(networks),
        "expiryMinutes": settings.DEMO_EXPIRY_MINUTES,
        "networks": [{"network": n.network, "currencies": n.currencies} for n in networks],
        "simulatedPayments": settings.DEMO_SIMULATE_PAYMENTS,
    }


def demo_draft_json(draft: Draft) -> dict[str, Any]:
    asset = get_asset(draft.currency, draft.network)
    return {
        "id": str(draft.id),
        "network": draft.network,
        "currency": draft.currency,
        "receiverAddress": draft.receiver_address,
        "amountBaseUnits": draft.amount_base_units,
        "amountFormatted": format_amount(draft.amount_base_units, asset),
        "tokenAddress": draft.token_address,
        "paymentUri": draft.payment_uri,
        "status": draft.status,
        "paidTxId": draft.paid_tx_id,
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "expiresAt": json_datetime(draft.expires_at),
        "createdAt": json_datetime(draft.created_at),
    }
