"""The domain error: what went wrong, in words an API client, a form or an agent can act on.

Domain code raises ``Problem`` (or a subclass) with a stable ``code``. It knows nothing of
HTTP frameworks: each surface renders it — ``core.api.problems`` as RFC 9457
problem+json, pages as field errors next to form fields, the MCP server as a tool error.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

# RFC 9457 members: an extension may never overwrite them (a 409 must not say "status": "Cancelled").
RESERVED_MEMBERS = frozenset({"type", "title", "status", "detail", "instance", "code", "errors", "errorsOmitted"})


# Lazy: rendered in the request's language (the payer's on the checkout and refund claim API,
# English on every merchant surface).
TITLES = {
    400: _("Invalid request"),
    401: _("Authentication required"),
    402: _("Payment required"),
    403: _("Forbidden"),
    404: _("Not found"),
    405: _("Method not allowed"),
    406: _("Not acceptable"),
    409: _("Conflict"),
    411: _("Length required"),
    413: _("Request body too large"),
    415: _("Unsupported media type"),
    422: _("Unprocessable request"),
    429: _("Too many requests"),
    500: _("Internal server error"),
    503: _("Service unavailable"),
}


# --- Wording kept to be worded again later -----------------------------------------------
#
# A message in the language in force that remembers how it was worded, so what keeps it (a
# recurring run's refusal, recorded by a worker in English) can word it again later in its
# reader's language.
#
#     raise Problem(worded(gettext_noop("The amount is more than %(amount)s."), amount="21,000,000 BTC"))
#
# `gettext_noop` (by that name: makemessages looks for it) marks the message for the catalogs;
# `worded` translates it now (the request's language: the account's on its pages, English on the
# API and MCP) and keeps the message id and its values. `wording_record` turns it into JSON,
# `reworded` back into text in the language in force. A value may itself be worded (an address
# error inside "on Ethereum").


class Worded(str):
    """The text in the language in force, with the message id and values it was made of."""

    msgid: str
    params: dict[str, Any]


def worded(msgid: str, **params: Any) -> Worded:
    text = gettext(msgid) % params if params else gettext(msgid)
    made = Worded(text)
    made.msgid, made.params = msgid, params
    return made


def wording_record(text: object) -> dict[str, Any] | None:
    """JSON that `reworded` turns back into the text (in the language then in force), or None
    when the text was not worded (written in English only)."""
    if not isinstance(text, Worded):
        return None
    params = {key: wording_record(value) or value for key, value in text.params.items()}
    return {
        "msgid": text.msgid,
        "params": {key: value if isinstance(value, dict | int) else str(value) for key, value in params.items()},
    }


def reworded(record: Any) -> str | None:
    """The text a `wording_record` keeps, in the language in force; None for anything else."""
    if not isinstance(record, dict) or not isinstance(record.get("msgid"), str):
        return None
    params = {
        key: (reworded(value) or "") if isinstance(value, dict) else value
        for key, value in (record.get("params") or {}).items()
    }
    try:
        return gettext(record["msgid"]) % params if params else gettext(record["msgid"])
    except (KeyError, TypeError, ValueError):  # a message changed since it was kept
        return None


class Problem(Exception):
    """An error with a stable machine-readable code.

    ``errors`` lists field errors as {field, code, message}; ``extra`` adds extension
    members to the problem document (e.g. ``draftId``).
    """

    status_code = 400
    default_code = "invalid_request"
    default_detail: str | Promise = "The request is invalid."  # a lazy translation is rendered when raised

    def __init__(
        self,
        detail: str | None = None,
        *,
        code: str | None = None,
        status_code: int | None = None,
        field: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        if status_code is not None:
            self.status_code = status_code
        self.code = code or self.default_code
        self.detail = str(detail or self.default_detail)
        # How the detail was worded, when it was (core.problems): kept to be worded again later.
        self.wording = wording_record(detail)
        super().__init__(self.detail)
        if errors is None and field is not None:
            errors = [{"field": field, "code": self.code, "message": self.detail}]
        self.errors = errors or []
        clash = RESERVED_MEMBERS.intersection(extra or {})
        if clash:
            raise ValueError(f"Problem extension members may not be named {', '.join(sorted(clash))}")
        self.extra = extra or {}

    @property
    def fields(self) -> dict[str, str]:
        """Field name -> first message, for a form that shows errors next to its fields."""
        found: dict[str, str] = {}
        for error in self.errors:
            if error.get("field"):
                found.setdefault(error["field"], error["message"])
        return found

    def __str__(self) -> str:
        return self.detail

    def document(self) -> dict[str, Any]:
        """The RFC 9457 problem document (what REST answers and an idempotent replay stores)."""
        return problem_document(self.status_code, self.code, self.detail, errors=self.errors, extra=self.extra)


class NotFound(Problem):
    status_code = 404
    default_code = "not_found"
    default_detail = "No such resource."


class PermissionDenied(Problem):
    status_code = 403
    default_code = "permission_denied"
    default_detail = "You may not do this."


class PaymentRequired(Problem):
    status_code = 402
    default_code = "payment_required"
    default_detail = "Settle what is owed first."


class Conflict(Problem):
    status_code = 409
    default_code = "conflict"
    default_detail = "The request conflicts with the resource's current state."


class Unprocessable(Problem):
    status_code = 422
    default_code = "unprocessable"
    default_detail = "The request cannot be processed."


class PayloadTooLarge(Problem):
    status_code = 413
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


class TooManyRequests(Problem):
    status_code = 429
    default_code = "rate_limited"
    default_detail = "Too many requests; try again later."

    def __init__(self, detail: str | None = None, *, retry_after: int | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.retry_after = retry_after


class ServiceUnavailable(Problem):
    status_code = 503
    default_code = "service_unavailable"
    default_detail: str | Promise = "A service this request depends on is unavailable."


# An error document stays small whatever the request held: messages may quote the input (an
# unknown choice, an unknown field's name), and a body may hold thousands of bad fields.
# Escaped JSON spends up to 12 bytes on one character, so the limits are in bytes as well.
MAX_FIELD_ERRORS = 20
MAX_ERRORS_BYTES = 4000  # past this, field errors are dropped (counted in errorsOmitted)
MAX_DETAIL_CHARS, MAX_DETAIL_BYTES = 2000, 2500
MAX_MESSAGE_CHARS = 200
MAX_FIELD_CHARS = 100


def clip(text: str, limit: int, *, json_bytes: int | None = None) -> str:
    """text cut to at most limit characters (and json_bytes bytes as escaped JSON), marked with an
    ellipsis where it was cut."""
    if len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    while json_bytes is not None and len(text) > 1 and len(json.dumps(text)) > json_bytes:
        text = text[: len(text) // 2] + "\u2026"
    return text


def bounded_field_error(error: dict[str, Any]) -> dict[str, Any]:
    field = error.get("field")
    return {
        **error,
        "field": clip(str(field), MAX_FIELD_CHARS) if field is not None else None,
        "code": clip(str(error.get("code")), MAX_FIELD_CHARS),
        "message": clip(str(error.get("message")), MAX_MESSAGE_CHARS),
    }


def _bounded_errors(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    kept, size = [], 0
    for error in errors[:MAX_FIELD_ERRORS]:
        error = bounded_field_error(error)
        size += len(json.dumps(error))
        if size > MAX_ERRORS_BYTES:
            break
        kept.append(error)
    return kept


def problem_document(
    status_code: int,
    code: str,
    detail: str,
    *,
    errors: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The RFC 9457 document, bounded: at most MAX_FIELD_ERRORS field errors (`errorsOmitted`
    counts the rest) and every text clipped."""
    errors = errors or []
    kept = _bounded_errors(errors)
    body: dict[str, Any] = {
        "type": f"{settings.BASE_URL}/problems/{code}",
        "title": str(TITLES.get(status_code) or _("Error")),
        "status": status_code,
        "detail": clip(detail, MAX_DETAIL_CHARS, json_bytes=MAX_DETAIL_BYTES),
        "code": code,
        "errors": kept,
    }
    if len(errors) > len(kept):
        body["errorsOmitted"] = len(errors) - len(kept)
    if extra:
        body.update(extra)
    return body
