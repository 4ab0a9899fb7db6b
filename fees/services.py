from __future__ import annotations

import uuid
from datetime import UTC, datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from config.api.problems import Conflict, Problem
from fees.models import AccruedFee, DustWaiver
from payments.enums import Method


def dust_waiver_claim(*, user, draft_id: uuid.UUID | str, fee_base_units: int, now: datetime | None = None) -> bool:
    """Waive a dust fee while the account's allowance for the UTC day lasts.

    The user row is locked so concurrent claims cannot exceed the allowance. A
    second claim for the same draft returns the first answer without counting twice.
    """
    day = (now or datetime.now(UTC)).astimezone(UTC).date()
    with transaction.atomic():
        get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
        if DustWaiver.objects.filter(user=user, draft_id=draft_id).exists():
            return True
        if DustWaiver.objects.filter(user=user, day=day).count() >= settings.FEE_DUST_WAIVERS_PER_DAY:
            return False
        DustWaiver.objects.create(user=user, draft_id=draft_id, day=day, fee_base_units=fee_base_units)
        return True


SETTLEMENT_CURRENCIES = ("BTC", "USDC", "USDT", "EURC")


def fee_settle(*, user, currency: str, network: str, now: datetime | None = None):
    """Open one settlement draft paying the account's outstanding fees to the operator.

    Priced now in USD (rates are read before any lock is taken); the user row is locked
    while the settlement is opened, so concurrent requests make one draft.
    """
    from drafts.models import Draft
    from drafts.planning import draft_plan
    from drafts.services import draft_create
    from fees.ledger import balance_of

    now = now or timezone.now()
    operator_address = settings.PLATFORM_FEE_ADDRESSES.get(network)
    if not operator_address:
        raise Problem(
            f"The operator takes no settlements on {network}; pick another network.",
            code="settlement_network_unavailable",
            field="network",
        )
    balance = balance_of(user)
    _check_settleable(balance)
    plan = draft_plan(
        request={
            "network": network,
            "currency": currency,
            "paymentMethod": Method.SINGLE_OUTPUT,
            "receiverAddress": operator_address,
            "fiatCurrency": "USD",
            "fiatAmount": balance.outstanding_usd,
            "memo": f"Settlement of {balance.draft_count} accrued fees",
        },
        now=now,
        is_fee_settlement=True,
    )
    with transaction.atomic():
        get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
        current = balance_of(user)
        _check_settleable(current)
        if current.outstanding_usd != balance.outstanding_usd:
            raise Conflict("Accrued fees changed while the settlement was priced; try again.", code="fees_changed")
        settlement = draft_create(user=user, plan=plan, now=now)
        AccruedFee.objects.filter(user=user, status=AccruedFee.Status.OUTSTANDING).update(settlement_draft=settlement)
        return Draft.objects.get(pk=settlement.pk)


def _check_settleable(balance) -> None:
    if balance.active_settlement_draft_id:
        raise Conflict(
            "A settlement draft is already open; pay or cancel it first.",
            code="settlement_in_progress",
            extra={"activeSettlementDraftId": str(balance.active_settlement_draft_id)},
        )
    if balance.outstanding_usd <= 0:
        raise Conflict("There are no accrued fees to settle.", code="nothing_to_settle")
