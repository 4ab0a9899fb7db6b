"""What the dashboard's draft forms (a new draft, a recurring template's draft) turn into:
the typed request for the one creation door, the API body a template stores, and the fee
preview, priced by the planner and placement rules creation itself uses."""

from __future__ import annotations

from decimal import Decimal

from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from addressbook.selectors import default_receiver, receiving_addresses
from dashboard.security import MerchantRequest
from drafts.creation import fee_placement_estimate
from drafts.planning import draft_plan
from drafts.requests import DraftRequest
from payments.enums import FeePlacement
from payments.rates.fiat import FIAT_CURRENCIES
from payments.registry import format_amount


def receiver_of(data: dict, user) -> str | None:
    """The address typed or picked, else (not for Lightning) the account's default on the network."""
    typed = (data.get("receiverAddress") or "").strip()
    if typed or data.get("paymentMethod") == "Lightning" or data.get("bolt11") or data.get("lightningAddress"):
        return typed or None
    return default_receiver(user=user, network=data["network"])


def api_draft_body(data: dict) -> dict:
    """The create-draft fields of a form as a CreateDraftRequest body (API names). An empty
    address stays out: each run of the template pays the default the account has then."""
    body = {
        "network": data["network"],
        "currency": data["currency"],
        "paymentMethod": data.get("paymentMethod") or None,
        "receiverAddress": (data.get("receiverAddress") or "").strip() or None,
        "lightningAddress": data.get("lightningAddress") or None,
        "memo": data.get("memo") or None,
        "expiryHours": data.get("expiryHours"),
    }
    if data.get("amountSats") is not None:
        body["amountSats"] = data["amountSats"]
    elif data.get("fiatCurrency"):
        body["fiatCurrency"], body["fiatAmount"] = data["fiatCurrency"], data.get("fiatAmount")
    return {k: v for k, v in body.items() if v is not None}


def draft_request_of(data: dict, user) -> DraftRequest:
    return DraftRequest(
        network=data["network"],
        currency=data["currency"],
        payment_method=data.get("paymentMethod") or None,
        receiver_address=receiver_of(data, user),
        bolt11=(data.get("bolt11") or "").strip() or None,
        lightning_address=(data.get("lightningAddress") or "").strip() or None,
        amount_base_units=data.get("amountSats"),
        fiat_currency=data.get("fiatCurrency") or None,
        fiat_amount=data.get("fiatAmount"),
        memo=data.get("memo") or None,
        expiry_hours=data.get("expiryHours"),
    )


PLACEMENT_TEXT: dict[str, Promise] = {
    FeePlacement.OUTPUT: gettext_lazy("paid as a separate output of the payer's transaction"),
    FeePlacement.ACCRUED: gettext_lazy("accrued to your account and settled later"),
    FeePlacement.WAIVED: gettext_lazy("waived: too small to be a payment output on its own (dust)"),
}


def fee_preview_text(request: DraftRequest, user) -> str:
    """What the draft would bill, from the planner creation uses (draft_plan) and the same fee
    placement rules, the day's dust-waiver allowance included."""
    plan = draft_plan(request=request, now=timezone.now())
    asset = plan.asset
    sends = _("The payer sends %(amount)s %(cur)s.") % {
        "amount": format_amount(plan.amount_base_units, asset),
        "cur": asset.currency,
    }
    if plan.fee is None:
        return f"{sends} {_('No fee.')}"
    placement = fee_placement_estimate(plan=plan, user=user)
    fee = _("Fee: %(fee)s %(cur)s (%(pct)s%%, %(usd)s USD), %(where)s.") % {
        "fee": format_amount(plan.fee.fee_base_units, asset),
        "cur": asset.currency,
        "pct": plan.fee.percent,
        "usd": plan.fee.fee_usd.quantize(Decimal("0.01")),
        "where": PLACEMENT_TEXT[placement],
    }
    return f"{sends} {fee}"


def draft_form_context(request: MerchantRequest, form, **extra) -> dict:
    """A draft form's page: the form, the address book's receiving entries and the fiat codes it offers."""
    return {
        "form": form,
        "receiving": receiving_addresses(user=request.user),
        "fiat_currencies": FIAT_CURRENCIES,
        **extra,
    }
