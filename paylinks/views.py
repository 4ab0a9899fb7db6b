"""The hosted pay page, /pay/{token}: server-rendered, usable without JavaScript.

Choosing an option is a plain form post (the same service as the checkout API), answered
with a redirect back to the page, so the essentials work with scripts off; pay.js only adds
copy buttons, countdowns and live status. Every response carries a strict
Content-Security-Policy (no inline script or style, nothing from other origins) and
`Referrer-Policy: no-referrer`: the token in the URL is the payer's bearer secret.

The form posts carry no CSRF token and set no cookie: nothing here acts on ambient
credentials (no session is read), the token in the path is the only authority, and a
site that does not know it cannot forge the post. (Django's CSRF check would also refuse
every real browser here: under no-referrer a form post's Origin is "null".)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import wraps

from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from accounts.profiles import merchant_profile_get
from core.problems import Problem, TooManyRequests
from core.ratelimits import cost_take
from core.text import shown
from drafts.creation import payment_uri_for
from drafts.documents import Copy, draft_pdf
from drafts.enums import DraftStatus
from drafts.models import Draft
from drafts.presenters import quote_is_live, quote_prices_date
from drafts.simulation import Outcome, draft_payment_simulate
from drafts.solana_pay import transaction_request_url
from paylinks import services
from paylinks.budget import payer_request_take
from paylinks.models import PaymentRequest, PaymentRequestStatus
from paylinks.options import PaymentOption
from paylinks.outcome import Outcome as PageOutcome
from paylinks.outcome import payment_outcome
from paylinks.presenters import checkout_options, checkout_selection_json, option_label, payer_status
from paylinks.selectors import payment_request_by_token
from paylinks.services import merchant_name
from payments import formatting
from payments.enums import Method
from payments.qr import qr_svg_responsive
from payments.rates import RatesUnavailable
from payments.registry import format_amount, get_asset
from payments.wallet_requests import evm_wallet_request

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "form-action 'self'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)


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


def page_throttled(request: HttpRequest, busy_template: str = "paylinks/busy.html") -> HttpResponse | None:
    """None while the address is within the checkout's per-address budget (shared by every
    payer page: the pay page and the refund claim page); else the page's 429 with Retry-After."""
    allowed, wait = payer_request_take(request)
    if allowed:
        return None
    response = render(request, busy_template, status=429)
    response["Retry-After"] = str(max(1, int(wait)))
    return response


def _option_key(option: PaymentOption) -> str:
    return f"{option.currency}:{option.network}:{option.method}"


@dataclass(frozen=True)
class Choice:
    key: str
    label: str
    currency: str
    network: str
    method: str
    selected: bool


def _context(payment_request: PaymentRequest, *, error: str | None = None, receipt: bool = False) -> dict:
    now = timezone.now()
    status = payer_status(payment_request, now)
    draft = payment_request.draft
    selection = checkout_selection_json(draft) if draft is not None else None
    current_key = f"{draft.currency}:{draft.network}:{draft.method}" if draft is not None else None
    choices = [
        Choice(_option_key(o), option_label(o), o.currency, o.network, o.method, _option_key(o) == current_key)
        for o in checkout_options(payment_request)
    ]
    draft_status = draft.status if draft is not None else None
    outcome = payment_outcome(payment_request, now)
    state = outcome.state
    qr = None
    if selection and selection["paymentUri"] and state == "pending":
        qr = qr_svg_responsive(selection["paymentUri"], title=_("QR code of the payment request for your wallet"))
    # A Solana draft is also offered as a Solana Pay transaction request (drafts.solana_pay).
    transaction_request = transaction_request_url(draft) if draft is not None and state == "pending" else None
    transaction_request_qr = (
        qr_svg_responsive(transaction_request, title=_("QR code of the Solana Pay transaction request for your wallet"))
        if transaction_request
        else None
    )
    short = _short_payment(draft, outcome, now) if draft is not None else None
    profile = merchant_profile_get(user=payment_request.user)
    merchant = merchant_name(payment_request)
    return {
        "request": payment_request,
        "token": payment_request.token,
        "merchant": merchant,
        "logo_url": profile.logo_url,
        "support_email": profile.support_email,
        "support_url": profile.support_url,
        "return_url": payment_request.return_url if state in ("paid", "cancelled", "expired") else None,
        "outcome": outcome,
        "memo": shown(payment_request.memo),
        "order_id": shown(payment_request.order_id),
        "fiat": formatting.fiat_amount(payment_request.fiat_amount, payment_request.fiat_currency),
        "status": status,
        "state": state,
        "choices": choices,
        "selection": selection,
        "draft": draft,
        "lightning": draft is not None and draft.method == Method.LIGHTNING,
        "qr_svg": qr,
        "transaction_request_url": transaction_request,
        "transaction_request_qr": transaction_request_qr,
        "network_label": formatting.network_name(draft.network) if draft is not None else "",
        "amount_text": formatting.asset_amount(selection["amount"], draft.currency) if draft and selection else "",
        "received_text": (
            formatting.asset_amount(selection["receivedAmount"], draft.currency)
            if draft and selection and selection["receivedAmount"]
            else ""
        ),
        "rate": (
            formatting.rate_text(draft.rate, draft.currency, draft.fiat_currency)
            if draft is not None and draft.rate and draft.fiat_currency
            else None
        ),
        "rate_live": draft is None or quote_is_live(draft),
        "rate_date": quote_prices_date(draft) if draft is not None else None,
        "confirmations": draft.confirmations if draft is not None else 0,
        "draft_expired": state == "choose" and draft_status in (DraftStatus.EXPIRED, DraftStatus.PENDING),
        "polling": outcome.polling or (state == "expired" and draft_status is not None),
        "status_url": reverse("checkout-status", kwargs={"token": payment_request.token}),
        "state_key": f"{status}:{draft_status or ''}",
        # What the long poll compares (paylinks/live.py): the state key and the confirmations.
        "live_url": f"/pay/{payment_request.token}/live",
        "live_state": f"{status}:{draft_status or ''}:{draft.confirmations if draft else 0}",
        "short": short,
        "error": error,
        "receipt_asked": receipt or bool(payment_request.payer_email),
        "receipt_sent": status == PaymentRequestStatus.PAID and bool(payment_request.payer_email),
        "test_mode": not payment_request.livemode,
        # A test-mode link: its pending (or seen) draft can be paid on demand (drafts.simulation).
        "can_simulate": not payment_request.livemode and state in ("pending", "seen"),
        # What a browser wallet is asked to send (wallet.js): the draft's transfer, from the registry.
        "wallet_request": _wallet_request(draft) if draft is not None and state == "pending" else None,
        "webln_invoice": draft.bolt11 if draft is not None and state == "pending" and draft.bolt11 else None,
    }


