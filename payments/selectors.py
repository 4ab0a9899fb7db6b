from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.utils import timezone

from core.wire import json_datetime, json_number
from payments.rates import CRYPTO_ASSETS, get_rate, normalise_asset, normalise_fiat
from payments.rates.feed import Rate


def rates_list(*, ccy: str, asset: str | None) -> dict[str, Any]:
    """GET /api/v1/rates: fiat per 1 whole unit of each asset (or the one asked for)."""
    fiat = normalise_fiat(ccy, field="ccy")
    assets = [normalise_asset(asset, field="asset")] if asset is not None else list(CRYPTO_ASSETS)
    rates = [get_rate(code, fiat) for code in assets]
    now = timezone.now()
    return {
        "ccy": fiat,
        "source": rates[0].source,
        "live": all(r.live for r in rates),
        "fetchedAt": json_datetime(min(r.fetched_at for r in rates)),
        "rates": [
            {
                "asset": r.currency,
                "rate": json_number(r.rate),
                "source": r.source,
                "live": r.live,
                "fetchedAt": json_datetime(r.fetched_at),
                "asOf": json_datetime(r.as_of) if r.as_of else None,
                "ageSeconds": max(0, int((now - (r.as_of or r.fetched_at)).total_seconds())),
                "agreeing": r.agreeing,
                "sources": _source_prices(r),
            }
            for r in rates
        ],
    }


def _source_prices(rate: Rate) -> list[dict[str, Any]]:
    """Each source's price for each leg (crypto in USD, USD in the fiat), and whether it counted."""
    found = []
    for leg in ("crypto", "fx"):
        for item in rate.sources.get(leg, {}).get("sources", []):
            found.append(
                {
                    "leg": leg,
                    "source": item["source"],
                    "rate": json_number(Decimal(item["rate"])) if item.get("rate") else None,
                    "used": item["used"],
                    "dropped": item.get("dropped"),
                }
            )
    return found
