"""Confirmed volume per day as a server-rendered SVG bar chart, readable without colour: each
asset has its own fill pattern and every bar segment a text title; a table carries the figures."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import gettext, ngettext

from accounts.modes import owned
from core.replica import replica_read
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.requests import OriginKind
from payments import formatting
from payments.rates import get_rate
from payments.registry import get_asset

# One pattern per asset: stripes, dots, cross-hatch, solid... distinguishable in greyscale.
PATTERNS = ["solid", "stripes", "dots", "cross", "grid", "diagonal"]
PAD_TOP = 8


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


# Drafts the merchant pays rather than receives: a refund's payout, a fee settlement.
PAID_OUT = (OriginKind.REFUND, OriginKind.SETTLEMENT)


def confirmed_volume(*, user, days: int, display_currency: str) -> Volume:
    today = timezone.localdate()  # days of the account's time zone (the page activates it)
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
        .exclude(origin__in=PAID_OUT)  # money the merchant sent, not received
        .only("currency", "network", "amount_base_units", "received_base_units", "usd_rate", "confirmed_at")
    )
    for draft in replica_read(lambda: list(confirmed)):
        asset = get_asset(draft.currency, draft.network)
        units = draft.received_base_units or draft.amount_base_units
        usd = Decimal(units) / asset.unit * (draft.usd_rate or Decimal(0))
        day = timezone.localtime(draft.confirmed_at).date()
        values[day][draft.currency] += (usd * usd_to_display).quantize(Decimal("0.01"))
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


def _pattern_defs(prefix: str) -> str:
    """The fill patterns, their ids prefixed: a pattern in a hidden drawing does not paint another."""
    shapes = {
        "solid": '<rect width="6" height="6" fill="currentColor"/>',
        "stripes": '<rect width="6" height="6" fill="none"/><path d="M0 0h6v2H0z" fill="currentColor"/>',
        "dots": '<circle cx="3" cy="3" r="1.6" fill="currentColor"/>',
        "cross": '<path d="M0 0L6 6M6 0L0 6" stroke="currentColor" stroke-width="1.2"/>',
        "grid": '<path d="M0 0h6M0 0v6" stroke="currentColor" stroke-width="1.4"/>',
        "diagonal": '<path d="M0 6L6 0" stroke="currentColor" stroke-width="1.6"/>',
    }
    return "".join(
        f'<pattern id="{prefix}-{name}" width="6" height="6" patternUnits="userSpaceOnUse">{body}</pattern>'
        for name, body in shapes.items()
    )


def pattern_of(index: int) -> str:
    return PATTERNS[index % len(PATTERNS)]


def legend_swatch(index: int) -> str:
    name = pattern_of(index)
    return (
        f'<svg width="18" height="14" viewBox="0 0 18 14" aria-hidden="true" focusable="false">'
        f"<defs>{_pattern_defs(f'swatch{index}')}</defs>"
        f'<rect x="0.5" y="0.5" width="17" height="13" fill="url(#swatch{index}-{name})" stroke="currentColor"/></svg>'
    )


@dataclass(frozen=True)
class Layout:
    """One drawing of the chart. Text is in the SVG's own units, so a layout meant for a phone
    has a narrow viewBox: drawn about as wide as the screen, its text keeps its size."""

    width: int
    height: int
    font: int
    css_class: str


WIDE = Layout(width=640, height=220, font=11, css_class="chart-wide")
NARROW = Layout(width=340, height=200, font=13, css_class="chart-narrow")


def label_width(font: int, chars: float = 6) -> float:
    """The drawn width of a day label ("Nov 30": six characters at about 0.62 em, generous)."""
    return max(chars, 6) * font * 0.62


def label_chars(labels: list[str]) -> float:
    """The longest label in characters, a wide (CJK) character counting as about two."""
    return max((sum(1.7 if ord(c) >= 0x2E80 else 1 for c in label) for label in labels), default=6)


def day_labels(
    centres: list[float], *, font: int, left: float, right: float, chars: float = 6
) -> list[tuple[int, float]]:
    """(day index, x of the label's centre) for the days that get a label: evenly spaced, each
    kept inside [left, right] and at least a gap clear of the one before (so labels never
    overlap, whatever the width), the last day labelled only when it has room."""
    width, gap = label_width(font, chars), font * 0.5
    slot = centres[1] - centres[0] if len(centres) > 1 else width
    step = max(1, int(-(-(width + gap) // slot)))  # ceil
    wanted = list(range(0, len(centres), step))
    if wanted[-1] != len(centres) - 1:
        wanted.append(len(centres) - 1)
    placed: list[tuple[int, float]] = []
    for index in wanted:
        x = min(max(centres[index], left + width / 2), right - width / 2)
        if placed and x - width / 2 < placed[-1][1] + width / 2 + gap:
            continue
        placed.append((index, x))
    return placed


def volume_svg(volume: Volume, layout: Layout = WIDE) -> str:
    width, height, font = layout.width, layout.height, layout.font
    pad_left, pad_bottom = font * 4, font * 2 + 6
    peak = max((volume.total(d) for d in volume.days), default=Decimal(0)) or Decimal(1)
    inner_w, inner_h = width - pad_left - 8, height - pad_bottom - PAD_TOP
    slot = inner_w / len(volume.days)
    bar = max(slot * 0.7, 2)
    suffix = layout.css_class
    title = ngettext(
        "Confirmed volume per day, last %(days)d day, in %(currency)s",
        "Confirmed volume per day, last %(days)d days, in %(currency)s",
        len(volume.days),
    ) % {"days": len(volume.days), "currency": volume.currency}
    summary = gettext("Stacked bars by asset; the table below lists the same figures.")
    parts = [
        f'<svg viewBox="0 0 {width} {height}" role="img" aria-labelledby="title-{suffix} desc-{suffix}" '
        f'class="{layout.css_class}" font-size="{font}" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="title-{suffix}">{escape(title)}</title>',
        f'<desc id="desc-{suffix}">{escape(summary)}</desc>',
        f"<defs>{_pattern_defs(suffix)}</defs>",
        f'<line class="axis" x1="{pad_left}" y1="{PAD_TOP + inner_h}" x2="{width - 8}" y2="{PAD_TOP + inner_h}"/>',
        f'<text x="{pad_left - 4}" y="{PAD_TOP + font}" text-anchor="end">{_short(peak)}</text>',
        f'<text x="{pad_left - 4}" y="{PAD_TOP + inner_h}" text-anchor="end">0</text>',
    ]
    centres = [pad_left + i * slot + slot / 2 for i in range(len(volume.days))]
    for i, day in enumerate(volume.days):
        x = centres[i] - bar / 2
        y = float(PAD_TOP + inner_h)
        for index, asset in enumerate(volume.assets):
            value = volume.values.get(day, {}).get(asset, Decimal(0))
            if not value:
                continue
            h = float(value / peak) * inner_h
            y -= h
            fill = f"url(#{suffix}-{pattern_of(index)})"
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" fill="{fill}" '
                f'stroke="currentColor" stroke-width="0.6"><title>{day.isoformat()} {escape(asset)}: '
                f"{value} {escape(volume.currency)}</title></rect>"
            )
    # The day as the reader writes it ("Nov 3", "3. Nov.", "11月3日"), Babel as everywhere else.
    names = [formatting.month_day(d) for d in volume.days]
    chars = label_chars(names)
    for i, at in day_labels(centres, font=font, left=pad_left, right=width - 2, chars=chars):
        parts.append(f'<text x="{at:.1f}" y="{height - 6}" text-anchor="middle">{escape(names[i])}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _short(value: Decimal) -> str:
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 1_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:.0f}"
