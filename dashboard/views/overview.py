"""Dashboard: overview."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.modes import owned
from dashboard import charts
from dashboard.security import merchant_page
from drafts.models import Draft
from fees.ledger import balance_of
from payments.rates.fiat import FIAT_CURRENCIES


@merchant_page
def overview(request: HttpRequest) -> HttpResponse:
    # The account's display currency; `?ccy=EUR` (the "Show in" control) shows another one once.
    asked = (request.GET.get("ccy") or "").strip().upper()
    currency = asked if asked in FIAT_CURRENCIES else request.display.currency
    balance = balance_of(request.user)
    volume = charts.confirmed_volume(user=request.user, days=30, display_currency=currency)
    return render(
        request,
        "dashboard/overview.html",
        {
            "balance": balance,
            "cap_usd": settings.FEE_MAX_OUTSTANDING_USD,
            "cap_days": settings.FEE_MAX_AGE_DAYS,
            "recent": owned(Draft, request.user).filter(superseded_at__isnull=True).order_by("-created_at")[:8],
            "chart": volume,
            "chart_svg": charts.volume_svg(volume, charts.WIDE),
            "chart_svg_narrow": charts.volume_svg(volume, charts.NARROW),
            "legend": [(asset, charts.legend_swatch(i)) for i, asset in enumerate(volume.assets)],
            "fiat_currencies": FIAT_CURRENCIES,
        },
    )
