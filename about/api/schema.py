"""OpenAPI generation tweaks: required scopes, the problem responses of every operation,
Location on 201, paged envelopes, strict object schemas."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema

from accounts.authorization import Kind, rule_of_view
from core.api.throttling import cost_class_of

PAGE_ENVELOPE = {"items", "page", "pageSize", "total", "next"}

PROBLEM_REF = {"$ref": "#/components/schemas/Problem"}
PROBLEM_RESPONSES = {
    400: "Invalid request: malformed JSON, a bad field (named in `errors`) or a bad parameter",
    401: "No credentials, or an unknown, revoked or expired API key",
    402: "Accrued fees are outstanding: settle them first (`fees_outstanding`)",
    403: "The API key lacks the scope, the endpoint needs a session or a recent second factor (`step_up_required`), "
    "a session call lacks its CSRF token, or the receiving-address lock refuses the receiver (`receiver_not_allowed`)",
    404: "No such resource, or it belongs to another account",
    409: "The resource's state does not allow this now",
    413: "The request body is too large",
    415: "The request body is not JSON",
    422: "The Idempotency-Key was used with a different body",
    429: "Rate limited; retry after `Retry-After` seconds",
    503: "A service this request depends on (e.g. the rate feed) is unavailable",
}


def _declared_for(view, method: str, attribute: str):
    """A per-action (viewsets) or per-method (plain views) declaration (`problem_statuses`, `cost_classes`)."""
    declared = getattr(view, attribute, None) or {}
    action = getattr(view, "action", None) or (getattr(view, "action_map", None) or {}).get(method.lower())
    return declared.get(action) or declared.get(method.upper()) or ()


def problem_statuses(view, *, method: str, path: str, has_body: bool) -> set[int]:
    """The error statuses an operation can answer. The generic ones follow from what every
    view shares (parsing, authentication, scopes, throttling, the body limit); views name
    the domain ones (402, 409, 422, 503) in `problem_statuses`, by action or method."""
    statuses = {400, 429}
    if method.upper() in ("POST", "PUT", "PATCH"):
        statuses.add(413)
        if has_body:
            statuses.add(415)
    rule = rule_of_view(view, method)
    if rule is None or not rule.anonymous or rule.kind is Kind.PERSON:
        statuses |= {401, 403}  # a person's step refuses an API key (403 session_required)
    if "{" in path:
        statuses.add(404)
    statuses |= set(_declared_for(view, method, "problem_statuses"))
    return statuses


class ServiceAutoSchema(AutoSchema):
    def _is_list_view(self, serializer=None) -> bool:
        """A `list` action answering the paged envelope {items, page, pageSize, total, next} is one object."""
        if serializer is None:
            serializer = self.get_response_serializers()
        if isinstance(serializer, dict) and serializer:
            serializer = serializer[min(serializer, key=str)]
        fields = getattr(serializer, "_declared_fields", None)
        if fields is not None and PAGE_ENVELOPE <= set(fields):
            return False
        return super()._is_list_view(serializer)

    def get_operation_id(self) -> str:
        operation_id = super().get_operation_id()
        if getattr(self.view, "action", None) == "list" and operation_id.endswith("_retrieve"):
            return operation_id.removesuffix("_retrieve") + "_list"  # keep "list" for paged lists
        return operation_id

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        rule = rule_of_view(self.view, method)  # config/authorization.py
        if rule is not None and rule.anonymous and {} not in operation.setdefault("security", []):
            operation["security"].append({})  # anonymous callers are welcome (sign-in steps)
        responses = operation.setdefault("responses", {})
        problem_content = {"application/problem+json": {"schema": PROBLEM_REF}}
        statuses = problem_statuses(self.view, method=method, path=path, has_body="requestBody" in operation)
        if any(parameter.get("name") == "Idempotency-Key" for parameter in operation.get("parameters", [])):
            statuses |= {409, 422}  # a key still in flight; a key used with another body (docs/idempotency.md)
        for status in sorted(statuses):
            response = responses.setdefault(str(status), {"description": PROBLEM_RESPONSES[status]})
            response.setdefault("content", problem_content)  # a view's own description keeps its words
        cost = cost_class_of(self.view, method)
        if cost:
            operation["x-rate-limit-class"] = cost
            responses["429"]["description"] = (
                f"Rate limited: the read/write budget, or the `{cost}` class's per-key or per-account budget "
                f"(the problem's `limit` and `per` say which); retry after `Retry-After` seconds"
            )
        scope = rule.scope if rule is not None and rule.takes_keys else None
        if scope:
            operation["x-required-scopes"] = [scope]
            note = f"Required API key scope: `{scope}`."
        elif rule is not None and not rule.takes_keys and not rule.anonymous:
            operation["x-session-only"] = True
            note = "Needs a logged-in session; API keys are refused."
            if rule.kind is Kind.STEP_UP:
                operation["x-step-up"] = True
                note += " The session must have confirmed a second factor lately (403 step_up_required)."
        elif rule is not None and rule.anonymous:
            note = "Open to anyone: no credentials needed."
        elif rule is not None and rule.takes_keys:
            note = "Any API key, whatever its scopes, or a logged-in session."
        else:
            note = ""
        if rule is not None and rule.kind is Kind.PERSON:
            note = "For a visitor or a signed-in session; API keys are refused (403 session_required)."
            if rule.step_up:
                note += " A signed-in session must have confirmed a second factor in the last few minutes."
        if cost:
            note = f"{note} Costly: also limited per API key and per account as the `{cost}` class.".strip()
        if note:
            description = operation.get("description", "")
            operation["description"] = f"{description}\n\n{note}".strip()
        return operation


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.authentication.ApiKeyAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "pdk_ API key",
            "description": "A scoped API key: `Authorization: Bearer pdk_...`.",
        }


def reject_unknown_properties(result, generator, request, public):
    """Every object schema rejects unknown properties (additionalProperties false)."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        if schema.get("type") == "object" and "properties" in schema and "additionalProperties" not in schema:
            schema["additionalProperties"] = False
    return result


