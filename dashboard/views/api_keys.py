"""Dashboard: API keys (a new one needs step-up: accounts.stepup)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib import messages
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from accounts.selectors import api_key_list
from accounts.services import api_key_issue, api_key_revoke, api_key_rotate
from accounts.sessions import client_of
from accounts.stepup import StepUpRequired
from core.problems import Problem
from dashboard.exports import exportable
from dashboard.forms import (
    ApiKeyForm,
)
from dashboard.lists import API_KEYS
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from dashboard.views.security import step_up_redirect


@merchant_page
@exportable(API_KEYS)
def api_keys(request: MerchantRequest) -> HttpResponse:
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
        request, "dashboard/api_keys.html", {"form": form, "issued": issued, "keys": API_KEYS.filtered(request)}
    )


@merchant_page
@require_POST
def api_key_revoke_view(request: MerchantRequest, key_id) -> HttpResponse:
    key = get_object_or_404(api_key_list(user=request.user), pk=key_id)
    api_key_revoke(api_key=key)
    messages.success(request, _("Key revoked. It stops working at once."))
    return redirect("dashboard:api_keys")


@merchant_page
@require_POST
def api_key_rotate_view(request: MerchantRequest, key_id) -> HttpResponse:
    """Replace a key (accounts.services.api_key_rotate) after a confirmation step: the new key is
    shown once, the old one stops working at once."""
    key = get_object_or_404(api_key_list(user=request.user), pk=key_id)
    if request.POST.get("confirmed") != "yes":
        return render(
            request,
            "dashboard/action_confirm.html",
            {
                "title": _("Rotate this key?"),
                "explanation": _(
                    "A new key with the same name, scopes and lifetime is made and shown once; this key stops "
                    "working at once, so put the new one in place of it right away."
                ),
                "facts": [
                    (_("Name"), key.name or "—"),
                    (_("Key"), f"{key.prefix}…"),
                    (_("Scopes"), ", ".join(key.scopes)),
                ],
                "action_url": request.path,
                "confirm_label": _("Yes, rotate the key"),
                "danger": True,
                "back_url": reverse("dashboard:api_keys"),
            },
        )
    try:
        issued = api_key_rotate(request, api_key=key, client=client_of(request))
    except StepUpRequired:
        return step_up_redirect(request, reverse("dashboard:api_keys"))
    except Problem as problem:
        messages.error(request, problem.detail)
        return redirect("dashboard:api_keys")
    return render(
        request,
        "dashboard/api_keys.html",
        {"form": ApiKeyForm(), "issued": issued, "keys": api_key_list(user=request.user)},
    )
