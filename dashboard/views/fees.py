"""Dashboard: accrued fees."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _

from accounts.modes import livemode_of
from core.problems import Problem
from dashboard.forms import (
    SettleForm,
)
from dashboard.security import merchant_page
from dashboard.views.common import show_problem
from drafts.settlement import settlement_open
from fees.ledger import balance_of
from fees.models import AccruedFee


@merchant_page
def fees(request: HttpRequest) -> HttpResponse:
    form = SettleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            settlement = settlement_open(user=request.user, **form.cleaned_data)
            messages.success(request, _("Settlement draft created: pay it like any other draft."))
            return redirect("dashboard:draft", draft_id=settlement.id)
        except Problem as problem:
            show_problem(form, problem)
    entries = AccruedFee.objects.filter(user=request.user).select_related("draft").order_by("-accrued_at")[:100]
    if not livemode_of(request.user):  # test fees never accrue
        entries = AccruedFee.objects.none()
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
