"""The MCP server at {BASE_URL}/mcp: Streamable HTTP, stateless, JSON responses.

Stateless with JSON responses, so any number of processes can serve it behind one
address. The same Bearer API keys as the REST API, checked by the same function; the
same scopes and the same rate-limit counters. Every tool runs the REST operation's own
edge or service function in a worker thread (Django's ORM is synchronous) and answers
the REST body, or a tool error carrying the problem+json document REST would send.
"""

from __future__ import annotations

import contextvars
import json
import logging
import math
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import mcp_types as types
from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.http import Http404
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.lowlevel.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from pydantic import AnyHttpUrl, ConfigDict, Field
from rest_framework import exceptions
from starlette.applications import Starlette

from accounts.authentication import KeyRefused, api_key_authenticate
from accounts.authorization import Rule, key_refusal, rule_for
from accounts.models import ApiKey
from core.api.parsers import parse_json
from core.api.problems import problem_exception_handler
from core.api.renderers import JsonRenderer
from core.api.throttling import rate_limit_count
from core.problems import Problem
from core.ratelimits import cost_take
from core.replica import calls_of, key_caller
from drafts.presenters import draft_json
from drafts.selectors import draft_get
from fees.calculator import fee_schedule
from mcp_server import schemas
from mcp_server.tools import BY_NAME, Call, ProblemBody, ToolSpec, tool_list
from payments.registry import all_assets

logger = logging.getLogger(__name__)

PATH = "/mcp"
INSTRUCTIONS = (
    "Prepares payment instructions that payers sign and send from their own wallets; the service never "
    "holds keys or funds. Typical flow: create_draft, then get_tx_template (on-chain Bitcoin) or the draft's "
    "paymentUri, the payer pays from their own wallet, then poll get_draft_status until Confirmed. Errors "
    "are tool errors whose JSON is the REST API's problem document (code, detail, errors[].field)."
)

# Per HTTP request: the caller's address (for the failed-key limit) and why a key was refused.
request_state: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("mcp_request_state")


class ApiKeyAccess(AccessToken):
    """The SDK's access token, carrying the API key it stands for."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    api_key: Any = Field(default=None, exclude=True)


class _PolicyThrottled(exceptions.Throttled):
    """A tool call over its key's rate: the policy named in `extra`, as REST's exception handler adds it,
    and REST's code for it (core.api.problems maps only the exact `Throttled` type)."""

    default_code = "rate_limited"

    def __init__(self, *, wait: float | None, policy: str) -> None:
        super().__init__(wait=wait)
        self.extra = {"limit": policy}


def _in_thread(fn: Callable[[], Any]) -> Any:
    """Run Django work as a request would: fresh connections before and after."""
    close_old_connections()
    try:
        return fn()
    finally:
        close_old_connections()


class ApiKeyVerifier:
    """The SDK's token verifier: accounts.authentication.api_key_authenticate, as REST uses it."""

    async def verify_token(self, token: str) -> AccessToken | None:
        state = request_state.get({})
        try:
            api_key, _ = await sync_to_async(_in_thread, thread_sensitive=False)(
                lambda: api_key_authenticate(token=token.strip(), client_ident=state.get("client", ""))
            )
        except KeyRefused as refused:
            state["refused"] = refused
            return None
        return ApiKeyAccess(
            token=api_key.prefix,
            client_id=str(api_key.pk),
            subject=str(api_key.user.pk),
            scopes=list(api_key.scopes),
            expires_at=int(api_key.expires_at.timestamp()) if api_key.expires_at else None,
            api_key=api_key,
        )


def current_api_key() -> ApiKey:
    access = get_access_token()
    if not isinstance(access, ApiKeyAccess):  # the route requires authentication; this cannot happen
        raise MCPError(code=types.INVALID_REQUEST, message="Not authenticated")
    return access.api_key


def problem_of(exc: Exception) -> dict[str, Any]:
    """The problem document REST answers for this exception (the same exception handler renders it)."""
    response = problem_exception_handler(exc, {})
    return json.loads(response.content)


def _guard(
    api_key: ApiKey, *, rule: Rule, write: bool, cost: str | None = None, meta: dict[str, Any] | None = None
) -> None:
    """What REST's permission and throttle classes check, in the same order, on the same counters:
    the authorization table's rule (config/authorization.py), then the rate limits. `meta` gets
    the budget counted (the RateLimit headers REST sends, as a result's _meta.rateLimit)."""
    refusal = key_refusal(rule, api_key)
    if refusal is not None:
        raise refusal
    policy = "write" if write else "read"
    state, wait = rate_limit_count(scope=policy, ident=f"key:{api_key.pk}")
    if meta is not None:
        meta["rateLimit"] = {
            "policy": state.policy,
            "limit": state.quota,
            "remaining": state.remaining,
            "resetSeconds": state.reset_seconds,
        }
    if not state.allowed:
        raise _PolicyThrottled(wait=wait, policy=policy)
    if cost is not None:
        cost_take(cost=cost, account_id=api_key.user_id, api_key_id=api_key.pk)


