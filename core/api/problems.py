"""RFC 9457 problem details for every error under /api/.

Shape: {type, title, status, detail, code, errors: [{field, code, message}]}.
Domain code raises ``core.problems.Problem`` (or a subclass) with a stable ``code``;
it, DRF's own exceptions and anything unexpected are translated here, so no HTML page
or stack trace ever reaches an API client.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from rest_framework import exceptions

from core.api.bodies import is_empty_body, takes_no_body
from core.api.throttling import rate_limit_headers
from core.outages import outage_problem, retry_after_seconds
from core.problems import (
    TITLES,
    PayloadTooLarge,
    Problem,
    TooManyRequests,
    bounded_field_error,
    clip,
    problem_document,
)

logger = logging.getLogger(__name__)

PROBLEM_CONTENT_TYPE = "application/problem+json"
API_PREFIXES = ("/api/",)


def problem_body(exc: Problem | exceptions.APIException) -> dict[str, Any]:
    """The problem document for a domain Problem or an API exception (validation errors included)."""
    if isinstance(exc, exceptions.ValidationError):
        return _validation_document(exc)
    if isinstance(exc, Problem):
        return problem_document(exc.status_code, exc.code, exc.detail, errors=exc.errors, extra=exc.extra)
    return problem_document(exc.status_code, exc.default_code, str(exc.detail))


def problem_from_validation(exc: exceptions.ValidationError) -> Problem:
    """A serializer's ValidationError as the domain Problem (for code shared with other surfaces)."""
    body = _validation_document(exc)
    return Problem(body["detail"], code=body["code"], errors=body["errors"])


def validated(serializer_class: type, body: Any) -> dict[str, Any]:
    """A request body checked by its serializer: the validated data, or the domain Problem (a
    400 naming each field) that an idempotency record can keep like any other refusal."""
    serializer = serializer_class(data=body)
    try:
        serializer.is_valid(raise_exception=True)
    except exceptions.ValidationError as exc:
        raise problem_from_validation(exc) from None
    data: dict[str, Any] = serializer.validated_data
    return data


