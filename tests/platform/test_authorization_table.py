"""The authorization table (config/authorization.py) is the whole of who may call what.

Every route of the live URLconf and every MCP tool has a row; each route is called with each kind
of credential and answers as its rule says: refused (401/403 with the authorization's code, or the
sign-in redirect of a page) or not (whatever the view itself answers: 200, 400, 404, 405, 409...).
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver, resolve, reverse
from rest_framework.test import APIClient

from accounts.authorization import Kind, Rule, rule_for
from accounts.models import ApiKey
from accounts.scopes import ALL_SCOPES
from accounts.sessions import SECOND_FACTOR
from accounts.stepup import STEP_UP_AT
from config.authorization import ROUTES
from mcp_server.server import DRAFT_TEMPLATE, RESOURCES, execute, resource_rule
from mcp_server.tools import TOOLS
from tests.shared_rows import SharedRows, key_client, session_client

AUTHORIZATION_CODES = {
    "not_authenticated",
    "missing_scope",
    "session_required",
    "step_up_required",
    "live_key_required",
    "staff_required",
    "no_rule",
}
SAMPLE = {"token": "t" * 32, "digest": "0" * 32, "action": "nothing", "app_label": "accounts"}
CREDENTIALS = ("none", "key_without_scope", "key", "test_key", "session", "stepped_up_session", "staff")


def _walk(patterns, namespace: str | None = None):
    """(view name, pattern) of every route; an unnamed route as `<namespace>:` (None outside one)."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, ":".join(p for p in (namespace, pattern.namespace) if p) or None)
        elif isinstance(pattern, URLPattern):
            name = pattern.name or ""
            yield (f"{namespace}:{name}" if namespace else name or None), pattern


def _live_routes() -> list[tuple[str | None, URLPattern]]:
    return list(_walk(get_resolver(settings.ROOT_URLCONF).url_patterns))


def _path_of(name: str, pattern: URLPattern) -> str | None:
    regex = pattern.pattern.regex
    kwargs = {group: SAMPLE.get(group, str(uuid.uuid4())) for group in regex.groupindex}
    try:
        return reverse(name, kwargs=kwargs)
    except Exception:  # an admin route whose arguments are not a sample (an object id, a content type)
        return None


def _cases():
    cases = []
    for name, pattern in _live_routes():
        if name.startswith("admin:") and (pattern.pattern.regex.groupindex or name == "admin:"):
            continue  # the admin's object pages: the rule of every admin page (admin:*)
        path = _path_of(name, pattern)
        if path is None:
            continue
        declared = ROUTES.get(name) or ROUTES.get(name.rsplit(":", 1)[0] + ":*") or {}
        for method in sorted(declared):
            for verb in ("GET", "POST") if method == "*" else (method,):
                cases.append(pytest.param(name, path, verb, id=f"{verb} {name}"))
    return cases


def test_every_route_and_tool_is_in_the_table_and_nothing_else_is():
    routes = _live_routes()
    assert [pattern for name, pattern in routes if not name] == [], "every route has a name the table can use"
    # Unnamed routes inside a namespace (the admin's redirects) take the namespace's `*` rule.
    assert {name for name, _ in routes if name.endswith(":")} <= {"admin:"}
    names = {name for name, _ in routes}
    admin = {name for name in names if name.startswith("admin:")}
    pages_and_api = {name for name in ROUTES if not name.startswith(("mcp:", "mcp-resource:"))}
    assert names - admin | {"admin:*", "admin:login"} == pages_and_api
    assert {name for name in ROUTES if name.startswith("mcp:")} == {f"mcp:{tool.name}" for tool in TOOLS}
    resources = {f"mcp-resource:{uri}" for uri in [*RESOURCES, DRAFT_TEMPLATE]}
    assert {name for name in ROUTES if name.startswith("mcp-resource:")} == resources


def test_no_view_steps_around_the_table():
    """Every REST view's permission is the table's (no view of its own permission classes)."""
    from accounts.permissions import HasScope

    own = sorted(
        name
        for name, pattern in _live_routes()
        if getattr(pattern.callback, "cls", None) is not None
        and [type(p) for p in pattern.callback.cls().get_permissions()] != [HasScope]
    )
    assert own == []


def test_a_key_reaches_nothing_but_key_rules():
    """A key is never a person: every rule a key passes is a `key` rule, and every route that
    changes the account itself is a session's."""
    for name in ("auth-password-change", "auth-account", "auth-totp-setup", "auth-totp-enable", "auth-passkeys"):
        assert all(rule.kind is Kind.SESSION for rule in ROUTES[name].values()), name
    assert ROUTES["auth-totp-disable"] == {"POST": Rule(Kind.STEP_UP, proof_in_request=True)}
    assert (
        ROUTES["api-key-list"]["POST"].kind is Kind.STEP_UP and ROUTES["api-key-detail"]["DELETE"].kind is Kind.SESSION
    )
    for name in ("auth-register-begin", "auth-register-complete"):
        assert ROUTES[name]["POST"] == Rule(Kind.PERSON, step_up=True)
    for name, rules in ROUTES.items():
        if name.startswith(("mcp:", "mcp-resource:")):
            assert all(rule.kind is Kind.KEY for rule in rules.values()), name


