"""Platform fee: tier lookup, clamp, conversion to the sent asset (rounded up) and to fiat.

Tier = the first whose upToUsd >= the payment's USD value (null = open-ended); its
percent applies to the whole amount; then clamp to [FEE_MIN_USD, FEE_MAX_USD].
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_HALF_UP, Decimal, InvalidOperation, localcontext
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from core.wire import json_number
from payments.enums import FeePlacement
from payments.registry import Asset, format_amount

FEE_USD_PLACES = Decimal("0.00000001")
FEE_FIAT_PLACES = Decimal("0.0001")


@dataclass(frozen=True)
class Tier:
    up_to_usd: Decimal | None
    percent: Decimal


def _decimal(value: Any, what: str) -> Decimal:
    if isinstance(value, (bool, float)):
        raise ImproperlyConfigured(f"FEE_TIERS: {what} must be an integer or a decimal string, not {value!r}")
    try:
        number = Decimal(str(value))
    except InvalidOperation as exc:
        raise ImproperlyConfigured(f"FEE_TIERS: {what} is not a number: {value!r}") from exc
    if not number.is_finite() or number < 0:
        raise ImproperlyConfigured(f"FEE_TIERS: {what} must be a non-negative number: {value!r}")
    return number


def _parse_tiers(items: Any) -> tuple[Tier, ...]:
    if not isinstance(items, (list, tuple)) or not items:
        raise ImproperlyConfigured("FEE_TIERS must be a non-empty list.")
    tiers = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or set(item) != {"upToUsd", "percent"}:
            raise ImproperlyConfigured(f"FEE_TIERS[{index}] must have exactly upToUsd and percent.")
        up_to = None if item["upToUsd"] is None else _decimal(item["upToUsd"], f"[{index}].upToUsd")
        tiers.append(Tier(up_to, _decimal(item["percent"], f"[{index}].percent")))
    bounds = [t.up_to_usd for t in tiers[:-1] if t.up_to_usd is not None]
    if len(bounds) != len(tiers) - 1 or tiers[-1].up_to_usd is not None:
        raise ImproperlyConfigured("FEE_TIERS: only the last tier is open-ended (upToUsd null), and it must be.")
    if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
        raise ImproperlyConfigured("FEE_TIERS: upToUsd must increase.")
    return tuple(tiers)


_parsed_tiers: tuple[object, tuple[Tier, ...]] | None = None  # (settings.FEE_TIERS, its tiers)


def fee_tiers() -> tuple[Tier, ...]:
    """The fee schedule, parsed again only when settings.FEE_TIERS is another object (as
    override_settings and an assignment make it)."""
    global _parsed_tiers
    configured = settings.FEE_TIERS
    if _parsed_tiers is None or _parsed_tiers[0] is not configured:
        _parsed_tiers = (configured, _parse_tiers(configured))
    return _parsed_tiers[1]


def fee_usd_for(usd_value: Decimal) -> tuple[Decimal, Decimal]:
    """(percent of the matching tier, fee in USD after the clamp)."""
    usd_value = Decimal(usd_value)
    if not usd_value.is_finite() or usd_value < 0:
        raise ValueError("usd_value must be a non-negative finite number")
    tier = next(t for t in fee_tiers() if t.up_to_usd is None or usd_value <= t.up_to_usd)
    with localcontext() as ctx:
        ctx.prec = 60
        raw = (usd_value * tier.percent / 100).quantize(FEE_USD_PLACES, rounding=ROUND_HALF_UP)
    fee = min(max(raw, settings.FEE_MIN_USD), settings.FEE_MAX_USD)
    return tier.percent, fee


@dataclass(frozen=True)
class FeeQuote:
    percent: Decimal
    fee_usd: Decimal
    fee_fiat: Decimal
    fiat_currency: str
    fee_base_units: int
    fee_amount: str
    currency: str

    def as_json(self, placement: str) -> dict[str, Any]:
        """PlatformFeeInfo."""
        placement = FeePlacement(placement)
        return {
            "percent": json_number(self.percent),
            "feeUsd": json_number(self.fee_usd),
            "feeFiat": json_number(self.fee_fiat),
            "fiatCurrency": self.fiat_currency,
            "feeBaseUnits": self.fee_base_units,
            "feeAmount": self.fee_amount,
            "currency": self.currency,
            "placement": placement.value,
            "accrued": placement == FeePlacement.ACCRUED,
            "waived": placement == FeePlacement.WAIVED,
        }


def fee_quote(
    *, usd_value: Decimal, asset: Asset, usd_rate: Decimal, fiat_currency: str, fiat_rate: Decimal
) -> FeeQuote:
    """The fee for a payment worth ``usd_value``; ``usd_rate``/``fiat_rate`` are USD/fiat per whole asset unit."""
    if usd_rate <= 0 or fiat_rate <= 0:
        raise ValueError("rates must be positive")
    percent, fee_usd = fee_usd_for(usd_value)
    with localcontext() as ctx:
        ctx.prec = 60
        base_units = int((fee_usd / usd_rate * asset.unit).to_integral_value(rounding=ROUND_CEILING))
        fee_fiat = (fee_usd * fiat_rate / usd_rate).quantize(FEE_FIAT_PLACES, rounding=ROUND_HALF_UP)
    return FeeQuote(
        percent=percent,
        fee_usd=fee_usd,
        fee_fiat=fee_fiat,
        fiat_currency=fiat_currency,
        fee_base_units=base_units,
        fee_amount=format_amount(base_units, asset),
        currency=str(asset.currency),
    )


def is_dust(*, asset: Asset, fee_base_units: int) -> bool:
    """A Bitcoin on-chain fee output below the dust limit cannot be relayed."""
    return asset.family == "bitcoin" and fee_base_units < settings.FEE_DUST_LIMIT_SATS


def fee_schedule() -> dict[str, Any]:
    """GET /api/v1/fees/schedule."""
    return {
        "tiers": [
            {"upToUsd": None if t.up_to_usd is None else json_number(t.up_to_usd), "percent": json_number(t.percent)}
            for t in fee_tiers()
        ],
        "minFeeUsd": json_number(settings.FEE_MIN_USD),
        "maxFeeUsd": json_number(settings.FEE_MAX_USD),
        "dustLimitSats": settings.FEE_DUST_LIMIT_SATS,
        "pricedIn": (
            "USD, at the draft's creation, from the same rate feed as fiat conversion; the tier whose upToUsd "
            "is the first at or above the payment's USD value sets the percent of the whole amount, clamped to "
            "[minFeeUsd, maxFeeUsd], converted to the sent asset rounding up to a whole base unit and also "
            "shown in the draft's fiat currency."
        ),
        "note": (
            "MultiOutput (Bitcoin PSBT) drafts carry the fee as a separate output to the operator's fee "
            "address; a fee below dustLimitSats is waived up to a daily allowance per account, then accrues. "
            "SingleOutput, Lightning and pay-link payments have no fee output: the fee accrues to the "
            "creator's account when the draft is confirmed and is settled later in BTC, USDC, USDT or EURC."
        ),
    }