def problem_response(
    status_code: int,
    code: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JsonResponse:
    body = problem_document(status_code, code, detail, errors=errors, extra=extra)
    response = JsonResponse(body, status=status_code, content_type=PROBLEM_CONTENT_TYPE)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def flatten_validation_errors(detail: Any, prefix: str = "") -> list[dict[str, Any]]:
    """Turn DRF's nested ValidationError detail into [{field, code, message}]."""
    found: list[dict[str, Any]] = []
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key in ("non_field_errors", "__all__"):
                found.extend(flatten_validation_errors(value, prefix))
            elif isinstance(key, int):  # list items (ListSerializer, ListField) are keyed by index
                found.extend(flatten_validation_errors(value, f"{prefix}[{key}]"))
            else:
                found.extend(flatten_validation_errors(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(detail, list):
        for index, value in enumerate(detail):
            if isinstance(value, (dict, list)):
                found.extend(flatten_validation_errors(value, f"{prefix}[{index}]"))
            else:
                found.extend(flatten_validation_errors(value, prefix))
    else:
        found.append(
            {
                "field": prefix or None,
                "code": getattr(detail, "code", None) or "invalid",
                "message": str(detail),
            }
        )
    return found


def _validation_problem(exc: exceptions.ValidationError) -> JsonResponse:
    return JsonResponse(_validation_document(exc), status=400, content_type=PROBLEM_CONTENT_TYPE)


def _validation_document(exc: exceptions.ValidationError) -> dict[str, Any]:
    errors = flatten_validation_errors(exc.detail)
    if len(errors) == 1:  # its detail quotes the message: as short as the message in `errors`
        errors = [bounded_field_error(errors[0])]
    codes = {error["code"] for error in errors}
    code = codes.pop() if len(codes) == 1 else "validation_error"
    if len(errors) == 1:
        error = errors[0]
        detail = f"{error['field']}: {error['message']}" if error["field"] else error["message"]
    else:
        fields = sorted({e["field"] for e in errors if e["field"]})
        named = ", ".join(clip(field, 40) for field in fields[:10])
        if len(fields) > 10:
            named = _("%(fields)s and %(count)s more") % {"fields": named, "count": len(fields) - 10}
        if named:
            detail = _("%(count)s problems in the request (fields: %(fields)s).") % {
                "count": len(errors),
                "fields": named,
            }
        else:
            detail = _("%(count)s problems in the request.") % {"count": len(errors)}
    return problem_document(400, code, detail, errors=errors)


_DRF_CODES = {
    exceptions.ParseError: "malformed_json",
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "invalid_credentials",
    exceptions.PermissionDenied: "permission_denied",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "rate_limited",
}


def problem_exception_handler(exc: Exception, context: dict[str, Any]) -> HttpResponse:
    """DRF EXCEPTION_HANDLER: every exception becomes a problem+json response."""
    from rest_framework.views import set_rollback  # rest_framework.views imports this module's users

    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    elif isinstance(exc, RequestDataTooBig):
        exc = PayloadTooLarge()
    exc = outage_problem(exc) or exc  # the database, cache or broker not answering: 503

    if isinstance(exc, Problem):
        set_rollback()
        headers: dict[str, str] = {}
        if isinstance(exc, TooManyRequests) and exc.retry_after is not None:
            headers["Retry-After"] = str(max(1, exc.retry_after))
        elif (retry_after := getattr(exc, "retry_after", None)) is not None:  # a 503 that knows when to come back
            headers["Retry-After"] = str(max(1, retry_after))
        elif exc.status_code == 503:
            headers["Retry-After"] = retry_after_seconds()
        return problem_response(
            exc.status_code, exc.code, exc.detail, errors=exc.errors, extra=exc.extra, headers=headers
        )

    if not isinstance(exc, exceptions.APIException):
        logger.exception("Unhandled error in API view", exc_info=exc)
        set_rollback()
        return problem_response(500, "internal_error", "An unexpected error occurred. It has been logged.")

    set_rollback()
    if isinstance(exc, exceptions.ValidationError):
        return _validation_problem(exc)

    headers = {}
    request = context.get("request")
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)) and request is not None:
        view = context.get("view")
        auth_header = view.get_authenticate_header(request) if view is not None else None
        if auth_header:
            headers["WWW-Authenticate"] = auth_header
    errors: list[dict[str, Any]] = []
    extra = getattr(exc, "extra", None)
    if isinstance(exc, exceptions.Throttled):
        wait = getattr(exc, "wait", None)  # set by Throttled, missing from its stubs
        if wait is not None:
            headers["Retry-After"] = str(max(1, int(wait + 0.999)))
        state = getattr(request, "rate_limit_state", None)
        if state is not None and not state.allowed:
            extra = {"limit": state.policy}  # the budget spent: "read" or "write"

    codes = exc.get_codes()
    code = _DRF_CODES.get(type(exc)) or (codes if isinstance(codes, str) else None) or str(exc.default_code)
    return problem_response(exc.status_code, code, str(exc.detail), errors=errors, extra=extra, headers=headers)


def _is_api_path(path: str) -> bool:
    return path.startswith(API_PREFIXES)


class ApiProblemMiddleware:
    """Outermost guard for /api/: body size limit, and no HTML error ever leaves.

    DRF views already answer with problem+json. This catches what happens outside
    them: unknown URLs (Django's 404), CSRF failures, oversized bodies and
    crashes in other middleware. Elsewhere, an error with no body (a 405) becomes a
    problem document; Django's own error pages are core/errors.py's.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "HTTP_TRANSFER_ENCODING" in request.META and not request.META.get("CONTENT_LENGTH"):
            # Django reads a body without Content-Length as empty; refuse rather than act on nothing.
            detail = "Send the request body with a Content-Length header (chunked bodies are not read)."
            return problem_response(411, "length_required", detail)
        if not _is_api_path(request.path):
            response = self.get_response(request)
            if response.status_code == 500 and (outage := getattr(request, "outage", None)) is not None:
                response = HttpResponse(outage.detail, status=503, content_type="text/plain; charset=utf-8")
                response["Retry-After"] = retry_after_seconds()
            elif response.status_code >= 400 and not response.streaming and not response.content:
                response = _replace_with_problem(response)  # an empty error (a 405) says what it is
            return response
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return problem_response(400, "invalid_content_length", "Content-Length is not a number.")
        repeated = sorted({name for name, values in request.GET.lists() if len(values) > 1})
        if repeated:
            # One value per parameter: a second one is a client bug, never silently dropped.
            return problem_response(
                400,
                "repeated_parameter",
                f"Query parameters given more than once: {', '.join(repeated)}.",
                errors=[
                    {"field": name, "code": "repeated_parameter", "message": "Give this parameter once."}
                    for name in repeated
                ],
            )
        if length > settings.API_MAX_BODY_BYTES:
            return problem_response(
                413, "payload_too_large", f"The request body exceeds {settings.API_MAX_BODY_BYTES} bytes."
            )
        if length and takes_no_body(request.method or "", request.path) and not is_empty_body(request.body):
            return problem_response(
                400, "body_not_allowed", f"{request.method} {request.path} takes no request body; send none."
            )
        response = self.get_response(request)
        outage = getattr(request, "outage", None)
        if response.status_code == 500 and outage is not None:  # raised in a middleware, not a view
            response = _outage_response(outage)
        if response.status_code >= 400 and not _is_json(response):
            response = _replace_with_problem(response)
        for name, value in rate_limit_headers(request).items():
            response[name] = value
        return response

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not _is_api_path(request.path):
            return None
        if isinstance(exc, Http404):
            return problem_response(404, "not_found", "No resource at this address.")
        outage = outage_problem(exc)
        if outage is not None:
            return _outage_response(outage)
        logger.exception("Unhandled error under /api/", exc_info=exc)
        return problem_response(500, "internal_error", "An unexpected error occurred. It has been logged.")


def _outage_response(outage: Problem) -> HttpResponse:
    return problem_response(503, outage.code, outage.detail, headers={"Retry-After": retry_after_seconds()})


def _is_json(response: HttpResponse) -> bool:
    content_type = response.get("Content-Type", "")
    return content_type.startswith(("application/json", PROBLEM_CONTENT_TYPE))


_STATUS_CODES = {
    403: ("forbidden", "The request was refused (for a session call, check the CSRF token)."),
    404: ("not_found", "No resource at this address."),
    405: ("method_not_allowed", "This method is not allowed here."),
    413: ("payload_too_large", "The request body is too large."),
}


def _replace_with_problem(response: HttpResponse) -> HttpResponse:
    code, detail = _STATUS_CODES.get(response.status_code, ("internal_error", "An unexpected error occurred."))
    if response.status_code >= 500:
        code, detail = "internal_error", "An unexpected error occurred. It has been logged."
    elif response.status_code not in _STATUS_CODES:
        code, detail = "error", str(TITLES.get(response.status_code) or _("Error"))
    headers = {
        name: response[name] for name in ("Allow", "Retry-After", "WWW-Authenticate") if response.has_header(name)
    }
    return problem_response(response.status_code, code, detail, headers=headers)
