"""The bodies of the fee operations, shared by the REST views (fees.api.views) and the MCP tools."""

from __future__ import annotations

from django.utils import timezone

from core.wire import json_number
from drafts.api.serializers import (
    FeeQuoteRequestSerializer,
    SettleAccruedFeesRequestSerializer,
)
from drafts.creation import fee_placement_estimate
from drafts.idempotency import Outcome, create_once
from drafts.planning import fee_estimate
from drafts.presenters import draft_json
from drafts.requests import DraftRequest
from drafts.settlement import settlement_open
from payments.registry import format_amount


def settlement_json(*, user, body) -> dict:
    """POST /fees/accrued/settle: the settlement draft; shared by REST and MCP."""
    request = SettleAccruedFeesRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    return draft_json(settlement_open(user=user, **request.validated_data))


def settlement_outcome(*, user, body, idempotency_key: str | None, key_field: str = "Idempotency-Key") -> Outcome:
    """POST /fees/accrued/settle once per Idempotency-Key: 201 and the settlement draft."""
    return create_once(
        user=user,
        key=idempotency_key,
        operation="settlement",
        body=body,
        make=lambda: settlement_json(user=user, body=body),
        status=201,
        key_field=key_field,
    )


def fee_quote_json(*, user, body) -> dict:
    """POST /fees/quote: what a draft of this amount would be charged now, by this account (a
    dust fee is waived only while its allowance for today lasts); shared by REST and MCP."""
    request = FeeQuoteRequestSerializer(data=body)
    request.is_valid(raise_exception=True)
    plan = fee_estimate(request=DraftRequest.from_api(request.validated_data), now=timezone.now())
    return {
        "network": str(plan.asset.network),
        "currency": str(plan.asset.currency),
        "paymentMethod": str(plan.method),
        "amountSats": plan.amount_base_units,
        "amount": format_amount(plan.amount_base_units, plan.asset),
        "fiatCurrency": plan.fiat_currency,
        "fiatAmount": json_number(plan.fiat_amount),
        "quote": plan.quote.as_json() | {"nudgeBaseUnits": 0},
        "platformFee": plan.fee.as_json(fee_placement_estimate(plan=plan, user=user)) if plan.fee is not None else None,
    }
