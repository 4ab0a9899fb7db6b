"""Django's browser-session middleware (sessions, CSRF, the signed-in user, messages), which
a call that names an API key skips.

A REST call whose Authorization header is `Bearer ...` is authenticated by that key alone:
`accounts.authentication.ApiKeyAuthentication` accepts or refuses it and the session is never
consulted, its views are CSRF-exempt (DRF checks CSRF only for session-authenticated calls)
and the API sends no flash messages. For such a call these middlewares would only make a
session store, read the CSRF cookie, wrap a lazy user and set up message storage: 2% of the
instructions of a draft's creation through the API, 5% of a read's. The sign-in steps under
/api/v1/auth/ are the exception, whatever header comes along: they are how a browser session
comes to exist (and ends), so they always have it. Every other request (pages, the
dashboard, the admin, an API call from a signed-in browser without a key) passes through
them as through Django's own classes.

A skipped call's Django request has no `session`, `_messages`, nor a `user` until DRF's
authentication sets it (DRF copies its user onto the Django request).
"""

from __future__ import annotations

from django.contrib.auth import middleware as auth_middleware
from django.contrib.messages import middleware as messages_middleware
from django.contrib.sessions import middleware as sessions_middleware
from django.http import HttpRequest
from django.middleware import csrf

from accounts.authentication import ApiKeyAuthentication

API_PREFIX = "/api/"
SIGN_IN_PREFIX = "/api/v1/auth/"  # accounts/api/urls.py: register, sign in and out, passkeys, TOTP


def keyed_api_call(request: HttpRequest) -> bool:
    """A REST API call that presents an API key (an `Authorization: Bearer` header), other
    than a sign-in step."""
    path = request.path_info
    if not path.startswith(API_PREFIX) or path.startswith(SIGN_IN_PREFIX):
        return False
    scheme = request.META.get("HTTP_AUTHORIZATION", "").partition(" ")[0]
    return scheme.lower() == ApiKeyAuthentication.keyword.lower()  # the key alone decides then


class _SkippedByKeyedApiCalls:
    def __call__(self, request: HttpRequest):
        if keyed_api_call(request):
            return self.get_response(request)  # an awaitable when the chain is async: returned as it is
        return super().__call__(request)


class SessionMiddleware(_SkippedByKeyedApiCalls, sessions_middleware.SessionMiddleware):
    pass


class CsrfViewMiddleware(_SkippedByKeyedApiCalls, csrf.CsrfViewMiddleware):
    """Its `process_view` still runs for a keyed call (Django calls it apart from `__call__`):
    API views are CSRF-exempt, so it returns at once."""


class AuthenticationMiddleware(_SkippedByKeyedApiCalls, auth_middleware.AuthenticationMiddleware):
    pass


class MessageMiddleware(_SkippedByKeyedApiCalls, messages_middleware.MessageMiddleware):
    pass
