"""What tells a customer a refund is real: who it is from (the merchant's name, logo and
support contact, as on the pay page), which order it refunds, and how much in fiat and in the
asset. The claim page and the claim email show the same facts (docs/refunds.md)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.conf import settings

from accounts.languages import account_language
from accounts.profiles import merchant_profile_get
from drafts.models import Draft
from paylinks.models import PaymentRequest
from payments.rates.fiat import fiat_minor_units
from payments.registry import format_amount, get_asset
from refunds.events import refund_amount_base_units
from refunds.models import Refund


@dataclass(frozen=True)
class ClaimFacts:
    merchant: str
    logo_url: str | None  # a path on this site
    support_email: str
    support_url: str
    order_id: str | None
    fiat_amount: Decimal | None
    fiat_currency: str | None
    amount: str | None  # in whole units of the asset ("12.500000"); None until a fiat price is converted
    currency: str
    network: str

    def email_context(self) -> dict[str, Any]:
        """For the email's context (stored as JSON until it is sent): text only, URLs absolute."""
        return {
            "merchant": self.merchant,
            "logoUrl": f"{settings.BASE_URL}{self.logo_url}" if self.logo_url else None,
            "supportEmail": self.support_email or None,
            "supportUrl": self.support_url or None,
            "orderId": self.order_id,
            "fiatAmount": str(self.fiat_amount) if self.fiat_amount is not None else None,
            "fiatCurrency": self.fiat_currency,
            "amount": self.amount,
            "currency": self.currency,
            "network": self.network,
        }


def order_of(draft: Draft) -> str | None:
    """The merchant's reference of the payment: the draft's order id, else its pay link's."""
    if draft.order_id:
        return draft.order_id
    if draft.payment_request_id:
        return PaymentRequest.objects.filter(pk=draft.payment_request_id).values_list("order_id", flat=True).first()
    return None


def customer_language_of(draft: Draft, user) -> str:
    """The language the customer paid in (the pay page they chose on), else the merchant's."""
    if draft.payment_request_id:
        paid_in = PaymentRequest.objects.filter(pk=draft.payment_request_id).values_list("payer_language", flat=True)
        if language := paid_in.first():
            return language
    return account_language(user) or settings.LANGUAGE_CODE


def _fiat_value(refund: Refund, draft: Draft) -> tuple[Decimal | None, str | None]:
    """The refund in fiat: its own fiat price, else its share of what the payment was priced at."""
    if refund.fiat_amount is not None and refund.fiat_currency:
        return refund.fiat_amount, refund.fiat_currency
    paid = draft.received_base_units or draft.amount_base_units
    if draft.fiat_amount is None or not draft.fiat_currency or not paid:
        return None, None
    places = Decimal(1).scaleb(-fiat_minor_units(draft.fiat_currency))
    value = (Decimal(draft.fiat_amount) * refund.share_base_units / paid).quantize(places, rounding=ROUND_HALF_UP)
    return value, draft.fiat_currency


def claim_facts(refund: Refund) -> ClaimFacts:
    profile = merchant_profile_get(user=refund.user)
    draft = refund.draft
    base_units = refund_amount_base_units(refund)
    fiat_amount, fiat_currency = _fiat_value(refund, draft)
    asset = get_asset(refund.currency, refund.network)
    return ClaimFacts(
        merchant=profile.display_name or settings.PAYMENT_URI_LABEL,
        logo_url=profile.logo_url,
        support_email=profile.support_email,
        support_url=profile.support_url,
        order_id=order_of(draft),
        fiat_amount=fiat_amount,
        fiat_currency=fiat_currency,
        amount=format_amount(base_units, asset) if base_units is not None else None,
        currency=refund.currency,
        network=refund.network,
    )


def merchant_name(user) -> str:
    """The name a customer sees: the account's display name, else the deployment's label."""
    return merchant_profile_get(user=user).display_name or settings.PAYMENT_URI_LABEL
