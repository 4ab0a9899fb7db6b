"""Named leases with an expiry, in the database: one holder at a time, taken over once expired.

The active beat holds `beat` (core/beat.py) and renews it on every tick; a periodic task run
holds one for its own work (`scheduled.<task>(<args>)`, config/celery.py) while it runs, so a
duplicate send of the same work is skipped rather than run twice; the chain listener holds one
per watcher (chainwatch/listener.py). Every lease is short (LEASE_SECONDS, 10 s by default)
and renewed while its holder works (`LeaseKeeper`: a thread renewing every third of it), so a
holder killed with SIGKILL frees its work within one lease. A holder is named
`host:pid:random` (`holder_name`): a process starting on the same host clears the leases of
holders whose process is gone (`leases_clear_dead`), so a restart does not wait at all, nor
does a database restored from a backup that carries this host's old leases. Two plain statements, the
same on PostgreSQL and SQLite: renew-or-take-over an existing row (an UPDATE that matches only
if this holder has it or it has expired; PostgreSQL re-checks the condition after a competing
UPDATE commits, so only one of two wins), else create the row (INSERT ... ON CONFLICT DO
NOTHING, core.sql.rows.RowInserter). Times are the caller's clock in milliseconds: machines sharing a lease keep their
clocks in step (NTP) to well within a lease's length.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid

from django.conf import settings
from django.db import connection
from django.db.models import Q

from core.models import Lease
from core.sql.rows import RowInserter

_LEASE_INSERT = RowInserter(Lease, on_conflict=["name"])  # a lease someone else took meanwhile stays theirs

logger = logging.getLogger(__name__)


def _now_ms() -> int:
    return int(time.time() * 1000)


def lease_take(name: str, holder: str, seconds: float) -> bool:
    """Take or renew the lease `name` for `holder` for `seconds`; False while someone else holds it."""
    now = _now_ms()
    expires = now + int(seconds * 1000)
    mine_or_expired = Q(holder=holder) | Q(expires_ms__lte=now)
    if Lease.objects.filter(mine_or_expired, name=name).update(holder=holder, expires_ms=expires):
        return True
    return _LEASE_INSERT.insert(Lease(name=name, holder=holder, expires_ms=expires))


def lease_release(name: str, holder: str) -> None:
    """Give the lease up at once (only if `holder` still has it), so another may take it."""
    Lease.objects.filter(name=name, holder=holder).delete()


def lease_holder(name: str) -> str | None:
    """Who holds `name` now (None when nobody, or expired)."""
    return Lease.objects.filter(name=name, expires_ms__gt=_now_ms()).values_list("holder", flat=True).first()


def holder_name() -> str:
    """A new holder name of this process: `host:pid:random` (at most 64 characters)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _process_gone(holder: str, mine: frozenset[str]) -> bool:
    """Whether `holder` names a process of this host that no longer runs. A pid that is this
    process's own but a name it did not make is a former process's (pids repeat in containers)."""
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname()[:40] or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid == os.getpid():
        return holder not in mine
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # a live process of another user
        return False
    return False


def leases_clear_dead(*, mine: frozenset[str] = frozenset()) -> list[str]:
    """Drop the unexpired leases whose holder was a process of this host that is gone (killed,
    or named in a restored database); returns their names. Others expire by themselves. `mine`:
    holders this process made (besides those its lease keeper renews)."""
    mine = mine | keeper.holders()
    cleared = []
    for name, holder in Lease.objects.filter(expires_ms__gt=_now_ms()).values_list("name", "holder"):
        if _process_gone(holder, mine) and Lease.objects.filter(name=name, holder=holder).delete()[0]:
            cleared.append(name)
    if cleared:
        logger.info("leases of processes gone from this host cleared: %s", ", ".join(sorted(cleared)))
    return cleared


class LeaseKeeper:
    """Renews the leases this process holds, every third of their length, from a thread of
    its own (with its own database connection), while their holders work. One per process; a
    forked child starts its own on first use."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._renewing = threading.Lock()  # a lease dropped is never renewed after its drop
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._pid = 0

    def hold(self, name: str, holder: str, seconds: float) -> None:
        with self._lock:
            self._held[name] = (holder, seconds)
            if self._thread is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._pid = os.getpid()
                self._thread = threading.Thread(target=self._run, name="lease-keeper", daemon=True)
                self._thread.start()

    def holders(self) -> frozenset[str]:
        with self._lock:
            return frozenset(holder for holder, _ in self._held.values())

    def drop(self, name: str) -> None:
        with self._renewing, self._lock:
            self._held.pop(name, None)

    def _run(self) -> None:
        next_at: dict[str, float] = {}
        try:
            while True:
                with self._lock:
                    held = dict(self._held)
                if not held:  # nothing to renew: no connection kept open meanwhile
                    connection.close()
                now = time.monotonic()
                for name in list(next_at):
                    if name not in held:
                        del next_at[name]
                for name, (holder, seconds) in held.items():
                    due = next_at.setdefault(name, now + seconds / 3)
                    if due > now:
                        continue
                    next_at[name] = now + seconds / 3
                    try:
                        with self._renewing:
                            if self._held.get(name) != (holder, seconds):
                                continue
                            renewed = lease_take(name, holder, seconds)
                        if not renewed:
                            logger.warning("%s: the lease was taken over while %s still works", name, holder)
                    except Exception as exc:  # the database away: it expires unless renewed in time
                        logger.warning("%s: could not renew its lease: %s", name, exc)
                        connection.close()
                wait = min((t - time.monotonic() for t in next_at.values()), default=1.0)
                self._wake.wait(max(0.05, min(wait, 1.0)))
        finally:
            connection.close()


keeper = LeaseKeeper()


def lease_seconds() -> float:
    """How long a lease lasts unless renewed (LEASE_SECONDS)."""
    return float(settings.LEASE_SECONDS)