def document_location_on_created(result, generator, request, public):
    """Every 201 names the new resource in a Location header (decisions.md, wire conventions)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            created = operation.get("responses", {}).get("201") if isinstance(operation, dict) else None
            if created is not None:
                created.setdefault("headers", {})["Location"] = {
                    "description": "Absolute URL of the created resource",
                    "required": True,
                    "schema": {"type": "string", "format": "uri"},
                }
    return result


PROBLEM_SCHEMA = {
    "type": "object",
    "description": (
        "RFC 9457 problem details, with a stable machine-readable `code` and field errors. "
        "Some problems add extension members (e.g. `requiredScope`, `draftId`, `validValues`; "
        "`limit` and `per` on a 429)."
    ),
    "properties": {
        "type": {"type": "string", "format": "uri", "description": "Identifies the problem kind"},
        "title": {"type": "string"},
        "status": {"type": "integer", "description": "The HTTP status code"},
        "detail": {"type": "string", "description": "What went wrong, for humans"},
        "code": {"type": "string", "description": "Stable machine-readable code, e.g. `invalid_address`"},
        "errors": {
            "type": "array",
            "items": {"$ref": "#/components/schemas/ProblemFieldError"},
            "description": (
                "At most 20 field errors (fewer when their text is long); "
                "a message quotes at most 200 characters of the input"
            ),
        },
        "errorsOmitted": {"type": "integer", "description": "How many field errors were left out"},
    },
    "required": ["type", "title", "status", "detail", "code", "errors"],
    "additionalProperties": True,
}
PROBLEM_FIELD_ERROR_SCHEMA = {
    "type": "object",
    "properties": {
        "field": {
            "type": "string",
            "nullable": True,
            "description": "Dotted path of the field, `[i]` for list items (`items[3].draft.amountSats`)",
        },
        "code": {"type": "string"},
        "message": {"type": "string"},
    },
    "required": ["field", "code", "message"],
    "additionalProperties": False,
}


def add_servers(result, generator, request, public):
    """`servers`: the public address of this deployment (BASE_URL); the paths carry /api/v1."""
    result["servers"] = [{"url": settings.BASE_URL, "description": "This deployment"}]
    return result


def add_problem_schema(result, generator, request, public):
    """The Problem component every error response refers to."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Problem"] = PROBLEM_SCHEMA
    schemas["ProblemFieldError"] = PROBLEM_FIELD_ERROR_SCHEMA
    return result


def define_tags(result, generator, request, public):
    """`tags`: every tag an operation names, declared once at the top (in order of first use), so
    that a reader or a generator meets no undeclared tag."""
    used: dict[str, None] = {}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                used.update(dict.fromkeys(operation.get("tags", ())))
    result["tags"] = [{"name": name} for name in sorted(used)]
    return result


_NULL_ENUM = "#/components/schemas/NullEnum"


def drop_redundant_nullable(result, generator, request, public):
    """A nullable choice is `oneOf: [<its enum>, NullEnum]`: NullEnum already admits null, and a
    `nullable` beside no `type` is meaningless in OpenAPI 3.0 (validators of examples refuse it)."""

    def walk(node):
        if isinstance(node, dict):
            options = node.get("oneOf")
            if node.get("nullable") and "type" not in node and options and {"$ref": _NULL_ENUM} in options:
                del node["nullable"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(result)
    return result
