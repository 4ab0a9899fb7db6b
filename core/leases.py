"""Named leases with an expiry, in the database: one holder at a time, taken over once expired.

The active beat holds `beat` (core/beat.py) and renews it on every tick; a periodic task run
holds one for its own work (`scheduled.<task>(<args>)`, config/celery.py) while it runs, so a
duplicate send of the same work is skipped rather than run twice. Two plain statements, the
same on PostgreSQL and SQLite: renew-or-take-over an existing row (an UPDATE that matches only
if this holder has it or it has expired; PostgreSQL re-checks the condition after a competing
UPDATE commits, so only one of two wins), else create the row (INSERT ... ON CONFLICT DO
NOTHING). Times are the caller's clock in milliseconds: machines sharing a lease keep their
clocks in step (NTP) to well within a lease's length.
"""

from __future__ import annotations

import time

from django.db import connection
from django.db.models import Q

from core.models import Lease


def _now_ms() -> int:
    return int(time.time() * 1000)


def lease_take(name: str, holder: str, seconds: float) -> bool:
    """Take or renew the lease `name` for `holder` for `seconds`; False while someone else holds it."""
    now = _now_ms()
    expires = now + int(seconds * 1000)
    mine_or_expired = Q(holder=holder) | Q(expires_ms__lte=now)
    if Lease.objects.filter(mine_or_expired, name=name).update(holder=holder, expires_ms=expires):
        return True
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO config_lease (name, holder, expires_ms) VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING",
            [name, holder, expires],
        )
        return cursor.rowcount == 1


def lease_release(name: str, holder: str) -> None:
    """Give the lease up at once (only if `holder` still has it), so another may take it."""
    Lease.objects.filter(name=name, holder=holder).delete()


def lease_holder(name: str) -> str | None:
    """Who holds `name` now (None when nobody, or expired)."""
    return Lease.objects.filter(name=name, expires_ms__gt=_now_ms()).values_list("holder", flat=True).first()
