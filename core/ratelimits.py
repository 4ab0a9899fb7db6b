"""Rate-limit windows, and the budgets of costly operations (without DRF: pages and the MCP
server count them too).

Cheap requests spend a read or write budget per API key (core.api.throttling), counted in
the round trip the key check makes anyway. A PDF, a CSV export, a transaction template or a
batch of drafts costs the server many cheap requests' work, so each of these classes also has
its own budgets (`settings.API_COST_RATE_LIMITS`): one per API key and one per account (all its
keys and sessions together, so many keys buy no more). Both are counted in one more round
trip, which only costly requests make. Over either: 429 `rate_limited` with `limit` naming the
class, `per` naming the budget, and Retry-After.

With the cache down the budgets are counted in the process's memory meanwhile
(core.cache.LocalWindows, docs/operations.md "When Redis is down"): they still refuse past
their limit, and no request is refused for the outage itself.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from core.cache import window_counts_until_over
from core.problems import TooManyRequests

_PERIODS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
COST_LABELS = {
    "pdf": "PDF",
    "csv": "CSV export",
    "tx-template": "transaction template",
    "batch": "batch creation",
    "test-helper": "test helper",
}


def parse_rate(rate: str) -> tuple[int, int]:
    """'120/min' -> (120, 60)."""
    count, _, period = rate.partition("/")
    return int(count), _PERIODS[period]


@dataclass(frozen=True)
class RateLimitState:
    policy: str
    quota: int
    window_seconds: int
    remaining: int
    reset_seconds: int
    allowed: bool

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Policy": f'"{self.policy}";q={self.quota};w={self.window_seconds}',
            "RateLimit": f'"{self.policy}";r={self.remaining};t={self.reset_seconds}',
        }


class CostLimited(TooManyRequests):
    """A costly class's budget is spent; `states` are the budgets counted for the request."""

    def __init__(self, detail: str | None = None, *, states: list[RateLimitState] | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        self.states = states or []


def cost_take(*, cost: str, account_id: object, api_key_id: object | None = None) -> list[RateLimitState]:
    """Count one operation of the costly class `cost` against the API key's budget (when the
    request carries a key) and the account's; raise CostLimited (a TooManyRequests) when either is spent.
    Answers the budgets counted (policies `<class>` per key and `<class>-account`)."""
    rates = settings.API_COST_RATE_LIMITS[cost]
    now = time.time()
    budgets = []
    for per, ident, policy in (("key", api_key_id, cost), ("account", account_id, f"{cost}-account")):
        if ident is None or not rates.get(per):
            continue
        limit, period = parse_rate(rates[per])
        window = int(now // period)
        budgets.append((per, policy, limit, period, f"throttle:{cost}:{per}:{ident}:{window}", (window + 1) * period))
    counts = window_counts_until_over([(key, limit, period + 1) for _, _, limit, period, key, _ in budgets])
    states = []
    for (per, policy, limit, period, _, ends), count in zip(budgets, counts, strict=False):
        reset = max(math.ceil(ends - now), 1)
        states.append(RateLimitState(policy, limit, period, max(limit - count, 0), reset, count <= limit))
        if count > limit:
            raise CostLimited(
                f"Too many {COST_LABELS[cost]} requests for this {'API key' if per == 'key' else 'account'}: "
                f"{rates[per]}. Try again in {reset} s.",
                retry_after=reset,
                extra={"limit": cost, "per": per},
                states=states,
            )
    return states
