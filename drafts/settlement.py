"""Fee settlement: one draft that pays an account's accrued fees to the operator.

A settlement is a kind of draft (``is_fee_settlement``), created through the same door as
every other draft; the fee ledger (fees.ledger) only keeps the entries it covers.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.models import User
from core.problems import Conflict, Problem
from drafts.creation import draft_create
from drafts.models import Draft
from drafts.planning import draft_plan
from drafts.requests import DraftRequest, Origin
from fees.ledger import Balance, balance_of
from fees.models import AccruedFee
from payments.enums import Method

SETTLEMENT_CURRENCIES = ("BTC", "USDC", "USDT", "EURC")


def settlement_open(*, user: User, currency: str, network: str, now: datetime | None = None) -> Draft:
    """Open one settlement draft paying the account's outstanding fees to the operator.

    Priced now in USD (rates are read before any lock is taken); the user row is locked
    while the settlement is opened, so concurrent requests make one draft.
    """
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
    request = DraftRequest(
        network=network,
        currency=currency,
        payment_method=Method.SINGLE_OUTPUT,
        receiver_address=operator_address,
        fiat_currency="USD",
        fiat_amount=balance.outstanding_usd,
        memo=f"Settlement of {balance.draft_count} accrued fees",
    )
    plan = draft_plan(request=request, now=now, is_fee_settlement=True)
    with transaction.atomic():
        get_user_model().objects.select_for_update().only("pk").get(pk=user.pk)
        current = balance_of(user)
        _check_settleable(current)
        if current.outstanding_usd != balance.outstanding_usd:
            raise Conflict("Accrued fees changed while the settlement was priced; try again.", code="fees_changed")
        settlement = draft_create(user=user, plan=plan, origin=Origin.settlement(), now=now)
        AccruedFee.objects.filter(user=user, status=AccruedFee.Status.OUTSTANDING).update(settlement_draft=settlement)
        return Draft.objects.get(pk=settlement.pk)


def _check_settleable(balance: Balance) -> None:
    if balance.active_settlement_draft_id:
        raise Conflict(
            "A settlement draft is already open; pay or cancel it first.",
            code="settlement_in_progress",
            extra={"activeSettlementDraftId": str(balance.active_settlement_draft_id)},
        )
    if balance.outstanding_usd <= 0:
        raise Conflict("There are no accrued fees to settle.", code="nothing_to_settle")
