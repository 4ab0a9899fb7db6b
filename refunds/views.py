"""The hosted claim page, /refund/{token}: server-rendered, usable without JavaScript.

The customer names the address the refund goes to in a plain form post to the same URL
(the same service as the claim API), answered with a redirect back to the page. Same
standards as the pay page: a strict Content-Security-Policy, `Referrer-Policy: no-referrer`
(the token in the URL is the customer's bearer secret), no session read and no CSRF cookie:
the token in the path is the only authority (paylinks/views.py says why).
"""

from __future__ import annotations

from functools import wraps

from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from core.problems import Problem
from core.text import shown
from paylinks.views import CONTENT_SECURITY_POLICY, page_throttled
from payments import formatting
from payments.registry import format_amount, get_asset
from refunds import services
from refunds.branding import claim_facts
from refunds.events import refund_amount_base_units
from refunds.models import Refund, RefundStatus
from refunds.selectors import refund_by_token


def _page_headers(view):
    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response["Referrer-Policy"] = "no-referrer"
        response["X-Frame-Options"] = "DENY"
        response["Cache-Control"] = "no-store"
        return response

    return wrapped


def _state(refund: Refund) -> str:
    status = refund.status
    if status == RefundStatus.CLAIMABLE and refund.expires_at <= timezone.now():
        status = RefundStatus.EXPIRED
    return status.lower()


def _context(refund: Refund, *, error: str | None = None, field_error: str | None = None, address: str = "") -> dict:
    base_units = refund_amount_base_units(refund)
    amount = format_amount(base_units, get_asset(refund.currency, refund.network)) if base_units is not None else None
    payout = refund.payout_draft
    facts = claim_facts(refund)
    fiat = facts.fiat_amount is not None and facts.fiat_currency
    return {
        "refund": refund,
        "token": refund.token,
        "merchant": facts.merchant,
        "logo_url": facts.logo_url,
        "support_email": facts.support_email,
        "support_url": facts.support_url,
        "order_id": facts.order_id,
        "reason": shown(refund.reason),
        # The fiat value first when there is one (what the customer paid in), the asset's below.
        "headline": (
            formatting.fiat_amount(facts.fiat_amount or 0, facts.fiat_currency or "")
            if fiat
            else formatting.asset_amount(amount or "", refund.currency)
        ),
        "fiat_priced": bool(fiat),
        "amount": amount,
        "amount_text": formatting.asset_amount(amount, refund.currency) if amount is not None else "",
        "network_label": formatting.network_name(refund.network),
        "state": _state(refund),
        "test_mode": not refund.livemode,
        "tx_id": payout.paid_tx_id if payout is not None else None,
        "error": error,
        "field_error": field_error,
        "address_value": address,
    }


@csrf_exempt
@_page_headers
@require_http_methods(["GET", "POST"])
def claim_page(request: HttpRequest, token: str) -> HttpResponse:
    if (busy := page_throttled(request, "refunds/busy.html")) is not None:
        return busy
    try:
        refund = refund_by_token(token=token)
    except Http404:
        return render(request, "refunds/not_found.html", status=404)
    if request.method == "GET":
        return render(request, "refunds/claim.html", _context(refund))
    address = request.POST.get("refund_address", "")[:200]
    try:
        services.refund_claim(token=token, refund_address=address)
    except Problem as problem:
        refund.refresh_from_db()
        field_error = problem.fields.get("refundAddress")
        context = _context(
            refund, error=None if field_error else problem.detail, field_error=field_error, address=address
        )
        return render(request, "refunds/claim.html", context, status=422 if field_error else 200)
    return HttpResponseRedirect(reverse("refund-claim-page", kwargs={"token": token}), status=303)