def _wallet_request(draft: Draft) -> dict | None:
    """The EVM transfer a browser wallet may send for `draft`; None off EVM networks, or when the
    draft's token is no longer the registry's (the wallet would pay a contract nobody watches)."""
    if draft.method == Method.LIGHTNING or not draft.receiver_address:
        return None
    asset = get_asset(draft.currency, draft.network)
    if asset.family != "evm":
        return None
    if asset.kind == "token" and (draft.token_address or "").lower() != (asset.token_address or "").lower():
        return None
    return evm_wallet_request(asset=asset, recipient=draft.receiver_address, amount_base_units=draft.amount_base_units)


@_page_headers
@require_GET
def pay_page(request: HttpRequest, token: str) -> HttpResponse:
    if (busy := page_throttled(request)) is not None:
        return busy
    payment_request = _request_or_none(token)
    if payment_request is None:
        return render(request, "paylinks/not_found.html", status=404)
    return render(request, "paylinks/pay.html", _context(payment_request, receipt=request.GET.get("receipt") == "1"))


@csrf_exempt
@_page_headers
@require_POST
def pay_select(request: HttpRequest, token: str) -> HttpResponse:
    """The picker's form post: the JavaScript-free path to a payment QR."""
    if (busy := page_throttled(request)) is not None:
        return busy
    payment_request = _request_or_none(token)
    if payment_request is None:
        return render(request, "paylinks/not_found.html", status=404)
    currency, _sep, rest = request.POST.get("option", "").partition(":")
    network, _sep, method = rest.partition(":")
    try:
        services.checkout_select(
            token=token,
            currency=currency,
            network=network,
            method=method or None,
            language=translation.get_language() or "",
        )
    except Problem as problem:
        payment_request.refresh_from_db()
        return render(request, "paylinks/pay.html", _context(payment_request, error=_payer_error(problem)), status=200)
    return HttpResponseRedirect(reverse("pay-page", kwargs={"token": token}), status=303)


@csrf_exempt
@_page_headers
@require_POST
def pay_receipt(request: HttpRequest, token: str) -> HttpResponse:
    if (busy := page_throttled(request)) is not None:
        return busy
    payment_request = _request_or_none(token)
    if payment_request is None:
        return render(request, "paylinks/not_found.html", status=404)
    email = request.POST.get("email", "").strip()
    try:
        validate_email(email)
        services.checkout_receipt_request(token=token, email=email, language=translation.get_language())
    except (ValidationError, Problem):
        context = _context(payment_request, error=_("Enter a valid email address for the receipt."))
        return render(request, "paylinks/pay.html", context, status=200)
    return HttpResponseRedirect(reverse("pay-page", kwargs={"token": token}) + "?receipt=1", status=303)


