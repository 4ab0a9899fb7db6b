"""Bearer API key authentication, shared by the REST API and the MCP endpoint.

``api_key_authenticate`` is the one check of a presented key (failed guesses limited per
client, constant-time hash compare, revocation, expiry, disabled accounts, last-used);
``ApiKeyAuthentication`` is its DRF adapter and the MCP server's token verifier another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from django.conf import settings
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.models import ApiKey, User
from accounts.modes import by_key_set, mode_set
from accounts.selectors import api_key_find
from accounts.services import api_key_touch
from audit.context import actor_set
from core.api.throttling import ApiRateThrottle
from core.cache import counter_get, get_and_window_count, window_count


def account_of(request: Request) -> User:
    """The account a REST call acts for: the authorization table lets no anonymous caller reach
    an operation that asks, so its user is an account (an API key's, or a session's)."""
    return cast(User, request.user)


class KeyRefused(Exception):
    """A presented API key was not accepted; ``throttled`` when the client is guessing too fast."""

    def __init__(self, detail: str, *, throttled: bool = False) -> None:
        super().__init__(detail)
        self.detail = detail
        self.throttled = throttled


def _failures_key(client_ident: str) -> str:
    return f"auth-failures:{client_ident}"


def auth_failures_exceeded(*, client_ident: str) -> bool:
    """True while this address has failed too many key checks in the last minute."""
    return (counter_get(_failures_key(client_ident)) or 0) >= settings.API_AUTH_FAILURES_PER_MINUTE


def api_key_authenticate(
    *, token: str, client_ident: str, window: Callable[[ApiKey], tuple[str, int] | None] | None = None
) -> tuple[ApiKey, dict[str, int]]:
    """The usable key for a presented token, or KeyRefused. ``client_ident`` is the caller's address.

    ``window`` names the rate-limit counter of the request for a found key: it is counted in
    the same cache round trip that reads the address's failed checks. Returns the key and the
    counts taken ({counter key: count})."""
    failures_key = _failures_key(client_ident)
    api_key = api_key_find(key=token) if token else None
    if api_key is None:
        if auth_failures_exceeded(client_ident=client_ident):
            raise KeyRefused("Too many failed authentication attempts from this address.", throttled=True)
        window_count(failures_key, timeout=60)
        raise KeyRefused("The API key is not valid.")
    # Checked for a right key too: past the limit, a guess is refused whether it is right or not.
    counter = window(api_key) if window is not None else None
    failures, count = get_and_window_count(
        failures_key, counter[0] if counter else None, timeout=counter[1] if counter else 0
    )
    if (failures or 0) >= settings.API_AUTH_FAILURES_PER_MINUTE:
        raise KeyRefused("Too many failed authentication attempts from this address.", throttled=True)
    if api_key.revoked_at is not None:
        raise KeyRefused("The API key has been revoked.")
    if not api_key.is_usable():
        raise KeyRefused("The API key has expired.")
    if not api_key.user.is_active:
        raise KeyRefused("The account is disabled.")
    api_key_touch(api_key=api_key)
    mode_set(api_key.user, livemode=api_key.livemode)  # what it sees and makes (accounts.modes)
    by_key_set(api_key.user)  # who acts: a key, not a person (the receiving-address lock, step-up)
    actor_set(key=api_key, ip=client_ident)  # and for the audit log
    return api_key, ({counter[0]: count} if counter and count is not None else {})  # count: None without a counter


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        # From META as the server gave it (DRF's get_authorization_header first builds
        # request.headers, a dict of every header, for this one).
        header = request.META.get("HTTP_AUTHORIZATION", "")
        if isinstance(header, bytes):
            header = header.decode("latin-1")
        if not header:
            return None
        scheme, _, token = header.partition(" ")
        if scheme.lower() != self.keyword.lower():
            return None
        view = (request.parser_context or {}).get("view")
        try:
            api_key, counted = api_key_authenticate(
                token=token.strip(),
                client_ident=ApiRateThrottle().get_ident(request),
                window=lambda key: ApiRateThrottle.window_of(request, view, ident=f"key:{key.pk}"),
            )
        except KeyRefused as refused:
            if refused.throttled:
                # DRF checks throttles only after authentication, so guessing is limited here.
                raise exceptions.Throttled(wait=60, detail=refused.detail) from None
            raise exceptions.AuthenticationFailed(refused.detail) from None
        request._request.rate_limit_counted = counted  # the throttle takes its count from here
        return api_key.user, api_key

    def authenticate_header(self, request) -> str:
        return f'{self.keyword} realm="api"'
