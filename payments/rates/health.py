"""Counters of the rate feed's troubles, kept in the shared cache: per provider, how often it
failed (down, slow, rate-limited, malformed) and how often its price was dropped as an outlier,
with its last error. ``/healthz`` reports them under ``detail.rates``; they are plain
monotonic counters (``payments:rates:count:<event>:<provider>``), ready to be exported.
"""

from __future__ import annotations

from typing import Any

from django.core.cache import cache
from django.utils import timezone

from core.wire import json_datetime

EVENTS = ("failures", "outliers")
_PREFIX = "payments:rates"


def _key(event: str, provider: str) -> str:
    return f"{_PREFIX}:count:{event}:{provider}"


def count(event: str, provider: str, *, error: str | None = None) -> None:
    """Add one to ``event`` ("failures" or "outliers") of ``provider``."""
    key = _key(event, provider)
    cache.add(key, 0, timeout=None)
    try:
        cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=None)
    if error is not None:
        cache.set(f"{_PREFIX}:last:{provider}", {"error": error[:300], "at": json_datetime(timezone.now())}, None)


def counters(providers: list[str]) -> dict[str, dict[str, Any]]:
    """{provider: {"failures": n, "outliers": n, "lastError": ..., "lastErrorAt": ...}}."""
    keys = [_key(event, provider) for provider in providers for event in EVENTS]
    lasts = [f"{_PREFIX}:last:{provider}" for provider in providers]
    values = cache.get_many(keys + lasts)
    report = {}
    for provider in providers:
        entry: dict[str, Any] = {event: int(values.get(_key(event, provider)) or 0) for event in EVENTS}
        last = values.get(f"{_PREFIX}:last:{provider}")
        entry["lastError"] = last["error"] if last else None
        entry["lastErrorAt"] = last["at"] if last else None
        report[provider] = entry
    return report


def rates_health() -> dict[str, Any]:
    """``/healthz`` ``detail.rates``: whether live rates are fresh, the bundled table's use, the counters."""
    from django.conf import settings

    from payments.rates.feed import CACHE_KEYS, _cached, _is_fresh, _labels, bundled_notice
    from payments.rates.providers import configured_providers

    now = timezone.now()
    tables = {}
    for kind in CACHE_KEYS:
        table = _cached(kind)
        tables[kind] = {
            "fresh": _is_fresh(table, now),
            "fetchedAt": json_datetime(table.fetched_at) if table else None,
            "ageSeconds": int((now - table.fetched_at).total_seconds()) if table else None,
            "pairs": len(table.entries) if table else 0,
        }
    providers = [label for kind in CACHE_KEYS for label in _labels(configured_providers(kind))]
    return {
        "live": all(t["fresh"] for t in tables.values()),
        "bundledAllowed": settings.RATES_BUNDLED_ALLOWED,
        "bundledInUse": bundled_notice() is not None,
        "tables": tables,
        "providers": counters(providers),
    }
