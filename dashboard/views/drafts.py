"""Dashboard: drafts."""

from __future__ import annotations

import csv
import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.problems import Problem
from dashboard.drafting import draft_form_context, draft_request_of, fee_preview_text
from dashboard.forms import (
    CreateDraftForm,
    DraftFilterForm,
)
from dashboard.security import costly_refusal, merchant_page
from dashboard.views.common import PAGE_SIZE, show_problem
from drafts import creation as draft_creation
from drafts import services as draft_services
from drafts.documents import draft_pdf, draft_tx_template
from drafts.models import Draft
from drafts.presenters import quote_is_live
from drafts.requests import Origin
from drafts.selectors import draft_get, draft_list
from payments.explorers import explorer_tx_url
from payments.qr import qr_svg
from payments.registry import format_amount, get_asset
from webhooks.models import Delivery, Event

PAYABLE_STATUSES = ("Pending", "AmountMismatch")
PAID_STATUSES = ("Seen", "Confirmed")


def _filtered_drafts(request: HttpRequest):
    form = DraftFilterForm(request.GET or None)
    filters = dict(form.cleaned_data) if form.is_valid() else {}
    # A pay link's superseded drafts are listed under the pay link, not here, unless asked for.
    filters["hideSuperseded"] = not filters.pop("superseded", False)
    return form, draft_list(user=request.user, filters={k: v for k, v in filters.items() if v})


@merchant_page
def drafts(request: HttpRequest) -> HttpResponse:
    form, queryset = _filtered_drafts(request)
    if request.GET.get("format") == "csv":
        return costly_refusal(request, "csv") or _drafts_csv(queryset)
    page = Paginator(queryset, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "dashboard/drafts.html", {"form": form, "page": page, "query": query.urlencode()})


def _drafts_csv(queryset) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="drafts.csv"'
    writer = csv.writer(response)
    writer.writerow(
        ["id", "createdAt", "createdAtLocal", "status", "network", "currency", "method", "amount", "amountSats",
         "fiatCurrency", "fiatAmount", "receiverAddress", "paidTxId", "orderId", "memo"]
    )  # fmt: skip
    for draft in queryset.iterator():
        asset = get_asset(draft.currency, draft.network)
        writer.writerow(
            [
                draft.id,
                draft.created_at.isoformat().replace("+00:00", "Z"),
                # In the account's time zone (its settings; merchant_page activates it), with the offset.
                timezone.localtime(draft.created_at).isoformat(timespec="seconds"),
                draft.status,
                draft.network,
                draft.currency,
                draft.method,
                format_amount(draft.amount_base_units, asset),
                draft.amount_base_units,
                draft.fiat_currency or "",
                draft.fiat_amount if draft.fiat_amount is not None else "",
                draft.receiver_address or "",
                draft.paid_tx_id or "",
                draft.order_id or "",
                _csv_safe(draft.memo or ""),
            ]
        )
    return response


def _csv_safe(text: str) -> str:
    # A cell starting with = + - @ is a formula to spreadsheet programs: keep it text.
    return f"'{text}" if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


@merchant_page
def draft_new(request: HttpRequest) -> HttpResponse:
    form = CreateDraftForm(request.POST or None, initial={"fiatCurrency": request.display.currency})
    preview = None
    if request.method == "POST" and "refresh" in request.POST:
        form.errors.clear()  # only the lists change: the merchant has not asked for a draft yet
        return render(request, "dashboard/draft_new.html", draft_form_context(request, form, preview=None))
    if request.method == "POST" and form.is_valid():
        try:
            if "preview" in request.POST:
                preview = fee_preview_text(draft_request_of(form.cleaned_data, request.user), request.user)
            else:
                draft = draft_creation.draft_create_from_request(
                    user=request.user, request=draft_request_of(form.cleaned_data, request.user), origin=Origin.api()
                )
                messages.success(request, _("Draft created."))
                return redirect("dashboard:draft", draft_id=draft.id)
        except Problem as problem:
            show_problem(form, problem)
    return render(request, "dashboard/draft_new.html", draft_form_context(request, form, preview=preview))


