"""The admin site behind the account's own sign-in.

Django's admin would check a password itself, with none of the sign-in's limits, second
factor, notices or log. This site never asks for a password: its login sends the visitor to
the account's sign-in page (password, then the second factor, under the same attempt limits,
lockout emails and log as the API) and back. Admin pages need a session that signed in with
the authenticator app or a passkey; staff without one are told to set one up."""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.cache import never_cache

from accounts import sessions
from accounts.models import User
from accounts.pages import strict_headers
from accounts.totp import totp_enabled

logger = logging.getLogger("accounts.security")


class AccountAdminSite(admin.AdminSite):
    def has_permission(self, request: HttpRequest) -> bool:
        return super().has_permission(request) and sessions.two_factor_session(request)

    @method_decorator(never_cache)
    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:
        index = reverse("admin:index", current_app=self.name)
        target = request.GET.get(REDIRECT_FIELD_NAME) or index
        if not url_has_allowed_host_and_scheme(target, {request.get_host()}, require_https=request.is_secure()):
            target = index
        if not request.user.is_authenticated:
            return redirect(f"{settings.LOGIN_URL}?{urlencode({REDIRECT_FIELD_NAME: target})}")
        if self.has_permission(request):
            return redirect(target)
        return _refused(request, target=target)

    def password_change(  # type: ignore[override]  # any response does; the stubs say TemplateResponse
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        # The account's own change: the current password under the sign-in limits, a notice email.
        return redirect("dashboard:security")


@strict_headers
def _refused(request: HttpRequest, *, target: str) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)  # signed in: an anonymous visitor is sent to sign-in before this
    if user.is_staff:
        logger.info(
            "Admin refused to a session without a second factor: account=%s ip=%s",
            user.public_id,
            sessions.client_of(request).ip,
        )
    context = {
        "staff": user.is_staff,
        "has_factor": totp_enabled(user=user) or user.passkeys.exists(),
        "next": target,
    }
    return render(request, "accounts/admin_refused.html", context, status=403)
