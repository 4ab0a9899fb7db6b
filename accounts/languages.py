"""Which language a response speaks.

- The payer's surfaces (the /pay pages, the checkout API, the refund claim page and its API):
  the language the payer chose on the page (`?lang=xx`, kept in the `lang` cookie, no account
  needed), else the browser's Accept-Language, else English.
- The dashboard and the account pages of a signed-in account: the account's language setting
  (`account_language`) when those pages are translated into it (DASHBOARD_LANGUAGES), else
  English. Signed out (sign-in, sign-up, a forgotten password, an invitation's or a security
  email's link): the visitor's language as on the payer's pages, when those pages are
  translated into it, else English.
- Everything else (the merchant's REST API, MCP, admin, probes): English, whatever the client
  sends, so an API client's error texts never change under it.

A language without a translation for some string shows that string in English (gettext's
fallback); the payer's strings are complete in every language (`make lint` checks it).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers

from accounts.profiles import merchant_profile_get

PAYER_PREFIXES = ("/pay/", "/api/v1/checkout/", "/refund/", "/api/v1/refund-claims/")
ACCOUNT_PREFIXES = ("/dashboard/", "/account/")


def supported(code: str | None) -> str | None:
    """The LANGUAGES code for `code` (any case, `_` or `-`), or None if it is not offered."""
    if not code:
        return None
    wanted = code.strip().lower().replace("_", "-")
    codes = {c for c, _name in settings.LANGUAGES}
    if wanted in codes:
        return wanted
    return None


def account_language(user) -> str | None:
    """The language the account chose for its dashboard and PDFs (its merchant profile;
    English for an account without one), None for a code no longer offered."""
    return supported(merchant_profile_get(user=user).language)


def account_time_zone(user) -> str:
    """The IANA zone the account reads times in (its merchant profile), UTC when it has none."""
    return merchant_profile_get(user=user).time_zone or "UTC"


def payer_language(request: HttpRequest) -> str:
    """The payer's language: `?lang=`, then the cookie, then Accept-Language, then English."""
    chosen = supported(request.GET.get("lang")) if request.method == "GET" else None
    if chosen:
        return chosen
    chosen = supported(request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME))
    if chosen:
        return chosen
    return supported(translation.get_language_from_request(request)) or settings.LANGUAGE_CODE


class LanguageMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        path = request.path_info
        payer = path.startswith(PAYER_PREFIXES)
        if payer:
            language = payer_language(request)
        elif path.startswith(ACCOUNT_PREFIXES):
            user = getattr(request, "user", None)
            if user is not None and user.is_authenticated:
                language = account_language(user) or settings.LANGUAGE_CODE
            else:
                language = payer_language(request)
            if language not in settings.DASHBOARD_LANGUAGES:
                language = settings.LANGUAGE_CODE
        else:
            language = settings.LANGUAGE_CODE
        request.LANGUAGE_CODE = language
        if translation.get_language() == language:  # already the one in force (the default): nothing to switch
            response = self.get_response(request)
        else:
            with translation.override(language):
                response = self.get_response(request)
        if payer:
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
            response.headers.setdefault("Content-Language", language)
            chosen = supported(request.GET.get("lang")) if request.method == "GET" else None
            if chosen and request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME) != chosen:
                response.set_cookie(
                    settings.LANGUAGE_COOKIE_NAME,
                    chosen,
                    max_age=settings.LANGUAGE_COOKIE_AGE,
                    path="/",
                    secure=settings.LANGUAGE_COOKIE_SECURE,
                    httponly=True,
                    samesite=settings.LANGUAGE_COOKIE_SAMESITE,
                )
        return response