@merchant_page
def fee_preview(request: HttpRequest) -> HttpResponse:
    """The live fee preview of the create form (JSON for app.js): the same planner as creation."""
    form = CreateDraftForm(request.GET)
    if not form.is_valid():
        return JsonResponse({"text": _("Fill in the network, address and amount to see the fee.")})
    try:
        return JsonResponse({"text": fee_preview_text(draft_request_of(form.cleaned_data, request.user), request.user)})
    except Problem as problem:
        return JsonResponse({"text": problem.detail})


def _own_draft(request: HttpRequest, draft_id) -> Draft:
    return draft_get(user=request.user, draft_id=draft_id)


def _quote_legs(draft) -> list[dict]:
    """The recorded sources behind the draft's rate, per leg, for the detail page (audit)."""
    recorded = draft.quote_sources or {}
    legs = []
    if recorded.get("crypto"):
        legs.append({"label": f"{recorded['crypto'].get('asset', draft.currency)}/USD", **recorded["crypto"]})
    if recorded.get("fx", {}).get("sources"):
        legs.append({"label": f"USD/{recorded['fx'].get('currency', '')}", **recorded["fx"]})
    return legs


@merchant_page
def draft_detail(request: HttpRequest, draft_id) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    events = Event.objects.filter(draft_id=draft.id, user=request.user).order_by("created_at")
    deliveries = (
        Delivery.objects.filter(event__draft_id=draft.id, webhook__user=request.user)
        .select_related("event", "webhook")
        .prefetch_related("attempts")
        .order_by("-created_at")[:50]
    )
    asset = get_asset(draft.currency, draft.network)
    return render(
        request,
        "dashboard/draft_detail.html",
        {
            "draft": draft,
            "amount": format_amount(draft.amount_base_units, asset),
            "events": events,
            "deliveries": deliveries,
            # Once paid, the page shows the payment, not a way to pay again.
            "paid": draft.status in PAID_STATUSES,
            "transactions": [
                (tx, explorer_tx_url(network=draft.network, method=draft.method, txid=tx))
                for tx in (draft.paid_tx_ids or ([draft.paid_tx_id] if draft.paid_tx_id else []))
            ],
            "qr": qr_svg(draft.payment_uri) if draft.payment_uri and draft.status in PAYABLE_STATUSES else None,
            "quote_live": quote_is_live(draft),
            "quote_legs": _quote_legs(draft),
            "has_template": draft.network in ("Mainnet", "Testnet", "Signet", "Regtest")
            and draft.method != "Lightning",
            "can_requote": draft.status == "Pending"
            and draft.fiat_amount is not None
            and draft.quote_expires_at is not None
            and draft.quote_expires_at <= timezone.now(),
        },
    )


@merchant_page
@require_POST
def draft_action(request: HttpRequest, draft_id, action: str) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    operations = {
        "cancel": (draft_services.draft_cancel, _("Draft cancelled.")),
        "accept": (draft_services.draft_accept_received, _("Received amount accepted.")),
        "requote": (draft_services.draft_requote, _("A new rate is locked.")),
    }
    if action not in operations:
        raise Http404
    operation, done = operations[action]
    try:
        operation(draft=draft)
        messages.success(request, done)
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:draft", draft_id=draft.id)


@merchant_page
def draft_pdf_download(request: HttpRequest, draft_id) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    if refused := costly_refusal(request, "pdf"):
        return refused
    response = HttpResponse(draft_pdf(draft), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="draft-{draft.id}.pdf"'
    return response


@merchant_page
def draft_template_download(request: HttpRequest, draft_id) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    if refused := costly_refusal(request, "tx-template"):
        return refused
    template = draft_tx_template(draft)
    if template is None:
        raise Http404
    response = HttpResponse(json.dumps(template, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="tx-template-{draft_id}.json"'
    return response
