"""The merchant dashboard: server-rendered pages, each a thin caller of the same services the
API uses (drafts door, state machine, webhooks, API keys, fee settlement). A domain Problem is
shown next to the form field it names."""

from __future__ import annotations

import csv
import json
from datetime import timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.conf import settings
from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.closure import account_delete
from accounts.passkeys import passkey_delete
from accounts.passwords import password_change
from accounts.selectors import api_key_list
from accounts.services import api_key_create, api_key_revoke
from accounts.sessions import client_of, session_sign_out
from accounts.totp import totp_disable, totp_enable, totp_enabled, totp_setup
from addressbook.selectors import address_book_entry_get, address_book_list
from addressbook.services import (
    address_book_default_clear,
    address_book_default_set,
    address_book_entry_create,
    address_book_entry_delete,
)
from chainwatch.unmatched import transfer_attach, unmatched_json, unmatched_list
from config.problems import Problem
from dashboard import charts
from dashboard.drafting import api_draft_body, draft_form_context, draft_request_of, fee_preview_text
from dashboard.forms import (
    AddressBookForm,
    ApiKeyForm,
    AttachForm,
    CodeForm,
    CreateDraftForm,
    DeleteAccountForm,
    DraftFilterForm,
    NotificationsForm,
    PasswordChangeForm,
    PayLinkPreferenceForm,
    PaymentRequestForm,
    RecurringTemplateForm,
    SettleForm,
    WebhookForm,
)
from dashboard.security import costly_refusal, merchant_page, page_headers
from drafts import services as draft_services
from drafts.documents import draft_pdf, draft_tx_template
from drafts.models import Draft
from drafts.presenters import quote_is_live
from drafts.requests import Origin
from drafts.selectors import draft_get, draft_list
from drafts.settlement import settlement_open
from fees.ledger import balance_of
from fees.models import AccruedFee
from notifications.selectors import notification_email_enabled
from notifications.services import notification_preference_update
from paylinks.presenters import pay_url
from paylinks.selectors import announces_checkout_drafts, payment_request_get, payment_request_list
from paylinks.services import pay_link_preference_update, payment_request_cancel, payment_request_create
from payments.explorers import tx_url
from payments.qr import qr_svg
from payments.rates.fiat import FIAT_CURRENCIES
from payments.registry import format_amount, get_asset
from recurring.schedule import run_time
from recurring.selectors import recurring_template_get, recurring_template_list
from recurring.services import (
    recurring_template_create,
    recurring_template_delete,
    recurring_template_pause,
    recurring_template_resume,
)
from webhooks import services as webhook_services
from webhooks.models import Delivery, Event
from webhooks.selectors import delivery_list, webhook_list

PAGE_SIZE = 20
PAYABLE_STATUSES = ("Pending", "AmountMismatch")
PAID_STATUSES = ("Seen", "Confirmed")
ATTACHABLE_STATUSES = ("Pending", "Expired")  # drafts.services.draft_payment_attach


def home(request: HttpRequest) -> HttpResponse:
    """`/`: a merchant goes to the overview, a visitor to sign-in."""
    if request.user.is_authenticated:
        return page_headers(redirect("dashboard:overview"))
    return page_headers(redirect(settings.LOGIN_URL))


@require_POST
def signout(request: HttpRequest) -> HttpResponse:
    session_sign_out(request)
    return page_headers(redirect(settings.LOGIN_URL))


def _show_problem(form, problem: Problem) -> None:
    """A domain Problem next to the field it names (or at the top of the form)."""
    placed = False
    for field, message in problem.fields.items():
        name = form.field_for(field) if hasattr(form, "field_for") else (field if field in form.fields else None)
        if name:
            form.add_error(name, message)
            placed = True
    if not placed:
        form.add_error(None, problem.detail)


# --- Overview -------------------------------------------------------------------------


@merchant_page
def overview(request: HttpRequest) -> HttpResponse:
    # The account's display currency; `?ccy=EUR` (the "Show in" control) shows another one once.
    asked = (request.GET.get("ccy") or "").strip().upper()
    currency = asked if asked in FIAT_CURRENCIES else request.display.currency
    balance = balance_of(request.user)
    volume = charts.confirmed_volume(user=request.user, days=30, display_currency=currency)
    return render(
        request,
        "dashboard/overview.html",
        {
            "balance": balance,
            "cap_usd": settings.FEE_MAX_OUTSTANDING_USD,
            "cap_days": settings.FEE_MAX_AGE_DAYS,
            "recent": Draft.objects.filter(user=request.user, superseded_at__isnull=True).order_by("-created_at")[:8],
            "chart": volume,
            "chart_svg": charts.volume_svg(volume, charts.WIDE),
            "chart_svg_narrow": charts.volume_svg(volume, charts.NARROW),
            "legend": [(asset, charts.legend_swatch(i)) for i, asset in enumerate(volume.assets)],
            "fiat_currencies": FIAT_CURRENCIES,
        },
    )


