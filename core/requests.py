"""X-Request-Id on every response, and in every log line written while the request runs.

A client's own id is kept when it is well-formed (1-128 characters from a safe set, so it
cannot inject into logs or headers); otherwise a fresh UUID is generated. gunicorn's access
log prints it too (`%({x-request-id}o)s` in scripts/run.sh and docker-compose.yml).
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.functional import empty

REQUEST_ID_HEADER = "X-Request-Id"
_WELL_FORMED = re.compile(r"[A-Za-z0-9._:+/=-]{1,128}")
_current: ContextVar[str] = ContextVar("request_id", default="-")
_request: ContextVar[HttpRequest | None] = ContextVar("request", default=None)
# The Celery task running in this process (config/celery.py sets it around each task).
current_task: ContextVar[tuple[str, str] | None] = ContextVar("task", default=None)


def current_request_id() -> str:
    return _current.get()


def request_id_for(request: HttpRequest) -> str:
    offered = request.META.get("HTTP_X_REQUEST_ID", "")
    return offered if _WELL_FORMED.fullmatch(offered) else str(uuid.uuid4())


def request_id_begin(offered: str) -> str:
    """Outside Django's middleware (the MCP process, an ASGI request in a task of its own): this
    context's request id for its log lines, the client's when well-formed, else a fresh one."""
    request_id = offered if _WELL_FORMED.fullmatch(offered) else str(uuid.uuid4())
    _current.set(request_id)
    return request_id


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request.request_id = request_id_for(request)  # type: ignore[attr-defined]  # ours, on the request
        # Not reset on the way out: Django logs the response ("Bad Request: ...") after the
        # middleware returns, and that line should carry the id too. The next request sets its own.
        _current.set(request_id)
        _request.set(request)
        response = self.get_response(request)
        response[REQUEST_ID_HEADER] = request_id
        return response


def _account_id(request: HttpRequest | None) -> str | None:
    """The signed-in account's id once authentication has run (API key or session), else None.
    Never resolves a lazy user itself: a log line must not query the database."""
    user = request.__dict__.get("user") if request is not None else None
    if user is None:
        return None
    wrapped = getattr(user, "_wrapped", user)  # Django's lazy user, resolved or not
    if wrapped is empty or not getattr(wrapped, "is_authenticated", False):
        return None
    return str(wrapped.pk)


class RequestIdFilter(logging.Filter):
    """Adds `request_id` ("-" outside a request), `account_id` and `task_name` / `task_id` (None
    when not known) to every log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get()
        record.account_id = _account_id(_request.get())
        task = current_task.get()
        record.task_name, record.task_id = task if task else (None, None)
        return True


class JsonFormatter(logging.Formatter):
    """LOG_FORMAT=json: one JSON object per line (time, level, logger, message, request_id,
    account_id, task_name, task_id, and the traceback of an exception)."""

    converter = staticmethod(time.gmtime)  # the time in UTC, as the Z says

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        logging.captureWarnings(True)  # warnings become log records too, so JSON lines

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
            "account_id": getattr(record, "account_id", None),
            "task_name": getattr(record, "task_name", None),
            "task_id": getattr(record, "task_id", None),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


PLAIN_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"


def process_formatter() -> logging.Formatter:
    """LOG_FORMAT's formatter, for servers that configure logging before Django does (uvicorn's
    --log-config deploy/uvicorn-logging.json, gunicorn's logconfig_dict)."""
    return JsonFormatter() if os.environ.get("LOG_FORMAT") == "json" else logging.Formatter(PLAIN_FORMAT)


def server_logging(streams: dict[str, str]) -> dict[str, Any]:
    """A logging.config dict giving each of a server's own loggers (name -> "stdout" or
    "stderr") LOG_FORMAT's lines, with the request id of the request being served."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "core.requests.RequestIdFilter"}},
        "formatters": {"process": {"()": "core.requests.process_formatter"}},
        "handlers": {
            stream: {
                "class": "logging.StreamHandler",
                "formatter": "process",
                "filters": ["request_id"],
                "stream": f"ext://sys.{stream}",
            }
            for stream in ("stdout", "stderr")
        },
        "loggers": {
            name: {"handlers": [stream], "level": "INFO", "propagate": False} for name, stream in streams.items()
        },
        "root": {"level": "INFO", "handlers": ["stderr"]},
    }
