"""Rate limits per API key (or session account), else per client IP.

Writes and reads have separate budgets (settings.API_RATE_LIMITS). A fixed window
counted with one atomic increment in the shared cache (one Redis round trip): cheaper
than DRF's sliding history list, which is read, unpickled and rewritten on every request.

Costly operations (PDF, transaction template, batch) also spend their class's budgets per key
and per account (`CostThrottle`, core/ratelimits.py), in one more round trip that only they make.

Every throttled response advertises its budget with the IETF RateLimit header fields
(draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy: "write";q=120;w=60` and
`RateLimit: "write";r=57;t=23` (remaining requests, seconds until the window resets).

While the cache does not answer, each process counts these windows in its own memory
(core.cache.window_count falls back to LocalWindows, weighted by RATE_LIMIT_LOCAL_WEIGHT):
requests go on, and past a limit they are still refused with 429.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from django.conf import settings
from django.http import HttpRequest
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from core.cache import window_count
from core.ratelimits import CostLimited, RateLimitState, cost_take, parse_rate

if TYPE_CHECKING:  # annotations only: DRF's views import this module through the settings
    from rest_framework.request import Request
    from rest_framework.views import APIView

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


def rate_limit_window(*, scope: str, ident: str, rate: str | None = None) -> tuple[str, int]:
    """The cache key counting this window's requests of ``ident`` in ``scope``, and its timeout."""
    _, period = parse_rate(rate or settings.API_RATE_LIMITS[scope])
    return f"throttle:{scope}:{ident}:{int(time.time() // period)}", period + 1