@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_each_tool_has_the_rule_of_the_rest_operation_it_mirrors(tool):
    path = re.sub(r"\{\w+\}", lambda _: str(uuid.uuid4()), tool.path)
    assert tool.rule == rule_for(resolve(path).view_name, tool.method)


@pytest.fixture(scope="module")
def callers(django_db_setup, django_db_blocker) -> Iterator[dict[str, Any]]:
    """A caller of each kind but `none` (a client with no credential), made once for the
    module's cases (tests/shared_rows.py): a key (with no scope, every scope, every scope in
    test mode) or a signed-in session's key, each of a user of its own."""
    rows = SharedRows(django_db_blocker)
    with rows.writing():
        made = {
            "key_without_scope": rows.key(rows.user("key"), []),
            "key": rows.key(rows.user("key"), ALL_SCOPES),
            "test_key": rows.key(rows.user("key"), ALL_SCOPES, livemode=False),
            "session": rows.session(rows.user("person")),
            "stepped_up_session": rows.session(rows.user("person"), **{STEP_UP_AT: time.time()}),
            "staff": rows.session(
                rows.user("staff", is_staff=True), **{SECOND_FACTOR: "totp", STEP_UP_AT: time.time()}
            ),
        }
    yield made
    rows.remove()


def _client(kind: str, callers: dict[str, Any]) -> APIClient:
    if kind == "none":
        return APIClient()
    if kind in ("key_without_scope", "key", "test_key"):
        return key_client(callers[kind].key)
    return session_client(callers[kind], stepped_up=kind != "session")


def expected_refusal(rule: Rule, kind: str, *, page: bool) -> str | None:
    """What the table says this caller gets: None (let in) or the refusal's code."""
    if rule.kind in (Kind.PUBLIC, Kind.PAYER, Kind.OPERATOR):
        return None
    keyed = kind in ("key_without_scope", "key", "test_key")
    if kind == "none" or (page and keyed):  # pages never read a key
        return None if rule.kind is Kind.PERSON else "sign_in" if page else "not_authenticated"
    if keyed:
        if rule.kind is not Kind.KEY:
            return "session_required"
        if rule.scope and kind == "key_without_scope":
            return "missing_scope"
        if kind == "test_key" and not rule.test_keys:
            return "live_key_required"
        return None
    stepped = kind != "session"
    if rule.kind is Kind.STAFF:
        return None if kind == "staff" else "sign_in"  # to the admin's own door
    if rule.kind is Kind.STEP_UP and rule.proof_in_request:
        return None  # the service checks the code in the body (tests/accounts/test_step_up.py)
    if rule.kind is Kind.STEP_UP or (rule.kind is Kind.PERSON and rule.step_up):
        return None if stepped else "step_up_required"
    return None


def observed_refusal(response, path: str) -> str | None:
    if response.status_code in (401, 403) and response.get("Content-Type", "").startswith("application/problem+json"):
        code = response.json().get("code")
        return code if code in AUTHORIZATION_CODES else None
    if response.status_code == 302:
        location = urlsplit(response["Location"])
        if location.path in (settings.LOGIN_URL, reverse("admin:login")):
            if parse_qs(location.query).get("next") == [path]:
                return "sign_in"
        if location.path == settings.STEP_UP_URL:  # a page sends a session to confirm it's you
            return "step_up_required"
    return None


@pytest.mark.django_db
@pytest.mark.parametrize(("name", "path", "method"), _cases())
def test_each_route_answers_each_caller_as_its_rule_says(name, path, method, callers):
    rule = rule_for(name, method)
    page = not hasattr(resolve(path).func, "cls")
    answers = {}
    for kind in CREDENTIALS:
        call = getattr(_client(kind, callers), method.lower())
        response = call(path, {}, format="json") if method in ("POST", "PUT", "PATCH") else call(path)
        answers[kind] = (observed_refusal(response, path), response.status_code)
    assert {kind: answer[0] for kind, answer in answers.items()} == {
        kind: expected_refusal(rule, kind, page=page) for kind in CREDENTIALS
    }, answers


def test_a_method_the_table_does_not_name_is_405(api_client):
    assert api_client.put("/api/v1/rates", {}, format="json").status_code == 405


@pytest.mark.django_db
@pytest.mark.parametrize("tool", TOOLS, ids=lambda tool: tool.name)
def test_each_tool_answers_each_key_as_its_rule_says(tool, callers):
    for kind in ("key_without_scope", "key", "test_key"):
        api_key = ApiKey.objects.get(pk=callers[kind].api_key.pk)
        ids = {name: str(uuid.uuid4()) for name in re.findall(r"\{(\w+)\}", tool.path)}
        result = execute(tool, api_key, ids)
        code = (result.structured_content or {}).get("code") if result.is_error else None
        observed = code if code in AUTHORIZATION_CODES else None
        assert observed == expected_refusal(tool.rule, kind, page=False), (kind, result.structured_content)


@pytest.mark.django_db
@pytest.mark.parametrize("uri", [*RESOURCES, DRAFT_TEMPLATE])
def test_each_resource_has_a_key_rule(uri):
    assert resource_rule(uri).kind is Kind.KEY
