"""Dashboard: account security and notifications."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_POST

from accounts.closure import account_delete
from accounts.passkeys import passkey_delete
from accounts.passwords import password_change
from accounts.sessions import client_of
from accounts.stepup import StepUpRequired, has_second_factor, step_up_satisfied
from accounts.totp import (
    TotpCodeInvalid,
    totp_disable,
    totp_enable,
    totp_enabled,
    totp_pending,
    totp_setup,
    totp_step_up,
)
from core.problems import Problem
from dashboard.forms import (
    CodeForm,
    DeleteAccountForm,
    NotificationsForm,
    PasswordChangeForm,
)
from dashboard.security import MerchantRequest, merchant_page
from dashboard.views.common import show_problem
from notifications.selectors import notification_preference_get
from notifications.services import notification_preference_update

TOTP_TRY_AGAIN = _lazy(
    "That code did not match. Wait for the next code in your app and enter it; the key stays the same."
)


def _security_context(request: MerchantRequest, **extra) -> dict:
    totp_on = totp_enabled(user=request.user)
    if not totp_on and "totp_setup" not in extra and "recovery_codes" not in extra:
        # A key set up and not confirmed yet stays on the page until it is confirmed or replaced.
        extra["totp_setup"] = totp_pending(user=request.user)
    return {
        "password_form": PasswordChangeForm(),
        "code_form": CodeForm(),
        "delete_form": DeleteAccountForm(),
        "totp_on": totp_on,
        "passkeys": request.user.passkeys.order_by("created_at"),
        "devices": request.user.known_devices.order_by("-last_seen_at")[:20],
        "has_password": request.user.has_usable_password(),
        **extra,
    }


@merchant_page
def security(request: MerchantRequest) -> HttpResponse:
    if request.method != "POST":
        return render(request, "dashboard/security.html", _security_context(request))
    if request.POST.get("action") == "totp_disable":
        raise Http404  # its own route, which asks for a recent second factor (config/authorization.py)
    return _security_post(request, request.POST.get("action"))


@merchant_page
@require_POST
def totp_off(request: MerchantRequest) -> HttpResponse:
    """Turning the authenticator app off: a route of its own, so that the authorization table
    can ask the session for a second factor confirmed lately."""
    return _security_post(request, "totp_disable")


def _security_post(request: MerchantRequest, action: str | None) -> HttpResponse:
    client = client_of(request)
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
        elif action in ("totp_setup", "totp_renew"):
            # Setting up keeps a key already set up (its QR code may be scanned already); only
            # the explicit "new key" button replaces it.
            extra["totp_setup"] = totp_setup(user=request.user, renew=action == "totp_renew")
        elif action in ("totp_enable", "totp_disable"):
            code_form = extra["code_form"] = CodeForm(request.POST)
            if code_form.is_valid():
                if action == "totp_enable":
                    try:
                        extra["recovery_codes"] = totp_enable(
                            request, user=request.user, code=code_form.cleaned_data["code"], client=client
                        )
                    except TotpCodeInvalid:
                        code_form.add_error("code", TOTP_TRY_AGAIN)
                        return render(request, "dashboard/security.html", _security_context(request, **extra))
                    extra["code_form"] = CodeForm()
                else:  # the code is the step-up proof
                    totp_disable(request, user=request.user, code=code_form.cleaned_data["code"], client=client)
                    messages.success(request, _("The authenticator app is off."))
                    return redirect("dashboard:security")
        elif action == "passkey_delete":
            passkey_delete(request, user=request.user, passkey_id=request.POST.get("passkey"), client=client)
            messages.success(request, _("Passkey removed."))
            return redirect("dashboard:security")
        elif action == "delete_account":
            delete_form = extra["delete_form"] = DeleteAccountForm(request.POST)
            if delete_form.is_valid():
                account_delete(request, user=request.user, client=client)
                return redirect(settings.LOGIN_URL)
        else:
            raise Http404
    except StepUpRequired:
        return step_up_redirect(request)
    except Problem as problem:
        target = next((f for f in extra.values() if hasattr(f, "add_error")), None)
        if target is not None:
            show_problem(target, problem)
        else:
            messages.error(request, problem.detail)
    return render(request, "dashboard/security.html", _security_context(request, **extra))


@merchant_page
def notifications(request: MerchantRequest) -> HttpResponse:
    bound = request.POST if request.method == "POST" else None  # an unticked box posts nothing
    preference = notification_preference_get(user=request.user)
    form = NotificationsForm(
        bound, initial={"emailEnabled": preference.email_enabled, "attentionDigest": preference.attention_digest}
    )
    if request.method == "POST" and form.is_valid():
        notification_preference_update(
            user=request.user,
            email_enabled=form.cleaned_data["emailEnabled"],
            attention_digest=form.cleaned_data["attentionDigest"],
        )
        messages.success(request, _("Saved."))
        return redirect("dashboard:notifications")
    return render(request, "dashboard/notifications.html", {"form": form})


def step_up_redirect(request: MerchantRequest, next_url: str | None = None) -> HttpResponse:
    """To the "Confirm it's you" page, which returns to `next_url` (this page) once confirmed."""
    messages.info(request, _("Confirm it's you first, then do it again."))
    target = next_url or request.get_full_path()
    return redirect(f"{reverse('dashboard:confirm')}?{urlencode({'next': target})}")


def _confirm_next(request: MerchantRequest) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target.startswith("/dashboard/") and url_has_allowed_host_and_scheme(target, {request.get_host()}):
        return target
    return reverse("dashboard:security")


@merchant_page
def confirm(request: MerchantRequest) -> HttpResponse:
    """Step-up (accounts.stepup): a code from the authenticator app, or a passkey (its script
    calls POST /api/v1/auth/step-up), then back to the action's page. An account with no second
    factor confirms by signing in again."""
    next_url = _confirm_next(request)
    form = CodeForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            totp_step_up(request, user=request.user, code=form.cleaned_data["code"], client=client_of(request))
            return redirect(next_url)
        except Problem as problem:
            show_problem(form, problem)
    context = {
        "form": form,
        "next": next_url,
        "confirmed": step_up_satisfied(request),
        "totp_on": totp_enabled(user=request.user),
        "has_passkeys": request.user.passkeys.exists(),
        "has_factor": has_second_factor(request.user),
        "sign_in_url": f"{settings.LOGIN_URL}?{urlencode({'next': next_url})}",
    }
    return render(request, "dashboard/confirm.html", context)
