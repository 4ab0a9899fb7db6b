from django import template

from payments import formatting
from payments.rates.feed import bundled_notice
from payments.registry import format_amount, get_asset

register = template.Library()


@register.filter
def asset_amount(base_units: int | None, draft) -> str:
    """Base units of the draft's asset as a decimal amount ("25.000000")."""
    if base_units is None:
        return ""
    return format_amount(base_units, get_asset(draft.currency, draft.network))


@register.filter
def get_item(mapping: dict, key: str):
    return mapping.get(key, ()) if mapping else ()


@register.filter
def decimal(value) -> str:
    """A Decimal without trailing zeros (0.8518296, not 0.851829600000000000)."""
    if value is None:
        return ""
    text = format(value.normalize(), "f") if hasattr(value, "normalize") else str(value)
    return text


@register.simple_tag
def rates_bundled_notice() -> str:
    """The banner text when the bundled, dated rate table is pricing (not live), else ""."""
    return bundled_notice() or ""


@register.filter
def fiat(amount, currency: str) -> str:
    """A fiat amount to its currency's decimals, as the pay page shows it ("¥3,500")."""
    if amount is None or not currency:
        return ""
    return formatting.fiat_amount(amount, currency)
