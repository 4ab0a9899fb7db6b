from __future__ import annotations

import json

from django import template
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.presenters import payment_reverted
from paylinks.models import PaymentRequest, PaymentRequestStatus
from payments import formatting
from payments.rates.feed import bundled_in_use
from payments.registry import format_amount, get_asset

register = template.Library()


@register.filter
def asset_amount(base_units: int | None, draft) -> str:
    """Base units of the draft's asset as a number in the asset's precision, as the reader
    writes it ("25.000000"; "25,000000" in German)."""
    if base_units is None:
        return ""
    return formatting.decimal_amount(format_amount(base_units, get_asset(draft.currency, draft.network)))


@register.filter
def draft_asset(base_units: int | None, draft) -> str:
    """Base units of the draft's asset as an amount with its code ("25,000000 USDC" in German)."""
    if base_units is None:
        return ""
    return formatting.asset_amount(format_amount(base_units, get_asset(draft.currency, draft.network)), draft.currency)


@register.filter
def as_json(value) -> str:
    """A payload as the endpoint receives it: JSON, indented (not Python's repr: null, not None)."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def get_item(mapping: dict, key: str):
    return mapping.get(key, ()) if mapping else ()


@register.filter
def decimal(value) -> str:
    """A Decimal without trailing zeros (0.8518296, not 0.851829600000000000), with the
    reader's signs."""
    if value is None:
        return ""
    text = format(value.normalize(), "f") if hasattr(value, "normalize") else str(value)
    return formatting.decimal_amount(text)


@register.simple_tag
def rates_bundled_notice() -> str:
    """The banner text when the bundled, dated rate table is pricing (not live), else "": what it
    means for the merchant's prices, in their words (the operator's notice names the setting)."""
    in_use = bundled_in_use()
    if in_use is None:
        return ""
    _stale, dated = in_use
    return _(
        "Prices are not live: exchange rates could not be fetched lately, so new drafts and pay links are "
        "priced from a rate table dated %(date)s. Payers see that these prices are not live."
    ) % {"date": formatting.day(dated)}


@register.filter
def fiat(amount, currency: str) -> str:
    """A fiat amount to its currency's decimals, as the pay page shows it ("¥3,500")."""
    if amount is None or not currency:
        return ""
    return formatting.fiat_amount(amount, currency)


@register.filter
def status_label(obj: Draft | PaymentRequest) -> str:
    """A draft's or pay link's status as the merchant needs it in a list: a paid draft short of
    its amount is Underpaid, above it Overpaid, a payment seen and not yet confirmed is
    Confirming, one that left the chain Reverted; a pay link whose draft is in one of those
    states says so rather than Open."""
    if isinstance(obj, PaymentRequest):
        draft = obj.draft
        if obj.status == PaymentRequestStatus.OPEN and draft is not None and draft.status != DraftStatus.CANCELLED:
            label = _draft_payment_label(draft)
            if label is not None:
                return label
        return str(PAY_LINK_STATUSES.get(str(obj.status)) or obj.get_status_display())
    return _draft_payment_label(obj) or str(obj.get_status_display())


# A pay link's statuses in the merchant's words (the model's labels stay English: paylinks/ is
# the payer's code, whose every string must be translated before it ships).
PAY_LINK_STATUSES: dict[str, Promise] = {
    PaymentRequestStatus.OPEN: pgettext_lazy("status", "Open"),
    PaymentRequestStatus.PAID: pgettext_lazy("status", "Paid"),
    PaymentRequestStatus.EXPIRED: pgettext_lazy("status", "Expired"),
    PaymentRequestStatus.CANCELLED: pgettext_lazy("status", "Cancelled"),
}


def _draft_payment_label(draft: Draft) -> str | None:
    if draft.status == DraftStatus.AMOUNT_MISMATCH:
        received = draft.received_base_units or 0
        return str(_("Underpaid")) if received < draft.amount_base_units else str(_("Overpaid"))
    if draft.status == DraftStatus.SEEN:
        return str(_("Confirming"))
    if draft.status in (DraftStatus.PENDING, DraftStatus.EXPIRED) and payment_reverted(draft):
        return str(_("Reverted"))
    return None