def _as_json(body: Any) -> Any:
    """Exactly the JSON REST sends (the API's renderer: dates, decimals and UUIDs as DRF writes them)."""
    return json.loads(JsonRenderer().render(body))


def _tool_error(document: dict[str, Any], meta: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(document))],
        structured_content=document,
        is_error=True,
        _meta=meta,
    )


def rest_arguments(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the REST parser reads a body: every JSON number with a fraction or exponent
    a Decimal (the SDK hands them over as floats; json.dumps writes a float's shortest repr, so
    19.99 stays exactly 19.99), integers as integers, NaN and Infinity refused."""
    _refuse_non_finite(arguments, "")
    return parse_json(json.dumps(arguments, allow_nan=True))


def _refuse_non_finite(value: Any, field: str) -> None:
    """A number too large for a float (1e400) reaches us as infinity: refuse it naming its field,
    as REST names the field of a number out of range."""
    if isinstance(value, float) and not math.isfinite(value):
        raise Problem(f"{field or 'value'}: A number out of range.", code="invalid", field=field or None)
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        _refuse_non_finite(item, f"{field}[{key}]" if isinstance(key, int) else f"{field}.{key}" if field else key)


def execute(
    spec: ToolSpec, api_key: ApiKey, arguments: dict[str, Any], *, request_id: str | None = None
) -> types.CallToolResult:
    """Run one tool call (in a worker thread). Every result's _meta carries the request id (the
    X-Request-Id of the HTTP request) and the rate-limit budget the call was counted against."""
    meta: dict[str, Any] = {"requestId": request_id or str(uuid.uuid4())}
    try:
        arguments = rest_arguments(arguments)
        # The budget follows the REST operation's method, so both surfaces spend the same one.
        write = spec.method not in ("GET", "HEAD", "OPTIONS")
        _guard(api_key, rule=spec.rule, write=write, cost=spec.cost, meta=meta)
        for name in schemas.path_parameters(spec.method, spec.path):
            if name not in arguments:
                raise Problem(f"{name}: This field is required.", code="required", field=name)
            _check_id(arguments[name])
        # Its lists read the replica (if any) unless this key wrote what it has not replayed.
        with calls_of(lambda: key_caller(api_key.pk), writes=write):
            body = _as_json(spec.run(Call(user=api_key.user, api_key=api_key, arguments=arguments)))
        if spec.lists:
            body = spec.page(body, _as_json(arguments))
    except ProblemBody as stored:
        return _tool_error(stored.body, meta)
    except Exception as exc:  # every failure becomes the problem document REST would answer
        return _tool_error(problem_of(exc), meta)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(body))],
        structured_content={"result": body} if spec.wraps_result else body,
        _meta=meta,
    )


def _check_id(value: Any) -> None:
    try:
        uuid.UUID(str(value))
    except ValueError:
        raise Http404 from None  # as REST answers a path that is no UUID


async def handle_list_tools(ctx, params) -> types.ListToolsResult:
    """Only the tools the key may call: its scopes allow them, in its mode (test helpers for test keys)."""
    api_key = current_api_key()
    return types.ListToolsResult(tools=listed_tools(api_key))


def listed_tools(api_key: ApiKey) -> list[types.Tool]:
    """The tools the key may call. Each needs no `requiredScope` here (its key has it), nor its
    `title` (a display name for people, which the description says better): tools/list, read into
    every agent session, stays small (llms.txt names the scopes)."""
    return [
        tool.model_copy(update={"meta": None, "title": None})
        for tool in tool_list()
        if BY_NAME[tool.name].listed_for(api_key)
    ]


async def handle_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    spec = BY_NAME.get(params.name)
    if spec is None:
        raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
    api_key = current_api_key()
    arguments = dict(params.arguments or {})
    request_id = request_state.get({}).get("request_id")
    return await sync_to_async(_in_thread, thread_sensitive=False)(
        lambda: execute(spec, api_key, arguments, request_id=request_id)
    )


# --- Resources --------------------------------------------------------------------

MATRIX_URI = "payments://assets"
SCHEDULE_URI = "fees://schedule"
DRAFT_TEMPLATE = "draft://{id}"


def asset_matrix() -> dict[str, Any]:
    """Every currency x network this deployment serves, with base-unit decimals, methods and token address."""
    enabled = set(settings.ENABLED_NETWORKS)
    return {
        "assets": [
            {
                "currency": str(asset.currency),
                "network": str(asset.network),
                "kind": asset.kind,
                "decimals": asset.decimals,
                "methods": [str(method) for method in asset.methods],
                "tokenAddress": asset.token_address,
                "testnet": asset.is_testnet,
            }
            for asset in all_assets()
            if str(asset.network) in enabled
        ]
    }


# Who may read each: the authorization table's `mcp-resource:<uri>` rows (config/authorization.py).
RESOURCES: dict[str, tuple[str, str, Callable[[ApiKey], Any]]] = {
    MATRIX_URI: (
        "asset-matrix",
        "Supported currencies and networks: decimals of the base units, payment methods, token addresses.",
        lambda api_key: asset_matrix(),
    ),
    SCHEDULE_URI: (
        "fee-schedule",
        "The platform fee schedule (same body as get_fee_schedule).",
        lambda api_key: fee_schedule(),
    ),
}


def resource_rule(uri: str) -> Rule:
    return rule_for(f"mcp-resource:{uri}", "READ")


async def handle_list_resources(ctx, params) -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(uri=uri, name=name, description=description, mime_type="application/json")
            for uri, (name, description, _) in RESOURCES.items()
        ]
    )


async def handle_list_resource_templates(ctx, params) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(
        resource_templates=[
            types.ResourceTemplate(
                uri_template=DRAFT_TEMPLATE,
                name="draft",
                description="One of the account's drafts (same body as get_draft). Needs the scope drafts:read.",
                mime_type="application/json",
            )
        ]
    )


def read_resource(api_key: ApiKey, uri: str) -> Any:
    if uri in RESOURCES:
        _, _, read = RESOURCES[uri]
        _guard(api_key, rule=resource_rule(uri), write=False)
        return read(api_key)
    if uri.startswith("draft://"):
        _guard(api_key, rule=resource_rule(DRAFT_TEMPLATE), write=False)
        draft_id = uri.removeprefix("draft://")
        _check_id(draft_id)
        return draft_json(draft_get(user=api_key.user, draft_id=draft_id))
    raise Http404


async def handle_read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
    uri = str(params.uri)
    api_key = current_api_key()

    def read() -> Any:
        try:
            return _as_json(read_resource(api_key, uri))
        except Exception as exc:  # the same problem document as a tool error, as a JSON-RPC error
            problem = problem_of(exc)
            code = types.INVALID_PARAMS if problem["status"] < 500 else types.INTERNAL_ERROR
            raise MCPError(code=code, message=problem["detail"], data=problem) from None

    body = await sync_to_async(_in_thread, thread_sensitive=False)(read)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=json.dumps(body), mime_type="application/json")]
    )


# --- The ASGI application --------------------------------------------------------


def transport_security() -> TransportSecuritySettings:
    """Host and Origin checks (DNS rebinding) from ALLOWED_HOSTS and BASE_URL."""
    if "*" in settings.ALLOWED_HOSTS:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    hosts: list[str] = []
    for host in settings.ALLOWED_HOSTS:
        host = host.lstrip(".")  # Django's ".example.com" also matches example.com itself
        hosts += [host, f"{host}:*"]
    base = urlsplit(settings.BASE_URL)
    origins = [f"{base.scheme}://{base.netloc}"]
    origins += [origin for origin in getattr(settings, "CSRF_TRUSTED_ORIGINS", []) if origin not in origins]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins)


def build_server() -> Server:
    from django.conf import settings as django_settings

    return Server(
        "payments",
        version="v1",
        title="Non-custodial payment drafts and pay links",
        instructions=INSTRUCTIONS,
        website_url=django_settings.BASE_URL,
        on_list_tools=handle_list_tools,
        on_call_tool=handle_call_tool,
        on_list_resources=handle_list_resources,
        on_list_resource_templates=handle_list_resource_templates,
        on_read_resource=handle_read_resource,
    )


def build_app() -> Starlette:
    server = build_server()
    return server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        max_request_body_size=settings.API_MAX_BODY_BYTES,
        transport_security=transport_security(),
        auth=AuthSettings(issuer_url=AnyHttpUrl(settings.BASE_URL), resource_server_url=None),
        token_verifier=ApiKeyVerifier(),
    )
