"""Dashboard: overview."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import render

from accounts.modes import owned
from accounts.roles import Work, may
from attention.selectors import UNMATCHED_TRANSFER, Attention, attention_of
from dashboard import charts
from dashboard.activity import latest_activity
from dashboard.forms import AttachForm
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.transfers import ATTACHABLE_STATUSES
from drafts.models import Draft
from fees.ledger import balance_of
from payments.rates.fiat import FIAT_CURRENCIES


@merchant_page
def overview(request: MerchantRequest) -> HttpResponse:
    # The account's display currency; `?ccy=EUR` (the "Show in" control) shows another one once.
    asked = (request.GET.get("ccy") or "").strip().upper()
    currency = asked if asked in FIAT_CURRENCIES else request.display.currency
    balance = balance_of(request.user)
    attention = attention_of(request.user)
    volume = charts.confirmed_volume(user=request.user, days=30, display_currency=currency)
    return render(
        request,
        "dashboard/overview.html",
        {
            "attention": attention,
            "attention_rows": _attention_rows(request, attention),
            "balance": balance,
            "cap_usd": settings.FEE_MAX_OUTSTANDING_USD,
            "cap_days": settings.FEE_MAX_AGE_DAYS,
            "activity": latest_activity(user=request.user),
            "recent": owned(Draft, request.user).filter(superseded_at__isnull=True).order_by("-created_at")[:8],
            "chart": volume,
            "chart_svg": charts.volume_svg(volume, charts.WIDE),
            "chart_svg_narrow": charts.volume_svg(volume, charts.NARROW),
            "legend": [(asset, charts.legend_swatch(i)) for i, asset in enumerate(volume.assets)],
            "fiat_currencies": FIAT_CURRENCIES,
        },
    )


# The work (accounts.roles) each action of the list needs: a button the member's role may not
# use is not shown (the authorization table refuses it anyway).
ACTION_WORK = {
    "accept": Work.MONEY,
    "cancel": Work.MONEY,
    "attach": Work.MONEY,
    "approve": Work.MONEY,
    "enable": Work.DEVELOPER,
    "rotate": Work.DEVELOPER,
}


def _attention_rows(request: MerchantRequest, attention: Attention) -> list[tuple]:
    """(item, attach form or None, the actions the member's role may take). An unmatched
    transfer's form offers its candidate drafts that still take a payment, read for every
    transfer at once."""
    transfers = attention.of(UNMATCHED_TRANSFER)
    wanted = {draft_id for item in transfers for draft_id in item.obj.candidate_draft_ids}
    attachable = (
        list(owned(Draft, request.user).filter(id__in=wanted, status__in=ATTACHABLE_STATUSES).order_by("-created_at"))
        if wanted
        else []
    )
    role = getattr(request, "role", None)
    rows = []
    for item in attention.items:
        actions = [action for action in item.actions if may(role, ACTION_WORK[action])]
        form = None
        if item.kind == UNMATCHED_TRANSFER:
            candidates = {str(i) for i in item.obj.candidate_draft_ids}
            form = AttachForm(drafts=[d for d in attachable if str(d.id) in candidates], prefix=item.id)
        rows.append((item, form, actions))
    return rows
