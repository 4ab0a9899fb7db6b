"""Service-level pages: the probes (/livez, /readyz, /healthz) and llms.txt."""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.utils.html import escape
from django.views.decorators.http import require_safe
from kombu import Connection

from about.api.views import openapi_document
from about.notices import setup_notices
from about.operator import Access, operator_access
from about.problems import problem_text
from accounts.scopes import Scope
from core.heartbeats import BEAT, WORKER, heartbeat_age
from core.sql.dbconn import database_answers

logger = logging.getLogger(__name__)


def _check_database(detail: dict) -> str:
    database_answers()
    return "ok"


def _check_cache(detail: dict) -> str:
    cache.set("healthz:probe", "ok", timeout=30)
    if cache.get("healthz:probe") != "ok":
        raise Unhealthy("wrote a key and could not read it back")
    return "ok"


def _check_broker(detail: dict) -> str:
    with Connection(
        settings.CELERY_BROKER_URL,
        transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        connect_timeout=settings.HEALTHZ_BROKER_TIMEOUT_SECONDS,
    ) as conn:
        conn.ensure_connection(max_retries=1, timeout=settings.HEALTHZ_BROKER_TIMEOUT_SECONDS)
    return "ok"


class Unhealthy(Exception):
    """A part that answers but is behind; its message (no secret in it) is shown."""

    state = "stale"


class WatcherStale(Unhealthy):
    pass


class WatchersDisagree(Unhealthy):
    """A network's endpoints disagree on a payment (chainwatch/quorum.py)."""

    state = "disagreement"


def _heartbeat_check(name: str, limit: int, what: str):
    def check(detail: dict) -> str | None:
        age = heartbeat_age(name)
        if age is None:
            return None  # never noted yet: a fresh deployment, not counted against it
        detail[name] = {"lastAgeSeconds": round(age, 1)}
        if age > limit:
            raise Unhealthy(f"{what} {age:.0f} s ago")
        return "ok"

    return check


def _check_beat(detail: dict) -> str | None:
    return _heartbeat_check(BEAT, settings.HEALTHZ_BEAT_STALE_SECONDS, "last tick")(detail)


def _check_worker(detail: dict) -> str | None:
    return _heartbeat_check(WORKER, settings.HEALTHZ_WORKER_STALE_SECONDS, "last heartbeat run")(detail)


def _check_watchers(detail: dict) -> str | None:
    """Fails when an enabled, configured chain watcher's last successful pass is older than
    CHAINWATCH_STALE_AFTER_SECONDS, or while a network's endpoints disagree on a payment
    (`disagreement`: chainwatch/quorum.py); None when none runs. Detail per watcher: cursor, node
    head, lag and the age of the last successful pass; `watchersDisagree`: the transfers."""
    from chainwatch.networks import watchers
    from chainwatch.selectors import quorum_disagreements, stale_watchers, watcher_lag

    if not watchers(with_endpoint=True):
        return None
    detail["watchers"] = watcher_lag()
    stale = stale_watchers()
    if stale:
        raise WatcherStale(", ".join(stale))
    disagree = quorum_disagreements()
    if disagree:
        detail["watchersDisagree"] = disagree
        raise WatchersDisagree("endpoints disagree on " + ", ".join(disagree))
    return "ok"


def _backlog_check(name: str, backlog, limit_setting: str):
    def check(detail: dict) -> str:
        now = timezone.now()
        count, oldest = backlog(now=now)
        age = None if oldest is None else max((now - oldest).total_seconds(), 0.0)
        detail[name] = {"backlog": count, "oldestDueAgeSeconds": None if age is None else round(age, 1)}
        if age is not None and age > getattr(settings, limit_setting):
            raise Unhealthy(f"oldest due {age:.0f} s ago, {count} waiting")
        return "ok"

    return check


def _check_webhooks(detail: dict) -> str:
    from webhooks.selectors import delivery_backlog

    return _backlog_check("webhooks", delivery_backlog, "HEALTHZ_WEBHOOK_DUE_SECONDS")(detail)


