"""What every dashboard page shares: the home redirect, sign-out, the Test mode switch and showing
a Problem on a form."""

from __future__ import annotations

import re

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts import teams
from accounts.sessions import session_sign_out
from core.problems import NotFound, Problem, reworded
from dashboard.security import TEST_MODE_SESSION_KEY, MerchantRequest, merchant_page, page_headers

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
def mode_switch(request: MerchantRequest) -> HttpResponse:
    """The "Test mode" switch: on, every page shows and makes the account's test objects only."""
    on = request.POST.get("testMode") == "on"
    request.session[TEST_MODE_SESSION_KEY] = on
    if on:
        messages.info(request, _("Test mode on: you see and make test objects only, on test networks."))
    else:
        messages.info(request, _("Test mode off: you see and make live objects."))
    return redirect("dashboard:overview")


@merchant_page
@require_POST
def organization_switch(request: MerchantRequest) -> HttpResponse:
    """The organization switcher: work in another organization the person is a member of (their
    own account included), with their role there (accounts.teams)."""
    try:
        membership = teams.organization_switch(
            request, person=request.person, organization_public_id=request.POST.get("organization", "")
        )
    except (NotFound, ValidationError):
        messages.error(request, _("You are not a member of that organization."))
        return redirect("dashboard:overview")
    request.session.pop(TEST_MODE_SESSION_KEY, None)  # each organization starts in live mode
    messages.info(request, _("You now work in %(organization)s.") % {"organization": membership.organization.email})
    return redirect("dashboard:overview")


def show_problem(form, problem: Problem) -> None:
    """A domain Problem next to the field it names (or at the top of the form), the field named
    by the label the merchant sees rather than the API's name for it."""
    placed = False
    for field, message in problem.fields.items():
        name = form.field_for(field) if hasattr(form, "field_for") else (field if field in form.fields else None)
        if name:
            form.add_error(name, field_worded(form, message, {field: name}))
            placed = True
    if not placed:
        form.add_error(
            None,
            field_worded(
                form,
                reworded(problem.wording) or problem.detail,
                {field: form.field_for(field) if hasattr(form, "field_for") else field for field in problem.fields},
            ),
        )


# A field's name as code writes it: snake_case, camelCase or an indexed path (options[0].network).
_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:(?:_|\[\d+\]\.?)[A-Za-z0-9]+|[a-z0-9][A-Z][A-Za-z0-9]*)+")


def field_worded(form, message: str, names: dict[str, str | None] | None = None) -> str:
    """`message` with every field name in it (the API's, mapped by `names` to the form's, or the
    form's own) replaced by that field's label: "support_url must be an absolute https:// URL."
    becomes "Support page must be an absolute https:// URL."."""
    names = dict(names or {})
    names.update({name: name for name in form.fields})

    def label(match: re.Match[str]) -> str:
        word = match.group(0)
        target = names.get(word)
        if target and target in form.fields and form.fields[target].label:
            return str(form.fields[target].label)
        return word

    return _IDENTIFIER.sub(label, str(message))