def rate_limit_count(
    *, scope: str, ident: str, rate: str | None = None, counted: dict[str, int] | None = None
) -> tuple[RateLimitState, float]:
    """Count one request of ``ident`` in ``scope`` ("read" or "write"): its budget after this
    request, and the seconds until the window ends. ``counted`` holds counts already taken for
    this request (the key check takes it in its own round trip): a window found there is not
    counted twice."""
    limit, period = parse_rate(rate or settings.API_RATE_LIMITS[scope])
    now = time.time()
    window = int(now // period)
    key = f"throttle:{scope}:{ident}:{window}"
    count = counted.pop(key) if counted and key in counted else window_count(key, timeout=period + 1)
    wait = (window + 1) * period - now
    state = RateLimitState(
        policy=scope,
        quota=limit,
        window_seconds=period,
        remaining=max(limit - count, 0),
        reset_seconds=max(math.ceil(wait), 1),
        allowed=count <= limit,
    )
    return state, wait


def rate_limit_take(*, scope: str, ident: str, rate: str | None = None) -> tuple[bool, float]:
    """Count one request of ``ident`` in ``scope`` ("read" or "write"): (allowed, seconds until the window ends).

    The REST throttle and the MCP tool calls share these counters, so one key has one budget.
    """
    state, wait = rate_limit_count(scope=scope, ident=ident, rate=rate)
    return state.allowed, wait


def rate_limit_headers(request: HttpRequest) -> dict[str, str]:
    """The RateLimit fields of the budgets this request was counted against (none if it was not):
    its read or write budget, then a costly operation's (one list member each)."""
    state = getattr(request, "rate_limit_state", None)
    states: list[RateLimitState] = ([state] if state is not None else []) + getattr(
        request, "rate_limit_cost_states", []
    )
    if not states:
        return {}
    if len(states) == 1:
        return states[0].headers()
    fields = [s.headers() for s in states]
    return {name: ", ".join(f[name] for f in fields) for name in fields[0]}


class Addressed(Protocol):
    """What a client's address is read from: a request's META (a Django or DRF request, or the
    MCP process's stand-in built from its ASGI scope)."""

    @property
    def META(self) -> Mapping[str, Any]: ...  # noqa: N802 (Django's name)


def client_address(request: Addressed) -> str:
    """The client's address, as DRF's `get_ident` finds it (the `NUM_PROXIES` proxies in
    front vouch for it in X-Forwarded-For, else the peer's), read from META: DRF's reads
    request.headers, which parses every header of the request for this one."""
    forwarded: str | None = request.META.get("HTTP_X_FORWARDED_FOR")
    peer: str = request.META.get("REMOTE_ADDR", "")  # every server sets it (MCP: "" when it has none)
    proxies = api_settings.NUM_PROXIES
    if proxies is None:
        return "".join(forwarded.split()) if forwarded else peer
    if proxies == 0 or forwarded is None:
        return peer
    hops = forwarded.split(",")
    return hops[-min(proxies, len(hops))].strip()


class Throttle(BaseThrottle):
    def get_ident(self, request: Addressed) -> str:
        return client_address(request)


class ApiRateThrottle(Throttle):
    @classmethod
    def window_of(cls, request: Request, view: APIView | None, *, ident: str) -> tuple[str, int] | None:
        """The counter this throttle will count `request` on (for `ident`), if `view` uses it:
        the key check counts it early, in the round trip it makes anyway."""
        if view is None or not any(issubclass(c, cls) for c in view.throttle_classes):
            return None
        scope = "read" if request.method in SAFE_METHODS else "write"
        return rate_limit_window(scope=scope, ident=ident, rate=getattr(view, "throttle_rates", {}).get(scope))

    def allow_request(self, request: Request, view: APIView) -> bool:
        scope = "read" if request.method in SAFE_METHODS else "write"
        rate = getattr(view, "throttle_rates", {}).get(scope)
        counted = getattr(request, "_request", request).__dict__.get("rate_limit_counted")
        state, self._wait = rate_limit_count(scope=scope, ident=self.ident_of(request), rate=rate, counted=counted)
        # Kept on the Django request, where the middleware adds the RateLimit fields to the response.
        django_request: HttpRequest = getattr(request, "_request", request)
        django_request.rate_limit_state = state  # type: ignore[attr-defined]  # ours, on the request
        return state.allowed

    def wait(self) -> float:
        return self._wait

    def ident_of(self, request: Request) -> str:
        api_key = getattr(request, "auth", None)
        if api_key is not None and getattr(api_key, "pk", None) is not None:
            return f"key:{api_key.pk}"
        if request.user and request.user.is_authenticated:
            return f"user:{request.user.pk}"
        return f"ip:{self.get_ident(request)}"


def cost_class_of(view: APIView | None, method: str) -> str | None:
    """The costly class of an operation: `cost_classes` on the view, keyed by action name
    (viewsets) or HTTP method (plain views)."""
    declared: dict[str, str] | None = getattr(view, "cost_classes", None)
    if not declared:
        return None
    action = getattr(view, "action", None) or (getattr(view, "action_map", None) or {}).get(method.lower())
    return (declared.get(action) if action is not None else None) or declared.get(method.upper())


class CostThrottle(Throttle):
    """The per-key and per-account budgets of a costly operation (core.ratelimits), counted
    after its read or write budget. An operation of no costly class costs nothing here."""

    def allow_request(self, request: Request, view: APIView) -> bool:
        cost = cost_class_of(view, request.method or "")
        if cost is None:
            return True
        django_request: HttpRequest = getattr(request, "_request", request)
        state = getattr(django_request, "rate_limit_state", None)
        if state is not None and not state.allowed:
            return True  # refused already by the read or write budget: no costly work to count
        api_key = getattr(request, "auth", None)
        try:
            django_request.rate_limit_cost_states = cost_take(  # type: ignore[attr-defined]  # ours, on the request
                cost=cost, account_id=request.user.pk, api_key_id=getattr(api_key, "pk", None)
            )
        except CostLimited as refused:
            django_request.rate_limit_cost_states = refused.states  # type: ignore[attr-defined]  # ours, on the request
            raise
        return True


class PerIpThrottle(Throttle):
    """A budget per client IP for writes, whoever is signed in: for endpoints anyone may call
    that store something (suggestions, demo drafts). Subclasses name the budget and its rate.
    The client IP is the peer address, or the one the `NUM_PROXIES` proxies in front vouch for."""

    name = "ip"

    def rate(self) -> str:
        raise NotImplementedError

    def allow_request(self, request: Request, view: APIView) -> bool:
        if request.method in SAFE_METHODS:
            return True
        allowed, self._wait = rate_limit_take(scope=self.name, ident=f"ip:{self.get_ident(request)}", rate=self.rate())
        return allowed

    def wait(self) -> float:
        return self._wait
