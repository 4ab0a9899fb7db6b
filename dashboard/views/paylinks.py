"""Dashboard: pay links."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import owned
from core.problems import Problem
from dashboard.forms import (
    PaymentRequestForm,
)
from dashboard.security import merchant_page
from dashboard.views.common import PAGE_SIZE, show_problem
from drafts.models import Draft
from paylinks.presenters import pay_url
from paylinks.selectors import payment_request_get, payment_request_list
from paylinks.services import payment_request_cancel, payment_request_create
from payments.qr import qr_svg


@merchant_page
def paylinks(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status") or None
    page = Paginator(payment_request_list(user=request.user, filters={"status": status}), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    return render(request, "dashboard/paylinks.html", {"page": page, "status": status})


@merchant_page
def paylink_new(request: HttpRequest) -> HttpResponse:
    form = PaymentRequestForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            created = payment_request_create(
                user=request.user,
                fiat_currency=form.cleaned_data["fiatCurrency"],
                fiat_amount=form.cleaned_data["fiatAmount"],
                options=form.options(),
                order_id=form.cleaned_data["orderId"] or None,
                memo=form.cleaned_data["memo"] or None,
                expiry_hours=form.cleaned_data["expiryHours"],
            )
            messages.success(request, _("Pay link created. Send it to the payer."))
            return redirect("dashboard:paylink", payment_request_id=created.id)
        except Problem as problem:
            show_problem(form, problem)
    return render(request, "dashboard/paylink_new.html", {"form": form})


@merchant_page
def paylink_detail(request: HttpRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    url = pay_url(payment_request)
    drafts = owned(Draft, request.user).filter(payment_request_id=payment_request.id).order_by("-created_at")
    return render(
        request,
        "dashboard/paylink_detail.html",
        {"pr": payment_request, "url": url, "qr": qr_svg(url), "options": payment_request.options, "drafts": drafts},
    )


@merchant_page
@require_POST
def paylink_cancel(request: HttpRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    try:
        payment_request_cancel(payment_request=payment_request)
        messages.success(request, _("Pay link cancelled."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:paylink", payment_request_id=payment_request.id)
