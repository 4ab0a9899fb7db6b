"""Django's own error answers outside /api/: problem+json, unless the client asks for HTML.

A browser (its Accept names text/html) gets our page (templates/404.html, 403.html, 500.html:
the site's stylesheet, a link home, in the reader's language); any other client (curl's `*/*`,
an agent, a monitor) gets the RFC 9457 document the API answers. Under /api/ every error is
problem+json already (core.api.problems).
"""

from __future__ import annotations

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.views import csrf, defaults

from core.api.problems import problem_response


def wants_html(request: HttpRequest) -> bool:
    return "text/html" in request.META.get("HTTP_ACCEPT", "")


# The error pages load our stylesheet and icon only (the account pages' policy).
PAGE_POLICY = "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'"


def _page(response: HttpResponse) -> HttpResponse:
    response.setdefault("Content-Security-Policy", PAGE_POLICY)
    response["X-Frame-Options"] = "DENY"
    return response


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if wants_html(request):
        return _page(defaults.page_not_found(request, exception))
    return problem_response(404, "not_found", "No resource at this address.")


def server_error(request: HttpRequest) -> HttpResponse:
    if wants_html(request):
        return _page(defaults.server_error(request))
    return problem_response(500, "internal_error", "An unexpected error occurred. It has been logged.")


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if wants_html(request):
        return _page(defaults.permission_denied(request, exception))
    return problem_response(403, "permission_denied", "You may not do this.")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return problem_response(413, "payload_too_large", "The request body is too large.")
    if wants_html(request):
        return defaults.bad_request(request, exception)
    return problem_response(400, "bad_request", "The request could not be read.")


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    if wants_html(request):
        return csrf.csrf_failure(request, reason)
    return problem_response(403, "permission_denied", "CSRF check failed: a session's write needs its CSRF token.")
