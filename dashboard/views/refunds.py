"""The merchant's refund pages in the dashboard (/dashboard/refunds/...): list, issue from a
Confirmed draft, review, approve and cancel. Thin callers of refunds.services, as the API is."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from core.problems import Problem
from dashboard.exports import exportable
from dashboard.lists import REFUNDS
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from drafts.enums import DraftStatus
from drafts.idempotency import KeyTaken
from drafts.selectors import draft_get
from payments.qr import qr_svg
from payments.registry import format_amount, get_asset, to_base_units
from refunds import services
from refunds.events import refund_amount_base_units
from refunds.forms import RefundForm
from refunds.models import Refund, RefundStatus
from refunds.selectors import refund_get

PAGE_SIZE = 20
BITCOIN_NETWORKS = ("Mainnet", "Testnet", "Signet", "Regtest")


def _show_problem(form: RefundForm, problem: Problem) -> None:
    show_problem(form, problem)


@merchant_page
@exportable(REFUNDS)
def refunds(request: MerchantRequest) -> HttpResponse:
    status = request.GET.get("status") or None
    if status not in (None, *RefundStatus.values):
        status = None
    found = REFUNDS.filtered(request)
    page = Paginator(found, PAGE_SIZE).get_page(request.GET.get("page"))
    rows = [(r, _amount_text(r)) for r in page.object_list]
    return render(
        request,
        "refunds/dashboard/list.html",
        {"page": page, "rows": rows, "status": status, "statuses": RefundStatus.choices},
    )


def _amount_text(refund) -> str:
    if refund.fiat_priced:
        return f"{refund.fiat_amount.normalize():f} {refund.fiat_currency}"
    base_units = refund_amount_base_units(refund)
    assert base_units is not None  # converted: only a fiat-priced refund waits for its amount
    return f"{format_amount(base_units, get_asset(refund.currency, refund.network))} {refund.currency}"


@merchant_page
def refund_new(request: MerchantRequest, draft_id) -> HttpResponse:
    draft = draft_get(user=request.user, draft_id=draft_id)
    if draft.status != DraftStatus.CONFIRMED:
        raise Http404("Only a Confirmed draft can be refunded.")
    paid = format_amount(draft.received_base_units or draft.amount_base_units, get_asset(draft.currency, draft.network))
    form = RefundForm(
        request.POST or None, initial={"currency": draft.currency, "network": draft.network}, paid_on=draft.network
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        kind = data["kind"]
        try:
            amount = None
            if kind == "exact":
                try:
                    amount = to_base_units(data["amount"], get_asset(data["currency"], data["network"]))
                except Problem as problem:
                    raise Problem(problem.detail, code=problem.code, field="amountSats") from None
            refund = services.refund_issue(
                user=request.user,
                draft=draft,
                currency=data["currency"],
                network=data["network"],
                full=kind == "full",
                amount_base_units=amount,
                fiat_currency=data["fiatCurrency"] if kind == "fiat" else None,
                fiat_amount=data["fiatAmount"] if kind == "fiat" else None,
                reason=data["reason"] or None,
                customer_email=data["customerEmail"] or None,
                expiry_hours=data["expiryHours"],
            )
            assert not isinstance(refund, KeyTaken)  # no idempotency key was given
            messages.success(request, _("Refund issued. Send the claim link to your customer."))
            return redirect("dashboard:refund", refund_id=refund.id)
        except Problem as problem:
            _show_problem(form, problem)
    return render(request, "refunds/dashboard/new.html", {"form": form, "draft": draft, "paid": paid})


@merchant_page
def refund_detail(request: MerchantRequest, refund_id) -> HttpResponse:
    refund = refund_get(user=request.user, refund_id=refund_id)
    url = services.claim_url(refund)
    payout = refund.payout_draft
    payout_amount = None
    if payout is not None:
        payout_amount = format_amount(payout.amount_base_units, get_asset(payout.currency, payout.network))
    return render(
        request,
        "refunds/dashboard/detail.html",
        {
            "refund": refund,
            "amount": _amount_text(refund),
            "url": url,
            "payout": payout,
            "payout_amount": payout_amount,
            "payout_qr": qr_svg(payout.payment_uri)
            if payout is not None and payout.status == "Pending" and payout.payment_uri
            else None,
            "has_template": payout is not None and payout.network in BITCOIN_NETWORKS,
            "can_cancel": refund.status in (RefundStatus.CLAIMABLE, RefundStatus.CLAIMED, RefundStatus.APPROVED),
        },
    )


@merchant_page
@require_POST
def refund_action(request: MerchantRequest, refund_id, action: str) -> HttpResponse:
    refund = refund_get(user=request.user, refund_id=refund_id)
    operations: dict[str, tuple[Callable[..., Refund], str]] = {
        "approve": (
            partial(services.refund_approve, role=request.role),  # the support limit (refunds.limits)
            _("Refund approved. Pay it from your own wallet."),
        ),
        "cancel": (services.refund_cancel, _("Refund cancelled.")),
    }
    if action not in operations:
        raise Http404
    operation, done = operations[action]
    try:
        operation(refund=refund)
        messages.success(request, done)
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:refund", refund_id=refund.id)
