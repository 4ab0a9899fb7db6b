"""Dashboard: unmatched transfers."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import owned
from chainwatch.unmatched import transfer_attach, unmatched_json, unmatched_list
from core.problems import Problem
from dashboard.exports import exportable
from dashboard.forms import (
    AttachForm,
)
from dashboard.lists import TRANSFERS
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import PAGE_SIZE, field_worded
from drafts.models import Draft

ATTACHABLE_STATUSES = ("Pending", "Expired")  # what drafts.services.draft_payment_attach accepts


def _attachable(request: MerchantRequest, report):
    """The report's candidate drafts that can still take a payment."""
    return owned(Draft, request.user).filter(id__in=report.candidate_draft_ids, status__in=ATTACHABLE_STATUSES)


@merchant_page
@exportable(TRANSFERS)
def transfers(request: MerchantRequest) -> HttpResponse:
    matched = {"true": True, "false": False}.get(request.GET.get("matched", "false"))
    page = Paginator(TRANSFERS.filtered(request), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = []
    for report in page.object_list:
        drafts = _attachable(request, report).order_by("-created_at")
        rows.append((unmatched_json(report), AttachForm(drafts=drafts, prefix=str(report.id))))
    return render(
        request,
        "dashboard/transfers.html",
        {"page": page, "rows": rows, "matched": matched, "zone": request.display.time_zone},
    )


@merchant_page
@require_POST
def transfer_attach_view(request: MerchantRequest, report_id) -> HttpResponse:
    report = get_object_or_404(unmatched_list(user=request.user, matched=None), pk=report_id)
    drafts = _attachable(request, report)
    form = AttachForm(request.POST, drafts=drafts, prefix=str(report.id))
    if not form.is_valid():
        messages.error(request, _("Pick one of your drafts."))
        return redirect("dashboard:transfers")
    try:
        draft = transfer_attach(
            user=request.user,
            report_id=report.id,
            draft_id=form.cleaned_data["draftId"],
            accept_amount=form.cleaned_data["acceptAmount"],
        )
        messages.success(request, _("The transfer now pays this draft."))
        return redirect("dashboard:draft", draft_id=draft.id)
    except Problem as problem:
        if "acceptAmount" in problem.fields:  # the API's words name its field; this form has a box
            messages.error(
                request,
                _(
                    "The transfer differs from the draft's amount by more than 10%%. To attach it anyway, tick "
                    "“%(label)s”."
                )
                % {"label": form.fields["acceptAmount"].label},
            )
        else:
            messages.error(request, field_worded(form, problem.detail))
        return redirect("dashboard:transfers")
