"""What every dashboard page shares: the home redirect, sign-out, the Test mode switch and showing
a Problem on a form."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.sessions import session_sign_out
from core.problems import Problem
from dashboard.security import TEST_MODE_SESSION_KEY, merchant_page, page_headers

PAGE_SIZE = 20


def home(request: HttpRequest) -> HttpResponse:
    """`/`: a merchant goes to the overview, a visitor to sign-in."""
    if request.user.is_authenticated:
        return page_headers(redirect("dashboard:overview"))
    return page_headers(redirect(settings.LOGIN_URL))


@require_POST
def signout(request: HttpRequest) -> HttpResponse:
    session_sign_out(request)
    return page_headers(redirect(settings.LOGIN_URL))


@merchant_page
@require_POST
def mode_switch(request: HttpRequest) -> HttpResponse:
    """The "Test mode" switch: on, every page shows and makes the account's test objects only."""
    on = request.POST.get("testMode") == "on"
    request.session[TEST_MODE_SESSION_KEY] = on
    if on:
        messages.info(request, _("Test mode on: you see and make test objects only, on test networks."))
    else:
        messages.info(request, _("Test mode off: you see and make live objects."))
    return redirect("dashboard:overview")


def show_problem(form, problem: Problem) -> None:
    """A domain Problem next to the field it names (or at the top of the form)."""
    placed = False
    for field, message in problem.fields.items():
        name = form.field_for(field) if hasattr(form, "field_for") else (field if field in form.fields else None)
        if name:
            form.add_error(name, message)
            placed = True
    if not placed:
        form.add_error(None, problem.detail)
