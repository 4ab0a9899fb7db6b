"""JSON bodies of payment requests (owner side) and of the checkout (payer side).

The payer's views carry only what paying needs: never the owner's email or account id,
never other drafts or the option addresses the payer did not pick.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.profiles import merchant_profile_get
from core.text import shown
from core.wire import json_datetime, json_number
from drafts.models import Draft
from paylinks.models import PaymentRequest, PaymentRequestStatus
from paylinks.options import PaymentOption
from paylinks.services import merchant_name
from payments.enums import Method, Network
from payments.qr import qr_svg_data_uri
from payments.registry import format_amount, get_asset


def pay_url(payment_request: PaymentRequest) -> str:
    return f"{settings.BASE_URL}/pay/{payment_request.token}"


def payment_request_json(payment_request: PaymentRequest) -> dict[str, Any]:
    """PaymentRequestResponse (decisions.md)."""
    return {
        "id": str(payment_request.id),
        "token": payment_request.token,
        "payUrl": pay_url(payment_request),
        "fiatCurrency": payment_request.fiat_currency,
        "fiatAmount": json_number(payment_request.fiat_amount),
        "options": [
            {"currency": o["currency"], "network": o["network"], "receiverAddress": o["receiverAddress"]}
            | ({"receivingWalletId": o["receivingWalletId"]} if o.get("receivingWalletId") else {})
            for o in payment_request.options
        ],
        "orderId": payment_request.order_id,
        "memo": payment_request.memo,
        "returnUrl": payment_request.return_url,
        "status": payment_request.status,
        "expiresAt": json_datetime(payment_request.expires_at),
        "createdAt": json_datetime(payment_request.created_at),
        "draftId": str(payment_request.draft_id) if payment_request.draft_id else None,
        "livemode": payment_request.livemode,
    }


def payer_status(payment_request: PaymentRequest, now: datetime | None = None) -> str:
    """The request's status as a payer should read it: Open past its expiry is Expired
    even before the beat task has written it."""
    if payment_request.status == PaymentRequestStatus.OPEN and payment_request.expires_at <= (now or timezone.now()):
        return PaymentRequestStatus.EXPIRED
    return payment_request.status


def option_label(option: PaymentOption) -> str:
    """How the payer reads an option, in the active language ("USDC on Base")."""
    values = {"currency": option.currency, "network": Network(option.network).label}
    if option.method == Method.LIGHTNING:
        return _("%(currency)s on %(network)s (Lightning)") % values
    return _("%(currency)s on %(network)s") % values


def checkout_options(payment_request: PaymentRequest) -> list[PaymentOption]:
    return [PaymentOption.from_json(o) for o in payment_request.options]


def checkout_json(payment_request: PaymentRequest, *, now: datetime | None = None) -> dict[str, Any]:
    """The checkout GET: what the payer needs to choose how to pay, and whom they pay."""
    draft = payment_request.draft
    profile = merchant_profile_get(user=payment_request.user)
    return {
        "merchantName": merchant_name(payment_request) or None,
        "merchantLogoUrl": f"{settings.BASE_URL}{profile.logo_url}" if profile.logo_url else None,
        "supportEmail": profile.support_email or None,
        "supportUrl": profile.support_url or None,
        "returnUrl": payment_request.return_url,
        "fiatCurrency": payment_request.fiat_currency,
        "fiatAmount": json_number(payment_request.fiat_amount),
        "memo": shown(payment_request.memo),
        "orderId": shown(payment_request.order_id),
        "status": payer_status(payment_request, now),
        "expiresAt": json_datetime(payment_request.expires_at),
        "options": [
            {"currency": o.currency, "network": o.network, "method": o.method, "label": option_label(o)}
            for o in checkout_options(payment_request)
        ],
        "selection": checkout_selection_json(draft) if draft is not None else None,
        "livemode": payment_request.livemode,
    }


def checkout_selection_json(draft: Draft) -> dict[str, Any]:
    """The payer's view of the draft they chose: where to pay, exactly how much, the QR."""
    asset = get_asset(draft.currency, draft.network)
    received = (draft.amount_mismatch or {}).get("receivedBaseUnits")
    return {
        "draftId": str(draft.id),
        "status": draft.status,
        "currency": draft.currency,
        "network": draft.network,
        "method": draft.method,
        "receiverAddress": draft.receiver_address,
        "amount": format_amount(draft.amount_base_units, asset),
        "amountSats": draft.amount_base_units,
        "tokenAddress": draft.token_address,
        "bolt11": draft.bolt11,
        "paymentUri": draft.payment_uri,
        "qrSvg": qr_svg_data_uri(draft.payment_uri) if draft.payment_uri else None,
        "fiatCurrency": draft.fiat_currency,
        "fiatAmount": json_number(draft.fiat_amount),
        "rate": json_number(draft.rate),
        "quoteExpiresAt": json_datetime(draft.quote_expires_at),
        "expiresAt": json_datetime(draft.expires_at),
        "confirmations": draft.confirmations,
        "requiredConfirmations": draft.required_confirmations,
        "paidTxId": draft.paid_tx_id,
        "paidLate": draft.paid_late,
        "receivedAmount": format_amount(received, asset) if received is not None else None,
    }


def checkout_status_json(payment_request: PaymentRequest, *, now: datetime | None = None) -> dict[str, Any]:
    draft = payment_request.draft
    return {
        "status": payer_status(payment_request, now),
        "draftId": str(draft.id) if draft else None,
        "draftStatus": draft.status if draft else None,
        "confirmations": draft.confirmations if draft else 0,
        "requiredConfirmations": draft.required_confirmations if draft else None,
        "paidTxId": draft.paid_tx_id if draft else None,
    }
