"""Heartbeats of the scheduler and the workers, read by /healthz.

Beat sends `config.heartbeat` every HEARTBEAT_INTERVAL_SECONDS and notes the tick as it sends
it (`before_task_publish`, in the beat process); the worker that runs the task notes its own
time. Both are timestamps in the shared cache.
"""

from __future__ import annotations

import time

from django.core.cache import cache

BEAT, WORKER = "beat", "worker"


def _key(name: str) -> str:
    return f"heartbeat:{name}"


def heartbeat_note(name: str, *, at: float | None = None) -> None:
    cache.set(_key(name), time.time() if at is None else at, timeout=None)


def heartbeat_age(name: str, *, now: float | None = None) -> float | None:
    """Seconds since the last heartbeat `name`; None when none was ever noted (a fresh start)."""
    at: float | None = cache.get(_key(name))
    if at is None:
        return None
    return max((time.time() if now is None else now) - at, 0.0)