# --- Drafts ---------------------------------------------------------------------------


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
        ["id", "createdAt", "status", "network", "currency", "method", "amount", "amountSats", "fiatCurrency",
         "fiatAmount", "receiverAddress", "paidTxId", "orderId", "memo"]
    )  # fmt: skip
    for draft in queryset.iterator():
        asset = get_asset(draft.currency, draft.network)
        writer.writerow(
            [
                draft.id,
                draft.created_at.isoformat().replace("+00:00", "Z"),
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
                draft = draft_services.draft_create_from_request(
                    user=request.user, request=draft_request_of(form.cleaned_data, request.user), origin=Origin.api()
                )
                messages.success(request, _("Draft created."))
                return redirect("dashboard:draft", draft_id=draft.id)
        except Problem as problem:
            _show_problem(form, problem)
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
                (tx, tx_url(network=draft.network, method=draft.method, tx_id=tx))
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


# --- Webhooks -------------------------------------------------------------------------


@merchant_page
def webhooks(request: HttpRequest) -> HttpResponse:
    form = WebhookForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created = webhook_services.webhook_create(
                user=request.user, url=form.cleaned_data["url"], events=form.cleaned_data["events"] or None
            )
            form = WebhookForm()
        except Problem as problem:
            _show_problem(form, problem)
    return render(
        request,
        "dashboard/webhooks.html",
        {"form": form, "created": created, "webhooks": webhook_list(user=request.user)},
    )


def _own_webhook(request: HttpRequest, webhook_id):
    return get_object_or_404(webhook_list(user=request.user), pk=webhook_id)


@merchant_page
def webhook_detail(request: HttpRequest, webhook_id) -> HttpResponse:
    webhook = _own_webhook(request, webhook_id)
    page = Paginator(
        delivery_list(webhook=webhook).select_related("event").prefetch_related("attempts"), PAGE_SIZE
    ).get_page(request.GET.get("page"))
    return render(request, "dashboard/webhook_detail.html", {"webhook": webhook, "page": page})


@merchant_page
@require_POST
def webhook_action(request: HttpRequest, webhook_id, action: str) -> HttpResponse:
    webhook = _own_webhook(request, webhook_id)
    try:
        if action == "test":
            webhook_services.webhook_send_test(webhook=webhook)
            messages.success(request, _("A test event is on its way."))
        elif action == "delete":
            webhook_services.webhook_delete(webhook=webhook)
            messages.success(request, _("Webhook removed."))
            return redirect("dashboard:webhooks")
        elif action == "rotate":
            rotated = webhook_services.webhook_rotate_secret(webhook=webhook)
            return render(request, "dashboard/webhook_secret.html", {"webhook": rotated, "secret": rotated.secret})
        elif action == "redeliver":
            delivery = get_object_or_404(delivery_list(webhook=webhook), pk=request.POST.get("delivery"))
            webhook_services.delivery_redeliver(delivery=delivery)
            messages.success(request, _("Delivery queued again."))
        else:
            raise Http404
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:webhook", webhook_id=webhook.id)


# --- API keys -------------------------------------------------------------------------


@merchant_page
def api_keys(request: HttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    issued = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data.get("expiresInDays")
        try:
            issued = api_key_create(
                user=request.user,
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                expires_at=timezone.now() + timedelta(days=days) if days else None,
            )
            form = ApiKeyForm()
        except Problem as problem:
            _show_problem(form, problem)
    return render(
        request, "dashboard/api_keys.html", {"form": form, "issued": issued, "keys": api_key_list(user=request.user)}
    )


@merchant_page
@require_POST
def api_key_revoke_view(request: HttpRequest, key_id) -> HttpResponse:
    key = get_object_or_404(api_key_list(user=request.user), pk=key_id)
    api_key_revoke(api_key=key)
    messages.success(request, _("Key revoked. It stops working at once."))
    return redirect("dashboard:api_keys")


# --- Accrued fees ---------------------------------------------------------------------


@merchant_page
def fees(request: HttpRequest) -> HttpResponse:
    form = SettleForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            settlement = settlement_open(user=request.user, **form.cleaned_data)
            messages.success(request, _("Settlement draft created: pay it like any other draft."))
            return redirect("dashboard:draft", draft_id=settlement.id)
        except Problem as problem:
            _show_problem(form, problem)
    entries = AccruedFee.objects.filter(user=request.user).select_related("draft").order_by("-accrued_at")[:100]
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


# --- Pay links ------------------------------------------------------------------------


@merchant_page
def paylinks(request: HttpRequest) -> HttpResponse:
    status = request.GET.get("status") or None
    page = Paginator(payment_request_list(user=request.user, filters={"status": status}), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    bound = request.POST if request.method == "POST" else None  # an unticked box posts nothing
    preference = PayLinkPreferenceForm(
        bound, initial={"quietCheckoutDrafts": not announces_checkout_drafts(user_id=request.user.pk)}
    )
    if request.method == "POST" and preference.is_valid():
        pay_link_preference_update(
            user=request.user, quiet_checkout_drafts=preference.cleaned_data["quietCheckoutDrafts"]
        )
        messages.success(request, _("Saved."))
        return redirect("dashboard:paylinks")
    return render(request, "dashboard/paylinks.html", {"page": page, "status": status, "preference": preference})


@merchant_page
def paylink_new(request: HttpRequest) -> HttpResponse:
    form = PaymentRequestForm(request.POST or None, initial={"fiatCurrency": request.display.currency})
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
            _show_problem(form, problem)
    return render(request, "dashboard/paylink_new.html", draft_form_context(request, form))


@merchant_page
def paylink_detail(request: HttpRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    url = pay_url(payment_request)
    drafts = list(
        Draft.objects.filter(user=request.user, payment_request_id=payment_request.id).order_by("-created_at")
    )
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
def paylink_cancel(request: HttpRequest, payment_request_id) -> HttpResponse:
    payment_request = payment_request_get(user=request.user, payment_request_id=payment_request_id)
    try:
        payment_request_cancel(payment_request=payment_request)
        messages.success(request, _("Pay link cancelled."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:paylink", payment_request_id=payment_request.id)


# --- Account security and notifications -------------------------------------------------


def _security_context(request: HttpRequest, **extra) -> dict:
    return {
        "password_form": PasswordChangeForm(),
        "code_form": CodeForm(),
        "delete_form": DeleteAccountForm(),
        "totp_on": totp_enabled(user=request.user),
        "passkeys": request.user.passkeys.order_by("created_at"),
        "devices": request.user.known_devices.order_by("-last_seen_at")[:20],
        "has_password": request.user.has_usable_password(),
        **extra,
    }


@merchant_page
def security(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "dashboard/security.html", _security_context(request))
    action, client = request.POST.get("action"), client_of(request)
    extra: dict = {}
    try:
        if action == "password":
            form = extra["password_form"] = PasswordChangeForm(request.POST)
            if form.is_valid():
                password_change(request, user=request.user, client=client, **{
                    "current_password": form.cleaned_data["currentPassword"],
                    "new_password": form.cleaned_data["newPassword"],
                })  # fmt: skip
                messages.success(request, _("Password changed. Other sessions were signed out."))
                return redirect("dashboard:security")
        elif action == "totp_setup":
            extra["totp_setup"] = totp_setup(user=request.user)
        elif action in ("totp_enable", "totp_disable"):
            form = extra["code_form"] = CodeForm(request.POST)
            if form.is_valid():
                if action == "totp_enable":
                    extra["recovery_codes"] = totp_enable(
                        user=request.user, code=form.cleaned_data["code"], client=client
                    )
                    extra["code_form"] = CodeForm()
                else:
                    totp_disable(user=request.user, code=form.cleaned_data["code"], client=client)
                    messages.success(request, _("The authenticator app is off."))
                    return redirect("dashboard:security")
        elif action == "passkey_delete":
            passkey_delete(user=request.user, passkey_id=request.POST.get("passkey"))
            messages.success(request, _("Passkey removed."))
            return redirect("dashboard:security")
        elif action == "delete_account":
            form = extra["delete_form"] = DeleteAccountForm(request.POST)
            if form.is_valid():
                account_delete(request, user=request.user, client=client)
                return redirect(settings.LOGIN_URL)
        else:
            raise Http404
    except Problem as problem:
        target = next((f for f in extra.values() if hasattr(f, "add_error")), None)
        if target is not None:
            _show_problem(target, problem)
        else:
            messages.error(request, problem.detail)
    return render(request, "dashboard/security.html", _security_context(request, **extra))


@merchant_page
def notifications(request: HttpRequest) -> HttpResponse:
    bound = request.POST if request.method == "POST" else None  # an unticked box posts nothing
    form = NotificationsForm(bound, initial={"emailEnabled": notification_email_enabled(user=request.user)})
    if request.method == "POST" and form.is_valid():
        notification_preference_update(user=request.user, email_enabled=form.cleaned_data["emailEnabled"])
        messages.success(request, _("Saved."))
        return redirect("dashboard:notifications")
    return render(request, "dashboard/notifications.html", {"form": form})


# --- Unmatched transfers -------------------------------------------------------------------


def _attachable(request: HttpRequest, report):
    """The report's candidate drafts that can still take a payment (what attaching accepts)."""
    return Draft.objects.filter(user=request.user, id__in=report.candidate_draft_ids, status__in=ATTACHABLE_STATUSES)


@merchant_page
def transfers(request: HttpRequest) -> HttpResponse:
    matched = {"true": True, "false": False}.get(request.GET.get("matched", "false"))
    page = Paginator(unmatched_list(user=request.user, matched=matched), PAGE_SIZE).get_page(request.GET.get("page"))
    rows = []
    for report in page.object_list:
        drafts = _attachable(request, report).order_by("-created_at")
        rows.append((unmatched_json(report), AttachForm(drafts=drafts, prefix=str(report.id))))
    return render(request, "dashboard/transfers.html", {"page": page, "rows": rows, "matched": matched})


@merchant_page
@require_POST
def transfer_attach_view(request: HttpRequest, report_id) -> HttpResponse:
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
        messages.error(request, problem.detail)
        return redirect("dashboard:transfers")


# --- Recurring templates and the address book -----------------------------------------------


@merchant_page
def templates(request: HttpRequest) -> HttpResponse:
    form = RecurringTemplateForm(
        request.POST or None,
        initial={"pricing": "fiat", "timezone": request.display.time_zone, "fiatCurrency": request.display.currency},
    )
    if request.method == "POST" and "refresh" in request.POST:
        form.errors.clear()  # only the lists change with the network
    elif request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        first = data.get("firstRunAt")
        try:
            zone = ZoneInfo(data["timezone"])
        except (ZoneInfoNotFoundError, ValueError):
            form.add_error("timezone", _("Not an IANA time zone (e.g. Europe/Stockholm)."))
        else:
            try:
                recurring_template_create(
                    user=request.user,
                    interval=data["interval"],
                    draft=api_draft_body(data),
                    name=data.get("name") or "",
                    first_run_at=first.replace(tzinfo=zone) if first else None,
                    tz=data["timezone"],
                )
                messages.success(request, _("Template saved."))
                return redirect("dashboard:templates")
            except Problem as problem:
                _show_problem(form, problem)
    rows = [(t, _next_runs(t)) for t in recurring_template_list(user=request.user)]
    return render(request, "dashboard/templates.html", draft_form_context(request, form, rows=rows))


def _next_runs(template, count: int = 3) -> list:
    if template.paused:
        return []
    return [
        run_time(first_run_at=template.first_run_at, interval=template.interval, tz=template.time_zone, index=i)
        for i in range(template.next_run_index, template.next_run_index + count)
    ]


@merchant_page
@require_POST
def template_action(request: HttpRequest, template_id, action: str) -> HttpResponse:
    template = recurring_template_get(user=request.user, template_id=template_id)
    operations = {
        "pause": recurring_template_pause,
        "resume": recurring_template_resume,
        "delete": recurring_template_delete,
    }
    if action not in operations:
        raise Http404
    try:
        operations[action](template=template)
        messages.success(request, _("Done."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:templates")


@merchant_page
def address_book(request: HttpRequest) -> HttpResponse:
    form = AddressBookForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            address_book_entry_create(user=request.user, **form.cleaned_data)
            messages.success(request, _("Address saved."))
            return redirect("dashboard:address_book")
        except Problem as problem:
            _show_problem(form, problem)
    return render(
        request, "dashboard/address_book.html", {"form": form, "entries": address_book_list(user=request.user)}
    )


@merchant_page
@require_POST
def address_book_default(request: HttpRequest, entry_id) -> HttpResponse:
    entry = address_book_entry_get(user=request.user, entry_id=entry_id)
    try:
        if request.POST.get("clear"):
            address_book_default_clear(entry=entry)
            messages.success(
                request, _("No default receiving address on %(network)s now.") % {"network": entry.network}
            )
        else:
            address_book_default_set(entry=entry)
            messages.success(request, _("Default receiving address on %(network)s set.") % {"network": entry.network})
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:address_book")


@merchant_page
@require_POST
def address_book_delete(request: HttpRequest, entry_id) -> HttpResponse:
    entry = address_book_entry_get(user=request.user, entry_id=entry_id)
    try:
        address_book_entry_delete(entry=entry)
        messages.success(request, _("Address removed."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:address_book")
