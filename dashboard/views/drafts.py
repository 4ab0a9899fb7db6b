"""Dashboard: drafts."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import livemode_of
from core.problems import Problem
from core.replica import replica_read
from dashboard.drafting import draft_form_context, draft_request_of, fee_preview_text
from dashboard.exports import exportable
from dashboard.forms import CreateDraftForm
from dashboard.lists import DRAFTS, draft_filter_form
from dashboard.security import MerchantRequest, costly_refusal, merchant_page
from dashboard.views.common import PAGE_SIZE, show_problem
from drafts import creation as draft_creation
from drafts import services as draft_services
from drafts.documents import draft_pdf, draft_tx_template
from drafts.models import Draft
from drafts.presenters import quote_is_live
from drafts.requests import Origin
from drafts.selectors import draft_get
from payments import formatting
from payments.explorers import explorer_tx_url
from payments.qr import qr_svg
from payments.registry import format_amount, get_asset
from webhooks.models import Delivery, Event

PAYABLE_STATUSES = ("Pending", "AmountMismatch")
PAID_STATUSES = ("Seen", "Confirmed")


@merchant_page
@exportable(DRAFTS)
def drafts(request: MerchantRequest) -> HttpResponse:
    form, queryset = draft_filter_form(request), DRAFTS.filtered(request)
    page = replica_read(lambda: _read_page(Paginator(queryset, PAGE_SIZE), request.GET.get("page")))
    query = request.GET.copy()
    query.pop("page", None)
    return render(request, "dashboard/drafts.html", {"form": form, "page": page, "query": query.urlencode()})


def _read_page(paginator: Paginator, number: str | None) -> Page:
    """The page with its rows read now (so where they are read from is chosen here)."""
    page = paginator.get_page(number)
    page.object_list = list(page.object_list)
    return page


@merchant_page
def draft_new(request: MerchantRequest) -> HttpResponse:
    form = CreateDraftForm(
        request.POST or None, initial={"fiatCurrency": request.display.currency}, livemode=livemode_of(request.user)
    )
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
def fee_preview(request: MerchantRequest) -> HttpResponse:
    """The live fee preview of the create form (JSON for app.js): the same planner as creation."""
    form = CreateDraftForm(request.GET, livemode=livemode_of(request.user))
    if not form.is_valid():
        return JsonResponse({"text": _("Fill in the network, address and amount to see the fee.")})
    try:
        return JsonResponse({"text": fee_preview_text(draft_request_of(form.cleaned_data, request.user), request.user)})
    except Problem as problem:
        return JsonResponse({"text": problem.detail})


def _own_draft(request: MerchantRequest, draft_id) -> Draft:
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
def draft_detail(request: MerchantRequest, draft_id) -> HttpResponse:
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
            "amount": format_amount(draft.amount_base_units, asset),  # to copy into a wallet: plain digits
            "amount_shown": formatting.asset_amount(format_amount(draft.amount_base_units, asset), draft.currency),
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
def draft_action(request: MerchantRequest, draft_id, action: str) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    operations = {
        "cancel": (draft_services.draft_cancel, _("Draft cancelled.")),
        "accept": (draft_services.draft_accept_received, _("Received amount accepted.")),
        "requote": (draft_services.draft_requote, _("A new rate is locked.")),
    }
    if action not in operations:
        raise Http404
    if action == "accept" and request.POST.get("confirmed") != "yes":
        return _accept_confirmation(request, draft)
    if action == "cancel" and request.POST.get("confirmed") != "yes":
        return render(
            request,
            "dashboard/action_confirm.html",
            {
                "title": _("Cancel this draft?"),
                "explanation": _(
                    "The payer can no longer pay it and it is no longer watched; a payment that arrives later is "
                    "reported as a transfer that paid no draft. This cannot be undone."
                ),
                "facts": [
                    (_("Draft"), str(draft.id)),
                    (_("Amount"), formatting.asset_amount(_format(draft), draft.currency)),
                ],
                "action_url": request.path,
                "confirm_label": _("Yes, cancel the draft"),
                "danger": True,
                "back_url": reverse("dashboard:draft", args=[draft.id]),
            },
        )
    operation, done = operations[action]
    try:
        operation(draft=draft)
        messages.success(request, done)
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:draft", draft_id=draft.id)


def _format(draft: Draft) -> str:
    return format_amount(draft.amount_base_units, get_asset(draft.currency, draft.network))


def _accept_confirmation(request: MerchantRequest, draft: Draft) -> HttpResponse:
    """The step before accepting a received amount: what arrived against what was billed, and
    what accepting means; the payment is accepted only by this page's own post."""
    asset = get_asset(draft.currency, draft.network)
    received = draft.received_base_units or 0
    return render(
        request,
        "dashboard/accept_confirm.html",
        {
            "draft": draft,
            "received": formatting.asset_amount(format_amount(received, asset), draft.currency),
            "expected": formatting.asset_amount(format_amount(draft.amount_base_units, asset), draft.currency),
            "difference": formatting.asset_amount(
                format_amount(abs(received - draft.amount_base_units), asset), draft.currency
            ),
            "short": received < draft.amount_base_units,
            "can_accept": draft.status == "AmountMismatch",
        },
    )


@merchant_page
def draft_pdf_download(request: MerchantRequest, draft_id) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    if refused := costly_refusal(request, "pdf"):
        return refused
    response = HttpResponse(draft_pdf(draft), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="draft-{draft.id}.pdf"'
    return response


@merchant_page
def draft_template_download(request: MerchantRequest, draft_id) -> HttpResponse:
    draft = _own_draft(request, draft_id)
    if refused := costly_refusal(request, "tx-template"):
        return refused
    template = draft_tx_template(draft)
    if template is None:
        raise Http404
    response = HttpResponse(json.dumps(template, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="tx-template-{draft_id}.json"'
    return response
