"""Who may call what: the rules of the one authorization table and their enforcement.

The table itself is data in the wiring layer (``config/authorization.py``, named by the
setting ``AUTHORIZATION_TABLE``): every route of the URLconf by its name (``view_name``,
namespaced: ``dashboard:overview``; a namespace's default as ``admin:*``) and every MCP tool
(``mcp:<tool>``), each with a rule per HTTP method (``"*"``: every method). This module reads
it (once, on first use) and is what enforces it, in three places:

- the REST API: ``accounts.permissions.HasScope``, DRF's permission class for every view;
- pages (the dashboard, /account, /pay, /refund, the admin, the probes):
  ``accounts.middleware.AuthorizationMiddleware``, before the view runs;
- MCP tools and resources: ``mcp_server.server`` asks ``key_refusal`` before running one.

A route or method the table does not name is refused (405 for an undeclared method, 403 for
an unnamed route), so a new route cannot be reachable before it is given a rule.

A key is never a person: a rule that is not ``key`` refuses an API key (403
``session_required``), whatever its scopes; only the ``key`` rule lets a key in, with its scope.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import StrEnum

from django.conf import settings
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils.module_loading import import_string

from accounts.roles import SAFE_METHODS, Work, may, scope_work
from accounts.stepup import StepUpRequired, step_up_satisfied
from core.problems import PermissionDenied, Problem


class Kind(StrEnum):
    PUBLIC = "public"  # anyone; no credential is consulted
    PAYER = "payer"  # anyone holding the token in the URL (pay and refund pages, checkout)
    OPERATOR = "operator"  # the operator's own check in the view (/metrics: loopback or METRICS_TOKEN)
    PERSON = "person"  # a visitor or a signed-in session, never an API key (the sign-in steps)
    KEY = "key"  # an API key carrying the scope (a signed-in session acts with every scope)
    SESSION = "session"  # a signed-in session only
    STEP_UP = "step_up"  # a signed-in session that proved a second factor lately (accounts.stepup)
    STAFF = "staff"  # a staff session signed in with a second factor (the admin)


@dataclass(frozen=True, slots=True)
class Rule:
    kind: Kind
    scope: str | None = None  # KEY: the scope the key needs (None: any key of the account)
    test_keys: bool = True  # KEY: whether a test key (pdk_test_...) may call ("mode")
    step_up: bool = False  # PERSON: a signed-in caller needs a recent second factor
    # STEP_UP: the request itself may carry the proof (a code from the authenticator app): the
    # service door checks it, or else the session's recent one (accounts.stepup.step_up_require).
    proof_in_request: bool = False
    # KEY, SESSION, STEP_UP: the work (accounts.roles.Work) a member's role must grant for a change
    # in the organization they work in; a read (GET, HEAD) needs `read` only, unless role_reads.
    # None: a person's own route (their sign-in, second factor, passkeys), not an organization's.
    role: str | None = None
    role_reads: bool = False  # the role is needed to read too (members, the audit log)

    @property
    def takes_keys(self) -> bool:
        return self.kind is Kind.KEY

    @property
    def anonymous(self) -> bool:
        return self.kind in (Kind.PUBLIC, Kind.PAYER, Kind.OPERATOR, Kind.PERSON)


# The vocabulary the table is written in.
def public() -> Rule:
    return Rule(Kind.PUBLIC)


def payer() -> Rule:
    return Rule(Kind.PAYER)


def operator() -> Rule:
    return Rule(Kind.OPERATOR)


def person(*, step_up_when_signed_in: bool = False) -> Rule:
    return Rule(Kind.PERSON, step_up=step_up_when_signed_in)


def key(scope: str | None = None, *, test_keys: bool = True, role: str | None = None, role_reads: bool = False) -> Rule:
    """An API key with the scope, or a session whose role does the work (by default the scope's:
    accounts.roles.SCOPE_WORK)."""
    return Rule(
        Kind.KEY,
        scope=str(scope) if scope else None,
        test_keys=test_keys,
        role=str(role or scope_work(scope)),
        role_reads=role_reads,
    )


def session(role: str | None = None, *, role_reads: bool = False) -> Rule:
    """A signed-in session; with a role, an organization's route (None: the person's own)."""
    return Rule(Kind.SESSION, role=str(role) if role else None, role_reads=role_reads)


def step_up(role: str | None = None, *, proof_in_request: bool = False) -> Rule:
    return Rule(Kind.STEP_UP, proof_in_request=proof_in_request, role=str(role) if role else None)


def staff() -> Rule:
    return Rule(Kind.STAFF)


class MissingScope(Problem):
    status_code = 403
    default_code = "missing_scope"


class SessionRequired(Problem):
    status_code = 403
    default_code = "session_required"
    default_detail = "This endpoint needs a logged-in session; API keys cannot use it."


class LiveKeyRequired(Problem):
    status_code = 403
    default_code = "live_key_required"
    default_detail = "This endpoint needs a live key; test keys (pdk_test_...) cannot use it."


class RoleRequired(PermissionDenied):
    default_code = "role_required"
    default_detail = "Your role in this organization does not allow this."


class NotAMember(PermissionDenied):
    default_code = "not_a_member"
    default_detail = "You are no longer a member of this organization; sign in again."


class SecondFactorRequired(PermissionDenied):
    default_code = "second_factor_required"
    default_detail = (
        "This organization requires a second factor for its members: set up an authenticator app or a passkey "
        "on your security page (/dashboard/security/), then retry."
    )


class NoRule(PermissionDenied):
    default_code = "no_rule"
    default_detail = "This route is not open to anyone."


class StaffRequired(PermissionDenied):
    default_code = "staff_required"
    default_detail = "Staff signed in with a second factor only."


class Undeclared(Exception):
    """The route exists but the table names no rule for this method."""

    def __init__(self, allowed: list[str]) -> None:
        super().__init__(", ".join(allowed))
        self.allowed = allowed


Table = dict[str, dict[str, Rule]]


@functools.cache
def table() -> Table:
    return import_string(settings.AUTHORIZATION_TABLE)


def rules_for(view_name: str | None) -> dict[str, Rule] | None:
    routes = table()
    rules = routes.get(view_name) if view_name else None
    if rules is None and view_name and ":" in view_name:
        rules = routes.get(view_name.rsplit(":", 1)[0] + ":*")
    return rules


def rule_for(view_name: str | None, method: str) -> Rule:
    """The rule of a route's method; NoRule for a route the table does not name, Undeclared
    for a method it does not."""
    rules = table().get(view_name) if view_name is not None else None  # the common case first: a named route
    if rules is not None:
        rule = rules.get(method)
        if rule is not None:
            return rule
    else:
        rules = rules_for(view_name)
    if rules is None:
        raise NoRule()
    rule = rules.get(method) or rules.get("*")
    if rule is None and method == "HEAD":
        rule = rules.get("GET")
    if rule is None:
        raise Undeclared(sorted(rules))
    return rule


def tool_rule(name: str) -> Rule:
    return rule_for(f"mcp:{name}", "CALL")


OPEN = (Kind.PUBLIC, Kind.PAYER, Kind.OPERATOR)  # no credential consulted


def key_refusal(rule: Rule, api_key) -> Problem | None:
    """Why this API key may not call under this rule (None: it may)."""
    kind = rule.kind
    if kind is Kind.KEY:
        scope = rule.scope
        if scope is not None and scope not in api_key.scopes:
            return MissingScope(f"This API key lacks the scope {scope}.", extra={"requiredScope": scope})
        if not rule.test_keys and not api_key.livemode:
            return LiveKeyRequired()
        return None
    if kind in OPEN:
        return None
    return SessionRequired()  # a key is never a person


def work_needed(rule: Rule, method: str) -> str | None:
    """The work a member's role must grant to call under this rule with this method (None: a
    person's own route, no organization's role consulted)."""
    if rule.role is None:
        return None
    if method in SAFE_METHODS and not rule.role_reads:
        return Work.READ
    return rule.role


def session_refusal(rule: Rule, request) -> Problem | None:
    """Why this signed-in session may not call under this rule (None: it may)."""
    work = work_needed(rule, request.method)
    if work is not None and not may(getattr(request, "role", None), work):
        return RoleRequired(extra={"requiredWork": str(work)})
    if (rule.kind is Kind.STEP_UP and not rule.proof_in_request) or (rule.kind is Kind.PERSON and rule.step_up):
        if not step_up_satisfied(request):
            return StepUpRequired()
    elif rule.kind is Kind.STAFF:
        from accounts.sessions import two_factor_session

        if not (request.user.is_staff and two_factor_session(request)):
            return StaffRequired()
    return None


def _actions_key(actions: dict[str, str] | None) -> tuple | None:
    """A viewset route's actions as a key. DRF adds `head` (as `get`'s action) to the route's own
    actions dict on its first request, in place: the key leaves that entry out, so a view is
    found the same before and after (the schema is generated at any point of a process's life)."""
    if not actions:
        return None
    return tuple(sorted((m, a) for m, a in actions.items() if not (m == "head" and a == actions.get("get"))))


@functools.cache
def route_names() -> dict[tuple, str]:
    """Each routed view's name by (view class or function, its viewset actions): how the
    OpenAPI schema, which sees a view without its URL, finds the view's rules."""
    names: dict[tuple, str] = {}

    def walk(patterns, namespace: str | None) -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                inner = ":".join(part for part in (namespace, pattern.namespace) if part) or None
                walk(pattern.url_patterns, inner)
            elif isinstance(pattern, URLPattern) and pattern.name:
                callback = pattern.callback
                actions = getattr(callback, "actions", None)
                target = getattr(callback, "cls", callback)
                name = f"{namespace}:{pattern.name}" if namespace else pattern.name
                names.setdefault((target, _actions_key(actions)), name)

    walk(get_resolver().url_patterns, None)
    return names


def rule_of_view(view, method: str) -> Rule | None:
    """The rule of a DRF view instance's method, found without a request (the schema)."""
    name = route_names().get((type(view), _actions_key(getattr(view, "action_map", None))))
    try:
        return rule_for(name, method.upper())
    except (NoRule, Undeclared):
        return None
