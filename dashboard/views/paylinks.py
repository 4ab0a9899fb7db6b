"""Dashboard: pay links."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import livemode_of, owned
from core.problems import Problem
from dashboard.drafting import draft_form_context
from dashboard.exports import exportable
from dashboard.forms import (
    PayLinkPreferenceForm,
    PaymentRequestForm,
)
from dashboard.lists import PAYLINKS
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import PAGE_SIZE, show_problem
from drafts.idempotency import KeyTaken
from drafts.models import Draft
from paylinks.presenters import pay_url
from paylinks.selectors import announces_checkout_drafts, payment_request_get
from paylinks.services import pay_link_preference_update, payment_request_cancel, payment_request_create
from payments.qr import qr_svg


@merchant_page
@exportable(PAYLINKS)
def paylinks(request: MerchantRequest) -> HttpResponse:
    status = request.GET.get("status") or None
    page = Paginator(PAYLINKS.filtered(request), PAGE_SIZE).get_page(request.GET.get("page"))
    bound = request.POST if request.method == "POST" else None  # an unticked box posts nothing
    preference = PayLinkPreferenceForm(
        bound, initial={"quietCheckoutDrafts": not announces_checkout_drafts(user_id=request.user.pk)}
    )
    if request.method == "POST" and preference.is_valid():
        quiet = preference.cleaned_data["quietCheckoutDrafts"]
        pay_link_preference_update(user=request.user, quiet_checkout_drafts=quiet)
        messages.success(request, _("Saved."))
        return redirect("dashboard:paylinks")
    return render(request, "dashboard/paylinks.html", {"page": page, "status": status, "preference": preference})


@merchant_page
def paylink_new(request: MerchantRequest) -> HttpResponse:
    form = PaymentRequestForm(
        request.POST or None, initial={"fiatCurrency": request.display.currency}, livemode=livemode_of(request.user)
    )
    if request.method == "POST" and form.is_valid():
        try:
            created = payment_request_create(
                user=request.user,
                fiat_currency=form.cleaned_data["fiatCurrency"],
                fiat_amount=form.cleaned_data["fiatAmount"],
                options=form.options(),
                order_id=form.cleaned_data["orderId"] or None,
                memo=form.cleaned_data["memo"] or None,
                return_url=form.cleaned_data["returnUrl"].strip() or None,
                expiry_hours=form.cleaned_data["expiryHours"],
            )
            assert not isinstance(created, KeyTaken)  # no idempotency key was given
            messages.success(request, _("Pay link created. Send it to the payer."))
            return redirect("dashboard:paylink", payment_request_id=created.id)
        except Problem as problem:
            show_problem(form, problem)
    return render(request, "dashboard/paylink_new.html", draft_form_context(request, form))


@merchant_page
def paylink_detail(request: MerchantRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    url = pay_url(payment_request)
    drafts = list(owned(Draft, request.user).filter(payment_request_id=payment_request.id).order_by("-created_at"))
    return render(
        request,
        "dashboard/paylink_detail.html",
        {
            "pr": payment_request,
            "url": url,
            "qr": qr_svg(url),
            "options": payment_request.options,
            "drafts": [d for d in drafts if d.superseded_at is None],
            "superseded": [d for d in drafts if d.superseded_at is not None],
        },
    )


@merchant_page
@require_POST
def paylink_cancel(request: MerchantRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    try:
        payment_request_cancel(payment_request=payment_request)
        messages.success(request, _("Pay link cancelled."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:paylink", payment_request_id=payment_request.id)
