"""Dashboard: accrued fees."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from core.problems import Problem
from dashboard.exports import exportable
from dashboard.forms import (
    SettleForm,
)
from dashboard.lists import FEES
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from drafts.settlement import settlement_open
from fees.ledger import balance_of


@merchant_page
@exportable(FEES)
def fees(request: MerchantRequest) -> HttpResponse:
    form = SettleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            settlement = settlement_open(user=request.user, **form.cleaned_data)
            messages.success(request, _("Settlement draft created: pay it like any other draft."))
            return redirect("dashboard:draft", draft_id=settlement.id)
        except Problem as problem:
            show_problem(form, problem)
    entries = FEES.filtered(request)[:100]  # test fees never accrue: none in test mode
    return render(
        request,
        "dashboard/fees.html",
        {
            "form": form,
            "balance": balance_of(request.user),
            "entries": entries,
            "cap_usd": settings.FEE_MAX_OUTSTANDING_USD,
            "cap_days": settings.FEE_MAX_AGE_DAYS,
        },
    )
