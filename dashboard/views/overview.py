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


@merchant_page
def overview(request: HttpRequest) -> HttpResponse:
    currency = (request.GET.get("ccy") or "USD").upper()[:3]
    balance = balance_of(request.user)
    volume = charts.confirmed_volume(user=request.user, days=30, display_currency=currency)
    return render(
        request,
        "dashboard/overview.html",
        {
            "balance": balance,
            "cap_usd": settings.FEE_MAX_OUTSTANDING_USD,
            "cap_days": settings.FEE_MAX_AGE_DAYS,
            "recent": owned(Draft, request.user).order_by("-created_at")[:8],
            "chart": volume,
            "chart_svg": charts.volume_svg(volume),
            "legend": [(asset, charts.legend_swatch(i)) for i, asset in enumerate(volume.assets)],
        },
    )
