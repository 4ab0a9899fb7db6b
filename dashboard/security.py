"""Headers every dashboard page carries: a strict Content-Security-Policy (our own scripts and
styles only, nothing inline, nothing from other origins), no framing, no referrer leaks."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse

from config.problems import NotFound

CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ]
)


def page_headers(response: HttpResponse) -> HttpResponse:
    response.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response["X-Frame-Options"] = "DENY"
    response["Referrer-Policy"] = "same-origin"
    response["X-Content-Type-Options"] = "nosniff"
    response.setdefault("Cache-Control", "no-store")
    return response


def merchant_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A signed-in merchant's page: anonymous visitors go to sign-in; strict headers always."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return page_headers(redirect_to_login(request.get_full_path(), settings.LOGIN_URL))
        try:
            return page_headers(view(request, *args, **kwargs))
        except NotFound as missing:  # a selector's "not yours or not there" is a plain 404 page
            raise Http404(missing.detail) from None

    return wrapped
