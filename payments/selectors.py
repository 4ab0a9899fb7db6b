from __future__ import annotations

from typing import Any

from config.wire import json_datetime, json_number
from payments.rates import CRYPTO_ASSETS, get_rate, normalise_asset, normalise_fiat


def rates_list(*, ccy: str, asset: str | None) -> dict[str, Any]:
    """GET /api/v1/rates: fiat per 1 whole unit of each asset (or the one asked for)."""
    fiat = normalise_fiat(ccy, field="ccy")
    assets = [normalise_asset(asset, field="asset")] if asset is not None else list(CRYPTO_ASSETS)
    rates = [get_rate(code, fiat) for code in assets]
    return {
        "ccy": fiat,
        "source": rates[0].source,
        "fetchedAt": json_datetime(min(r.fetched_at for r in rates)),
        "rates": [
            {
                "asset": r.currency,
                "rate": json_number(r.rate),
                "source": r.source,
                "fetchedAt": json_datetime(r.fetched_at),
                "asOf": json_datetime(r.as_of) if r.as_of else None,
            }
            for r in rates
        ],
    }
