"""Combining several sources' prices for one pair: median, outliers dropped, enough agreeing.

Each refresh asks every configured provider. For each asset (crypto, in USD) and each
currency (fiat, per USD) the prices the providers gave are combined like this:

1. A source whose own timestamp is older than the maximum age is set aside ("stale").
2. While at least three sources remain, the one farthest from the median of the others is
   dropped ("outlier") if that distance is more than ``outlier_percent``; repeat. Two
   sources that differ by more than that are both dropped: neither can be believed.
3. If fewer than ``min_sources`` remain, the pair has no price (503 ``rates_unavailable``).
4. Otherwise the price is the median of those that remain (the mean of the middle two
   for an even count).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal, localcontext
from statistics import median


@dataclass(frozen=True)
class SourcePrice:
    source: str
    rate: Decimal
    as_of: datetime | None


@dataclass
class Combined:
    rate: Decimal | None
    used: list[SourcePrice] = field(default_factory=list)
    dropped: dict[str, str] = field(default_factory=dict)  # source -> "outlier" / "stale" / "disagree"


def _distance_percent(value: Decimal, reference: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = 28
        return abs(value - reference) / reference * 100


def combine(
    prices: list[SourcePrice],
    *,
    outlier_percent: Decimal,
    min_sources: int,
    now: datetime,
    max_age_seconds: int | None,
) -> Combined:
    result = Combined(rate=None)
    kept: list[SourcePrice] = []
    for price in prices:
        if max_age_seconds is not None and price.as_of is not None:
            if (now - price.as_of).total_seconds() > max_age_seconds:
                result.dropped[price.source] = "stale"
                continue
        kept.append(price)
    while len(kept) >= 2:
        distances = []
        for index, price in enumerate(kept):
            others = [p.rate for i, p in enumerate(kept) if i != index]
            distances.append((_distance_percent(price.rate, median(others)), index))
        worst, index = max(distances)
        if worst <= outlier_percent:
            break
        if len(kept) == 2:
            for price in kept:
                result.dropped[price.source] = "disagree"
            kept = []
            break
        result.dropped[kept[index].source] = "outlier"
        del kept[index]
    result.used = kept
    if len(kept) >= max(1, min_sources):
        with localcontext() as ctx:
            ctx.prec = 28
            result.rate = median([p.rate for p in kept])
    return result
