"""Headers every dashboard page carries: a strict Content-Security-Policy (our own scripts and
styles only, nothing inline, nothing from other origins), no framing, no referrer leaks."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone

from accounts.models import User
from accounts.modes import mode_set
from core.problems import NotFound, TooManyRequests
from core.ratelimits import cost_take
from dashboard.preferences import Display, display_of

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


class MerchantRequest(HttpRequest):
    """A request to a merchant's page (`merchant_page`): signed in (the authorization table sends
    anonymous visitors to sign-in first), with the account's display preferences."""

    user: User
    display: Display
    person: User  # who signed in; `user` is the organization worked in (accounts.teams)
    role: str  # the person's role there (a member's: the middleware refuses anyone else)


# The dashboard's "Test mode" switch: while on, every page shows and makes test objects only.
TEST_MODE_SESSION_KEY = "dashboard_test_mode"


def test_mode_on(request: HttpRequest) -> bool:
    return bool(request.session.get(TEST_MODE_SESSION_KEY, False))


def merchant_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A signed-in merchant's page, strict headers always. Who may open it is the authorization
    table's (config/authorization.py: a session; anonymous visitors are sent to sign-in before
    the view runs, by accounts.middleware.AuthorizationMiddleware)."""

    @wraps(view)
    def wrapped(request: MerchantRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        mode_set(request.user, livemode=not test_mode_on(request))  # what the pages show (accounts.modes)
        request.display = display_of(request.user)
        # Times on the page are shown in the account's zone (and labelled with it).
        timezone.activate(request.display.zone)
        try:
            return page_headers(view(request, *args, **kwargs))
        except NotFound as missing:  # a selector's "not yours or not there" is a plain 404 page
            raise Http404(missing.detail) from None
        finally:
            timezone.deactivate()

    return wrapped


def costly_refusal(request: HttpRequest, cost: str) -> HttpResponse | None:
    """Count a costly page request (a PDF, an export) against its account's budget of that
    class, shared with the account's API keys (core.ratelimits): a 429 with Retry-After once
    the budget is spent, else None."""
    try:
        cost_take(cost=cost, account_id=request.user.pk)
    except TooManyRequests as refused:
        response = HttpResponse(refused.detail, status=429, content_type="text/plain; charset=utf-8")
        response["Retry-After"] = str(refused.retry_after)
        return response
    return None
