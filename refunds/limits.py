"""The refund approval limit of support members: the most a member with the support role may
approve in one refund, valued in USD at the current rate, set by an owner
(`accounts.MerchantProfile.support_refund_limit_usd`; none set: support approves none). Owners,
admins and API keys are not limited by it."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from accounts.models import Role
from accounts.profiles import support_refund_limit
from core.problems import PermissionDenied
from payments.quotes import base_units_to_fiat, quote_lock
from payments.registry import get_asset


class ApprovalLimitExceeded(PermissionDenied):
    default_code = "approval_limit_exceeded"
    default_detail = "This refund is above the approval limit of the support role: an owner or admin approves it."


def approval_limit_check(*, refund, amount_base_units: int, role: str | None) -> None:
    """Refuse a support member's approval of a refund worth more than the limit."""
    if role != Role.SUPPORT:
        return
    limit = support_refund_limit(refund.user_id) or Decimal(0)
    asset = get_asset(refund.currency, refund.network)
    rate = quote_lock(asset=asset, fiat_currency="USD", last_known=True).rate
    value = base_units_to_fiat(amount_base_units, rate, asset.decimals).quantize(Decimal("0.01"), ROUND_HALF_UP)
    if value > limit:
        raise ApprovalLimitExceeded(extra={"limitUsd": str(limit), "valueUsd": str(value)})
