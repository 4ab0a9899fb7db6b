"""Dashboard: webhooks."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.problems import Problem
from dashboard.exports import exportable
from dashboard.forms import (
    WebhookForm,
)
from dashboard.lists import EVENTS, WEBHOOK_DELIVERIES, WEBHOOKS, chosen_webhook
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import PAGE_SIZE, show_problem
from webhooks import endpoints as webhook_endpoints
from webhooks.selectors import delivery_list, webhook_list


@merchant_page
@exportable(WEBHOOKS)
def webhooks(request: MerchantRequest) -> HttpResponse:
    form = WebhookForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created = webhook_endpoints.webhook_create(
                user=request.user, url=form.cleaned_data["url"], events=form.cleaned_data["events"] or None
            )
            form = WebhookForm()
        except Problem as problem:
            show_problem(form, problem)
    return render(
        request,
        "dashboard/webhooks.html",
        {"form": form, "created": created, "webhooks": WEBHOOKS.filtered(request)},
    )


@merchant_page
@exportable(WEBHOOK_DELIVERIES)
def webhook_deliveries(request: MerchantRequest) -> HttpResponse:
    """Every delivery to the account's endpoints (or one endpoint's: `?webhook=`), filtered by
    status, event type and days, each with its attempts."""
    page = Paginator(WEBHOOK_DELIVERIES.filtered(request), PAGE_SIZE).get_page(request.GET.get("page"))
    chosen = chosen_webhook(request)
    webhook = webhook_list(user=request.user).filter(pk=chosen).first() if chosen else None
    return render(request, "dashboard/webhook_deliveries.html", {"page": page, "webhook": webhook})


@merchant_page
@exportable(EVENTS)
def events(request: MerchantRequest) -> HttpResponse:
    """The account's events (what its endpoints are sent), filtered by type and days."""
    page = Paginator(EVENTS.filtered(request), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "dashboard/events.html", {"page": page})


def _own_webhook(request: MerchantRequest, webhook_id):
    return get_object_or_404(webhook_list(user=request.user), pk=webhook_id)


@merchant_page
def webhook_detail(request: MerchantRequest, webhook_id) -> HttpResponse:
    webhook = _own_webhook(request, webhook_id)
    page = Paginator(
        delivery_list(webhook=webhook).select_related("event").prefetch_related("attempts"), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    return render(request, "dashboard/webhook_detail.html", {"webhook": webhook, "page": page})


@merchant_page
@require_POST
def webhook_action(request: MerchantRequest, webhook_id, action: str) -> HttpResponse:
    webhook = _own_webhook(request, webhook_id)
    try:
        if action == "test":
            webhook_endpoints.webhook_send_test(webhook=webhook)
            messages.success(request, _("A test event is on its way."))
        elif action == "delete":
            webhook_endpoints.webhook_delete(webhook=webhook)
            messages.success(request, _("Webhook removed."))
            return redirect("dashboard:webhooks")
        elif action == "enable":
            webhook_endpoints.webhook_update(webhook=webhook, active=True)
            messages.success(request, _("Endpoint enabled again; deliveries that waited are on their way."))
        elif action == "rotate":
            rotated = webhook_endpoints.webhook_rotate_secret(webhook=webhook)
            return render(request, "dashboard/webhook_secret.html", {"webhook": rotated, "secret": rotated.secret})
        elif action == "redeliver":
            delivery = get_object_or_404(delivery_list(webhook=webhook), pk=request.POST.get("delivery"))
            webhook_endpoints.delivery_redeliver(delivery=delivery)
            messages.success(request, _("Delivery queued again."))
        else:
            raise Http404
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:webhook", webhook_id=webhook.id)