def _check_emails(detail: dict) -> str:
    from notifications.selectors import email_backlog

    return _backlog_check("emails", email_backlog, "HEALTHZ_EMAIL_DUE_SECONDS")(detail)


def _check_rates(detail: dict) -> str:
    """Fails when no fiat price can be made: a live table missing or older than
    RATES_MAX_AGE_SECONDS while the bundled table may not price (RATES_BUNDLED_ALLOWED off);
    fiat-priced drafts and pay links are then refused. Its age is in ``detail.rates``."""
    from payments.rates.health import rates_health

    report = rates_health()
    detail["rates"] = report
    if report["live"] or report["bundledAllowed"]:
        return "ok"
    behind = []
    for kind, table in report["tables"].items():
        if table["fresh"]:
            continue
        age = table["ageSeconds"]
        behind.append(f"no {kind} rates fetched yet" if age is None else f"{kind} rates {age} s old")
    raise Unhealthy(f"{', '.join(behind)} (limit {settings.RATES_MAX_AGE_SECONDS} s): fiat prices are refused")


HEALTH_CHECKS = {
    "database": _check_database,
    "cache": _check_cache,
    "broker": _check_broker,
    "beat": _check_beat,
    "worker": _check_worker,
    "watchers": _check_watchers,
    "webhooks": _check_webhooks,
    "emails": _check_emails,
    "rates": _check_rates,
}
# What readiness asks of this instance: its stores reachable (each answers "ok" or raises).
READINESS_CHECKS: dict[str, Callable[[dict], str]] = {
    "database": _check_database,
    "cache": _check_cache,
    "broker": _check_broker,
}
NEEDS_DATABASE = ("watchers", "webhooks", "emails")
NEEDS_CACHE = ("beat", "worker", "rates")


def _traces_detail() -> dict[str, str]:
    """Per EVM watcher, whether ETH moved by contracts' internal calls is seen (it needs traces)."""
    from chainwatch.selectors import evm_traces
    from chainwatch.traces import NO_TRACES

    detail = {}
    for network, mode in evm_traces().items():
        if mode == NO_TRACES:
            detail[network] = f"off: internal ETH transfers are not seen on {network}: the node offers no traces"
        elif mode:
            detail[network] = f"on ({mode}): internal ETH transfers are seen"
        else:
            detail[network] = "unknown: the watcher has not asked its node yet"
    return detail


@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """200 when every part answers, else 503 (with Retry-After) naming the part that failed.
    Anyone gets `status` and `failed`; the operator (a loopback client or one sending
    `Authorization: Bearer <HEALTHZ_TOKEN>`, about/operator.py) also `checks`, `notices` and
    `detail`: the figures behind the checks (heartbeat ages, watcher cursors and node heads,
    backlogs, the rate tables' ages), what this deployment leaves off (no fee address, no node endpoint) and, per EVM
    watcher, whether its node lets it see ETH moved by contracts' internal calls."""
    checks: dict[str, str] = {}
    detail: dict = {}
    for name, check in HEALTH_CHECKS.items():
        if (name in NEEDS_DATABASE and checks.get("database") != "ok") or (
            name in NEEDS_CACHE and checks.get("cache") != "ok"
        ):
            continue  # its store is down, which is already named
        try:
            result = check(detail)
            if result is None:
                continue  # not applicable here (e.g. no chain watcher configured)
            checks[name] = result
        except Exception as exc:  # a health check reports every failure, whatever its kind
            logger.warning("health check %s failed: %s", name, exc)
            # Stale parts are named with their figures (no secret in them); other errors only by kind.
            checks[name] = f"{exc.state}: {exc}" if isinstance(exc, Unhealthy) else f"error: {type(exc).__name__}"
    healthy = all(value == "ok" for value in checks.values())
    failed = [name for name, value in checks.items() if value != "ok"]
    status = 200 if healthy else 503
    if operator_access(request.META, settings.HEALTHZ_TOKEN) not in (Access.LOOPBACK, Access.TOKEN):
        return _health_response({"status": "ok" if healthy else "fail", "failed": failed}, status)
    notices = setup_notices()
    if checks.get("cache", "ok") != "ok":
        notices.append(CACHE_DOWN_NOTICE)
    detail["rateLimits"] = _rate_limits_detail()
    body: dict = {"status": "ok" if healthy else "fail", "checks": checks, "failed": failed, "notices": notices}
    if checks.get("database") == "ok":
        # What the watchers can and cannot see; informative, never a failure.
        traces = _traces_detail()
        if traces:
            detail["traces"] = traces
    if "rates" not in detail:  # the check could not run (the cache down)
        detail["rates"] = _rates_detail()
    body["detail"] = detail
    return _health_response(body, status)


