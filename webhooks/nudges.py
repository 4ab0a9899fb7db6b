"""Dispatch nudges coalesce: at most one `webhooks.dispatch_due` waits in the queue per endpoint
(and one for all endpoints), however many changes commit meanwhile.

A writer that commits deliveries sends a nudge only when it sets the endpoint's flag in the cache
(`add`: atomic in Redis and in the embedded default's file cache); the task clears the flag as it
starts, before it reads what is due, so a change committed after that read sends the next
nudge. A flag whose nudge was lost (the broker or the worker down) lapses after NUDGE_SECONDS;
until then the beat tick (WEBHOOKS_DISPATCH_INTERVAL_SECONDS) finds the deliveries anyway. With
the cache down every change sends its nudge, as before.
"""

from __future__ import annotations

import logging
from uuid import UUID

from django.core.cache import cache

logger = logging.getLogger(__name__)

NUDGE_SECONDS = 30
# The flag of `webhooks.pass_next`: one next pass waits at most (webhooks/passes.py).
NEXT_PASS = "next-pass"


def nudge_key(webhook_id: UUID | str | None) -> str:
    return f"webhooks:nudge:{webhook_id or 'all'}"


def nudge_claim(webhook_id: UUID | str | None) -> bool:
    """True when no nudge for this endpoint (None: all) waits: the caller sends one."""
    try:
        return bool(cache.add(nudge_key(webhook_id), 1, timeout=NUDGE_SECONDS))
    except Exception as exc:  # the cache down: send it (the queue may hold a few more)
        logger.debug("nudge flag not set (%s); sending anyway", exc)
        return True


def nudge_clear(webhook_id: UUID | str | None) -> None:
    """The nudge for this endpoint (None: all) has started or was not sent: the next may go."""
    try:
        cache.delete(nudge_key(webhook_id))
    except Exception as exc:  # it lapses by itself
        logger.debug("nudge flag not cleared (%s)", exc)
