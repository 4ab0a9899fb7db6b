"""A payer's request budget: per client address (the payer has no key), CHECKOUT_RATE_LIMITS.
The REST checkout and refund claim (paylinks.api.views.CheckoutThrottle) and the payer pages
(/pay, /refund: paylinks.views.page_throttled) count on the same counter."""

from __future__ import annotations

from django.conf import settings

from core.api.throttling import SAFE_METHODS, client_address, rate_limit_count


def payer_ident(request) -> str:
    return f"checkout-ip:{client_address(request)}"


def payer_request_take(request) -> tuple[bool, float]:
    """Count one request of the payer's: (allowed, seconds until the window ends). The budget
    is kept on the request, where the middleware adds the RateLimit fields to the response."""
    scope = "read" if request.method in SAFE_METHODS else "write"
    rate = settings.CHECKOUT_RATE_LIMITS.get(scope)
    state, wait = rate_limit_count(scope=scope, ident=payer_ident(request), rate=rate)
    request.rate_limit_state = state
    return state.allowed, wait
