"""Dashboard: recurring templates, the address book and its receiving-address lock."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.modes import livemode_of
from accounts.receiver_lock import receiver_lock_get, receiver_lock_set
from accounts.sessions import client_of
from accounts.stepup import StepUpRequired
from addressbook.api.edge import address_book_entry_save, address_book_entry_usable_now
from addressbook.selectors import address_book_entry_get
from addressbook.services import (
    address_book_default_clear,
    address_book_default_set,
    address_book_entry_delete,
)
from core.problems import Problem
from dashboard.drafting import api_draft_body, draft_form_context
from dashboard.exports import exportable
from dashboard.forms import (
    AddressBookForm,
    RecurringTemplateForm,
)
from dashboard.lists import ADDRESS_BOOK, TEMPLATES
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from dashboard.views.security import step_up_redirect
from payments import formatting
from recurring.presenters import refusal_reason
from recurring.schedule import run_time
from recurring.selectors import recurring_template_get
from recurring.services import (
    recurring_template_create,
    recurring_template_delete,
    recurring_template_pause,
    recurring_template_resume,
)


@merchant_page
@exportable(TEMPLATES)
def templates(request: MerchantRequest) -> HttpResponse:
    form = RecurringTemplateForm(
        request.POST or None,
        initial={"pricing": "fiat", "timezone": request.display.time_zone, "fiatCurrency": request.display.currency},
        livemode=livemode_of(request.user),
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
                show_problem(form, problem)
    rows = [(t, _next_runs(t), refusal_reason(t.last_refusal)) for t in TEMPLATES.filtered(request)]
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
def template_action(request: MerchantRequest, template_id, action: str) -> HttpResponse:
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
@exportable(ADDRESS_BOOK)
def address_book(request: MerchantRequest) -> HttpResponse:
    form = AddressBookForm(request.POST or None, livemode=livemode_of(request.user))
    if request.method == "POST" and form.is_valid():
        try:
            entry = address_book_entry_save(user=request.user, fields=form.cleaned_data, request=request)
            if entry.usable_from:
                messages.success(
                    request,
                    _("Address saved. Under the receiving-address lock, API keys and agents may use it from %(at)s.")
                    % {"at": formatting.local_moment(entry.usable_from)},
                )
            else:
                messages.success(request, _("Address saved."))
            return redirect("dashboard:address_book")
        except StepUpRequired:
            return step_up_redirect(request)
        except Problem as problem:
            show_problem(form, problem)
    context = {
        "form": form,
        "entries": ADDRESS_BOOK.filtered(request),
        "lock": receiver_lock_get(user=request.user),
        "now": timezone.now(),
    }
    return render(request, "dashboard/address_book.html", context)


@merchant_page
@require_POST
def receiver_lock(request: MerchantRequest) -> HttpResponse:
    """The receiving-address lock's switch: on at once; off after step-up and the waiting time."""
    enabled = request.POST.get("enabled") == "on"
    try:
        lock = receiver_lock_set(request, user=request.user, enabled=enabled, client=client_of(request))
    except StepUpRequired:
        return step_up_redirect(request, reverse("dashboard:address_book"))
    if lock.enabled and lock.off_at:
        messages.success(
            request,
            _("The receiving-address lock turns off at %(at)s.") % {"at": formatting.local_moment(lock.off_at)},
        )
    elif lock.enabled:
        messages.success(request, _("The receiving-address lock is on."))
    else:
        messages.success(request, _("The receiving-address lock is off."))
    return redirect("dashboard:address_book")


@merchant_page
@require_POST
def address_book_usable_now(request: MerchantRequest, entry_id) -> HttpResponse:
    entry = address_book_entry_get(user=request.user, entry_id=entry_id)
    try:
        address_book_entry_usable_now(request=request, entry=entry)
    except StepUpRequired:
        return step_up_redirect(request, reverse("dashboard:address_book"))
    messages.success(request, _("API keys and agents may use this address now."))
    return redirect("dashboard:address_book")


@merchant_page
@require_POST
def address_book_default(request: MerchantRequest, entry_id) -> HttpResponse:
    entry = address_book_entry_get(user=request.user, entry_id=entry_id)
    try:
        if request.POST.get("clear"):
            address_book_default_clear(entry=entry)
            done = _("No default receiving address on %(network)s now.")
        else:
            address_book_default_set(entry=entry)
            done = _("Default receiving address on %(network)s set.")
        messages.success(request, done % {"network": entry.network})
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:address_book")


@merchant_page
@require_POST
def address_book_delete(request: MerchantRequest, entry_id) -> HttpResponse:
    entry = address_book_entry_get(user=request.user, entry_id=entry_id)
    try:
        address_book_entry_delete(entry=entry)
        messages.success(request, _("Address removed."))
    except Problem as problem:
        messages.error(request, problem.detail)
    return redirect("dashboard:address_book")
