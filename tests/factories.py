"""Builders for test data. `make_draft` writes a Draft row directly, for tests of code that
consumes drafts (watchers, webhooks); tests of draft creation go through the API."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any
from uuid import UUID

from django.utils import timezone

from drafts.models import Draft
from drafts.services import PaymentObservation, draft_payment_apply
from payments.enums import Currency, FeePlacement, Method, Network


def make_draft(user, **overrides: Any) -> Draft:
    now = timezone.now()
    fields: dict[str, Any] = {
        "user": user,
        "network": Network.ETHEREUM,
        "currency": Currency.USDC,
        "method": Method.SINGLE_OUTPUT,
        "receiver_address": "0x52908400098527886E0F7030069857D2E4169EE7",
        "amount_base_units": 25_000_000,
        "fee_placement": FeePlacement.ACCRUED,
        "platform_fee": {"accrued": True, "waived": False, "percent": 0.39, "feeUsd": 0.1, "feeAmount": "0.1"},
        "fee_base_units": 100_000,
        "required_confirmations": 12,
        "expires_at": now + timedelta(hours=24),
    }
    fields.update(overrides)
    return Draft.objects.create(**fields)


def draft_payment_observed(
    *,
    draft_id: UUID,
    tx_id: str,
    received_base_units: int,
    confirmations: int,
    amount_exact: bool = True,
    now: datetime | None = None,
) -> Draft:
    """A plain transfer seen on chain, through the watchers' one door (`draft_payment_apply`)."""
    observation = PaymentObservation(
        tx_id=tx_id, received_base_units=received_base_units, confirmations=confirmations, amount_exact=amount_exact
    )
    return draft_payment_apply(draft_id=draft_id, observation=observation, now=now)
