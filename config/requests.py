"""X-Request-Id on every response, and in every log line written while the request runs.

A client's own id is kept when it is well-formed (1-128 characters from a safe set, so it
cannot inject into logs or headers); otherwise a fresh UUID is generated. gunicorn's access
log prints it too (`%({x-request-id}o)s` in scripts/run.sh and docker-compose.yml).
"""

from __future__ import annotations

import logging
import re
import uuid
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

REQUEST_ID_HEADER = "X-Request-Id"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}")
_current: ContextVar[str] = ContextVar("request_id", default="-")


def current_request_id() -> str:
    return _current.get()


def request_id_for(request: HttpRequest) -> str:
    offered = request.META.get("HTTP_X_REQUEST_ID", "")
    return offered if _WELL_FORMED.fullmatch(offered) else str(uuid.uuid4())


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request.request_id = request_id_for(request)
        # Not reset on the way out: Django logs the response ("Bad Request: ...") after the
        # middleware returns, and that line should carry the id too. The next request sets its own.
        _current.set(request.request_id)
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request.request_id
        return response


class RequestIdFilter(logging.Filter):
    """Adds `request_id` to every log record ("-" outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get()
        return True
