"""Confirmed volume per day as a server-rendered SVG bar chart, readable without colour: each
asset has its own fill pattern and every bar segment a text title; a table carries the figures."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.utils import timezone
from django.utils.html import escape

from accounts.modes import owned
from drafts.enums import DraftStatus
from drafts.models import Draft
from payments.rates import get_rate
from payments.registry import get_asset

# One pattern per asset: stripes, dots, cross-hatch, solid... distinguishable in greyscale.
PATTERNS = ["solid", "stripes", "dots", "cross", "grid", "diagonal"]
WIDTH, HEIGHT, PAD_LEFT, PAD_BOTTOM, PAD_TOP = 640, 220, 48, 28, 8


@dataclass
class Volume:
    currency: str
    days: list[date]
    assets: list[str]
    # day -> asset -> value in the display currency
    values: dict[date, dict[str, Decimal]] = field(default_factory=dict)

    def total(self, day: date) -> Decimal:
        return sum(self.values.get(day, {}).values(), Decimal(0))

    @property
    def rows(self) -> list[tuple[date, list[Decimal], Decimal]]:
        return [
            (day, [self.values.get(day, {}).get(a, Decimal(0)) for a in self.assets], self.total(day))
            for day in self.days
            if self.total(day)
        ]


def confirmed_volume(*, user, days: int, display_currency: str) -> Volume:
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    try:
        usd_to_display = Decimal(1) if display_currency == "USD" else _usd_in(display_currency)
    except Exception:  # an unknown or unavailable currency: show USD rather than nothing
        display_currency, usd_to_display = "USD", Decimal(1)
    values: dict[date, dict[str, Decimal]] = defaultdict(lambda: defaultdict(Decimal))
    assets: set[str] = set()
    confirmed = (
        owned(Draft, user)
        .filter(status=DraftStatus.CONFIRMED, confirmed_at__date__gte=first)
        .only("currency", "network", "amount_base_units", "received_base_units", "usd_rate", "confirmed_at")
    )
    for draft in confirmed:
        asset = get_asset(draft.currency, draft.network)
        units = draft.received_base_units or draft.amount_base_units
        usd = Decimal(units) / asset.unit * (draft.usd_rate or Decimal(0))
        values[draft.confirmed_at.date()][draft.currency] += (usd * usd_to_display).quantize(Decimal("0.01"))
        assets.add(draft.currency)
    return Volume(
        currency=display_currency,
        days=[first + timedelta(days=i) for i in range(days)],
        assets=sorted(assets),
        values={d: dict(v) for d, v in values.items()},
    )


def _usd_in(currency: str) -> Decimal:
    # Rate of one USD-pegged unit in the display currency: USDC's USD price is ~1, so use the
    # fiat table through BTC: (BTC in display) / (BTC in USD).
    return get_rate("BTC", currency).rate / get_rate("BTC", "USD").rate


def _pattern_defs() -> str:
    shapes = {
        "solid": '<rect width="6" height="6" fill="currentColor"/>',
        "stripes": '<rect width="6" height="6" fill="none"/><path d="M0 0h6v2H0z" fill="currentColor"/>',
        "dots": '<circle cx="3" cy="3" r="1.6" fill="currentColor"/>',
        "cross": '<path d="M0 0L6 6M6 0L0 6" stroke="currentColor" stroke-width="1.2"/>',
        "grid": '<path d="M0 0h6M0 0v6" stroke="currentColor" stroke-width="1.4"/>',
        "diagonal": '<path d="M0 6L6 0" stroke="currentColor" stroke-width="1.6"/>',
    }
    return "".join(
        f'<pattern id="p-{name}" width="6" height="6" patternUnits="userSpaceOnUse">{body}</pattern>'
        for name, body in shapes.items()
    )


def pattern_of(index: int) -> str:
    return PATTERNS[index % len(PATTERNS)]


def legend_swatch(index: int) -> str:
    name = pattern_of(index)
    return (
        f'<svg width="18" height="14" viewBox="0 0 18 14" aria-hidden="true" focusable="false">'
        f"<defs>{_pattern_defs()}</defs>"
        f'<rect x="0.5" y="0.5" width="17" height="13" fill="url(#p-{name})" stroke="currentColor"/></svg>'
    )


def volume_svg(volume: Volume) -> str:
    peak = max((volume.total(d) for d in volume.days), default=Decimal(0)) or Decimal(1)
    inner_w, inner_h = WIDTH - PAD_LEFT - 8, HEIGHT - PAD_BOTTOM - PAD_TOP
    slot = inner_w / len(volume.days)
    bar = max(slot * 0.7, 2)
    parts = [
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="chart-title chart-desc" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="chart-title">Confirmed volume per day, last {len(volume.days)} days, in {escape(volume.currency)}'
        "</title>",
        '<desc id="chart-desc">Stacked bars by asset; the table below lists the same figures.</desc>',
        f"<defs>{_pattern_defs()}</defs>",
        f'<line class="axis" x1="{PAD_LEFT}" y1="{PAD_TOP + inner_h}" x2="{WIDTH - 8}" y2="{PAD_TOP + inner_h}"/>',
        f'<text x="{PAD_LEFT - 4}" y="{PAD_TOP + 8}" text-anchor="end">{_short(peak)}</text>',
        f'<text x="{PAD_LEFT - 4}" y="{PAD_TOP + inner_h}" text-anchor="end">0</text>',
    ]
    for i, day in enumerate(volume.days):
        x = PAD_LEFT + i * slot + (slot - bar) / 2
        y = PAD_TOP + inner_h
        for index, asset in enumerate(volume.assets):
            value = volume.values.get(day, {}).get(asset, Decimal(0))
            if not value:
                continue
            h = float(value / peak) * inner_h
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="url(#p-{pattern_of(index)})" '
                f'stroke="currentColor" stroke-width="0.6"><title>{day.isoformat()} {escape(asset)}: '
                f"{value} {escape(volume.currency)}</title></rect>"
            )
        if i % 7 == 0 or i == len(volume.days) - 1:
            parts.append(f'<text x="{x + bar / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle">{day:%d %b}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(value: Decimal) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:.0f}"
