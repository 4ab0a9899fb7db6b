"""Dashboard: API keys (a new one needs step-up: accounts.stepup)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.selectors import api_key_list
from accounts.services import api_key_issue, api_key_revoke
from accounts.sessions import client_of
from accounts.stepup import StepUpRequired
from core.problems import Problem
from dashboard.forms import (
    ApiKeyForm,
)
from dashboard.security import merchant_page
from dashboard.views.common import show_problem
from dashboard.views.security import step_up_redirect


@merchant_page
def api_keys(request: HttpRequest) -> HttpResponse:
    form = ApiKeyForm(request.POST or None)
    issued = None
    if request.method == "POST" and form.is_valid():
        days = form.cleaned_data.get("expiresInDays")
        try:
            issued = api_key_issue(
                request,
                user=request.user,
                client=client_of(request),
                name=form.cleaned_data["name"],
                scopes=form.cleaned_data["scopes"],
                expires_at=timezone.now() + timedelta(days=days) if days else None,
                livemode=not form.cleaned_data.get("testMode"),
            )
            form = ApiKeyForm()
        except StepUpRequired:
            return step_up_redirect(request)
        except Problem as problem:
            show_problem(form, problem)
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