def _health_response(body: dict, status: int) -> JsonResponse:
    response = JsonResponse(body, status=status)
    if status == 503:
        response["Retry-After"] = str(settings.OUTAGE_RETRY_AFTER_SECONDS)
    return response


CACHE_DOWN_NOTICE = (
    "The cache is not answering: requests are still served, rate limits are counted per process "
    '(RATE_LIMIT_LOCAL_WEIGHT) and signing in waits for it (docs/operations.md, "When Redis is down").'
)


def _rate_limits_detail() -> dict:
    """Where this process counts rate limits: "shared" (the cache) or "local" (its own memory,
    since `localSince`, while the cache does not answer)."""
    from core.cache import shared_counting

    since = shared_counting.down_since
    if since is None:
        return {"counting": "shared"}
    return {"counting": "local", "localSince": datetime.fromtimestamp(since, tz=UTC).isoformat()}


def _rates_detail() -> dict:
    """The rate feed: live or not, and per provider its failure and outlier counts; never a failure."""
    from payments.rates.health import rates_health

    try:
        return rates_health()
    except Exception as exc:  # the shared cache down shows in checks already
        return {"error": type(exc).__name__}


@require_safe
def livez(request: HttpRequest) -> JsonResponse:
    """The process is up and answers; asks no dependency (a restart would not fix one)."""
    return JsonResponse({"status": "ok"})


_migrated = False
DEGRADES_ONLY = ("cache",)  # down, this instance still serves (readyz stays 200)


def _migrations_applied() -> bool:
    """No migration left to apply (remembered once true: migrations are only ever added)."""
    global _migrated
    if not _migrated:
        from django.db.migrations.executor import MigrationExecutor

        executor = MigrationExecutor(connection)
        _migrated = not executor.migration_plan(executor.loader.graph.leaf_nodes())
    return _migrated


@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    """200 when this instance can serve: database and broker reachable and every migration
    applied; else 503 naming what is not. The cache down is `degraded`, not a failure: requests
    are still served (rate limits counted per process), and the cache is shared by every
    instance, so failing on it would take all of them out of rotation at once."""
    checks: dict[str, str] = {}
    for name in READINESS_CHECKS:
        try:
            checks[name] = READINESS_CHECKS[name]({})
        except Exception as exc:  # every failure is a reason not to send traffic here
            logger.warning("readiness check %s failed: %s", name, exc)
            checks[name] = f"error: {type(exc).__name__}"
    if checks["database"] == "ok":
        try:
            checks["migrations"] = "ok" if _migrations_applied() else "pending"
        except Exception as exc:  # the migration table unreadable is as not ready
            checks["migrations"] = f"error: {type(exc).__name__}"
    failed = [name for name, value in checks.items() if value != "ok" and name not in DEGRADES_ONLY]
    degraded = [name for name in DEGRADES_ONLY if checks.get(name, "ok") != "ok"]
    body = {"status": "fail" if failed else "ok", "checks": checks, "failed": failed, "degraded": degraded}
    response = JsonResponse(body, status=503 if failed else 200)
    if failed:
        response["Retry-After"] = str(settings.OUTAGE_RETRY_AFTER_SECONDS)
    return response