@csrf_exempt  # as the other forms here: the token in the path is the only authority (module docstring)
@_page_headers
@require_POST
def pay_simulate(request: HttpRequest, token: str) -> HttpResponse:
    """A test-mode link's "Simulate payment" button: its draft is paid through the watchers' door."""
    if (busy := page_throttled(request)) is not None:
        return busy
    payment_request = _request_or_none(token)
    if payment_request is None or payment_request.livemode:
        return render(request, "paylinks/not_found.html", status=404)
    draft = payment_request.draft
    if draft is None or draft.status not in (DraftStatus.PENDING, DraftStatus.SEEN):
        context = _context(payment_request, error=_("There is no payment to simulate: choose how to pay first."))
        return render(request, "paylinks/pay.html", context, status=200)
    try:  # the merchant's test-helper budget, shared with its keys: no account spends another's
        cost_take(cost="test-helper", account_id=payment_request.user_id)
    except TooManyRequests as spent:
        response = render(request, "paylinks/busy.html", status=429)
        response["Retry-After"] = str(spent.retry_after)
        return response
    try:
        draft_payment_simulate(draft=draft, outcome=Outcome.EXACT)
    except Problem as problem:
        payment_request.refresh_from_db()
        return render(request, "paylinks/pay.html", _context(payment_request, error=_payer_error(problem)), status=200)
    return HttpResponseRedirect(reverse("pay-page", kwargs={"token": token}), status=303)


@_page_headers
@require_GET
def pay_document(request: HttpRequest, token: str) -> HttpResponse:
    """The payer's copy of the chosen draft's document, in the page's language: the receipt once
    the payment is confirmed, the payment request before then (drafts.documents)."""
    if (busy := page_throttled(request)) is not None:
        return busy
    payment_request = _request_or_none(token)
    if payment_request is None or payment_request.draft is None:
        return render(request, "paylinks/not_found.html", status=404)
    try:  # the merchant's PDF budget, shared with its keys and dashboard
        cost_take(cost="pdf", account_id=payment_request.user_id)
    except TooManyRequests as spent:
        response = render(request, "paylinks/busy.html", status=429)
        response["Retry-After"] = str(spent.retry_after)
        return response
    draft = payment_request.draft
    pdf = draft_pdf(draft, language=translation.get_language(), copy=Copy.PAYER)
    response = HttpResponse(pdf, content_type="application/pdf")
    name = "receipt" if draft.status == DraftStatus.CONFIRMED else "payment"
    response["Content-Disposition"] = f'inline; filename="{name}-{draft.id}.pdf"'
    return response


@dataclass(frozen=True)
class ShortPayment:
    """A short payment as the payer reads it: what arrived, what is missing (in the asset, and
    in the draft's fiat when it is fiat-priced), and, while the draft's time lasts, a payment
    URI and QR code for exactly the rest (counted as a split of the same draft)."""

    received: str
    missing: str
    received_fiat: str | None
    missing_fiat: str | None
    rest_uri: str | None
    rest_qr: str | None


def _short_payment(draft: Draft, outcome: PageOutcome, now: datetime) -> ShortPayment | None:
    if outcome.state != "mismatch" or not outcome.short or draft.received_base_units is None:
        return None
    asset = get_asset(draft.currency, draft.network)
    rest = draft.amount_base_units - draft.received_base_units
    received_units = Decimal(draft.received_base_units).scaleb(-asset.decimals)
    rest_units = Decimal(rest).scaleb(-asset.decimals)
    fiat = draft.fiat_currency if draft.fiat_amount is not None and draft.rate else None
    rest_uri = None
    if draft.method != Method.LIGHTNING and draft.expires_at > now and not draft.accepted_by_owner:
        rest_uri = payment_uri_for(draft, asset, rest)
    return ShortPayment(
        received=formatting.asset_amount(format_amount(draft.received_base_units, asset), draft.currency),
        missing=formatting.asset_amount(format_amount(rest, asset), draft.currency),
        received_fiat=formatting.fiat_amount(received_units * draft.rate, fiat) if fiat else None,
        missing_fiat=formatting.fiat_amount(rest_units * draft.rate, fiat) if fiat else None,
        rest_uri=rest_uri,
        rest_qr=(
            qr_svg_responsive(rest_uri, title=_("QR code of the missing amount for your wallet")) if rest_uri else None
        ),
    )


def _payer_error(problem: Problem) -> str:
    """What the payer reads: no price right now is said plainly, without the operator's figures
    (fetch times, age limits, source counts) the API's problem detail gives the merchant."""
    if isinstance(problem, RatesUnavailable):
        return str(RatesUnavailable.default_detail)
    return problem.detail


def _request_or_none(token: str) -> PaymentRequest | None:
    try:
        return payment_request_by_token(token=token)
    except Http404:
        return None