def llms_txt_text() -> str:
    """llms.txt built from the live OpenAPI document, so it cannot drift from the URLconf."""
    document = openapi_document()
    base = settings.BASE_URL
    lines = [
        "# Non-custodial payment drafts and pay links",
        "",
        "> Prepares payment instructions that payers sign and send from their own wallets. "
        "The service never holds keys or funds and contains no signing code. It watches the chain, "
        "matches the exact amount and reports progress by signed webhooks, email and status endpoints.",
        "",
        "## Authentication",
        "",
        "Send a scoped API key as `Authorization: Bearer pdk_...`. Scopes:",
        "",
    ]
    lines += [f"- `{scope.value}`: {scope.label}" for scope in Scope]
    lines += [
        "",
        "API keys themselves are managed from a logged-in session. Errors are application/problem+json "
        "with a stable `code` and per-field `errors`.",
        "",
        "## Entry points",
        "",
        f"- OpenAPI description: {base}/api/v1/schema (interactive: {base}/swagger)",
        f"- MCP server (Streamable HTTP, same Bearer key): {base}/mcp",
        f"- Networks enabled here: {', '.join(settings.ENABLED_NETWORKS)}",
        "",
        "## Endpoints",
        "",
    ]
    for path, operations in document.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            scopes = operation.get("x-required-scopes")
            needs = f" (scope {scopes[0]})" if scopes else ""
            lines.append(f"- {method.upper()} {path}: {operation.get('summary', '').strip()}{needs}")
    from about.llms_guide import agent_guide_lines

    return "\n".join(lines + agent_guide_lines(base) + _mcp_lines(base)) + "\n"


def _mcp_lines(base: str) -> list[str]:
    """The MCP section, from the tool list the MCP server itself answers."""
    from mcp_server.server import DRAFT_TEMPLATE, INSTRUCTIONS, RESOURCES
    from mcp_server.tools import tool_list

    lines = [
        "",
        "## MCP server",
        "",
        f"- Endpoint: {base}/mcp (MCP over Streamable HTTP, stateless, JSON responses)",
        "- Authentication: the same API key as the REST API, `Authorization: Bearer pdk_...`; a missing or bad key "
        "is a 401 with `WWW-Authenticate`. A tool whose scope the key lacks answers a tool error with code "
        "`missing_scope` naming the scope.",
        "- Errors: tool errors (isError) whose JSON is the REST problem document: `code`, `detail`, `errors[].field`.",
        f"- Resources: {', '.join([*RESOURCES, DRAFT_TEMPLATE])}",
        f"- {INSTRUCTIONS}",
        "",
        "### MCP tools",
        "",
    ]
    for tool in tool_list():
        scope = (tool.meta or {}).get("requiredScope")
        needs = f" (scope {scope})" if scope else ""
        lines.append(f"- `{tool.name}`{needs}: {tool.description}")
    return lines


FAVICON = "paylinks/favicon.svg"


@functools.cache
def _favicon() -> bytes:
    found = finders.find(FAVICON)
    assert isinstance(found, str), FAVICON
    return Path(found).read_bytes()


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """/favicon.ico, which browsers and crawlers ask for on their own: the site's icon (the SVG
    every page links), a day in caches."""
    response = HttpResponse(_favicon(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response


@require_safe
def llms_txt(request: HttpRequest) -> HttpResponse:
    return HttpResponse(llms_txt_text(), content_type="text/plain; charset=utf-8")


@require_safe
def problem_page(request: HttpRequest, code: str) -> HttpResponse:
    """{BASE_URL}/problems/{code}: what an error document's `type` means, for people (HTML); the
    same text is docs/problems.md (about/problems.py)."""
    text: str = escape(problem_text(code))
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    page = (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>Problem: {escape(code)}</title>"
        '<meta name="viewport" content="width=device-width, initial-scale=1"></head>\n'
        f"<body><main><h1>Problem type <code>{escape(code)}</code></h1>\n<p>{text}</p>\n"
        "<p>Every error is <code>application/problem+json</code>: <code>{type, title, status, detail, code, "
        'errors: [{field, code, message}]}</code>. <a href="/swagger">The API reference</a>.</p>'
        "</main></body></html>\n"
    )
    return HttpResponse(page, content_type="text/html; charset=utf-8")
