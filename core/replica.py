"""The optional read replica (DATABASE_REPLICA_URL): which reads it serves, and when it may.

Only the reads of lists, exports and charts go there, each chosen at its call site by
`replica_read(read)` (core.api.pagination.page_of for every API list; the dashboard's lists,
CSV exports and chart): `ReplicaRouter` sends a read to the `replica` alias only while such a
call runs and no transaction is open, and every write to the primary. Everything else (the
state machine, matching, creation, a read inside a transaction) reads the primary.

Read-your-writes: after a request that may have written (any method but GET, HEAD, OPTIONS,
TRACE), `ReplicaCallerMiddleware` (an MCP tool call: `calls_of` in mcp_server.server.execute)
keeps the primary's WAL position for its caller (the API key, or the dashboard session) in the
cache; that caller's reads go to the replica again only once
the replica has replayed past that position. A replica that does not answer (passed over for
RETRY_SECONDS), lags more than DATABASE_REPLICA_MAX_LAG_SECONDS, or fails during the read is
passed over for the primary: logged and counted (`database_replica_reads`), never an error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import MiddlewareNotUsed
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import Counter

from core.sql.dbconn import is_connection_error
from core.sql.replica import standby_state, wal_position
from core.sql.state import in_transaction

log = logging.getLogger(__name__)

REPLICA = "replica"
# A replica that did not answer is not asked again for this long (each process on its own).
RETRY_SECONDS = 5
# A caller's last write position is kept this long; the replica has replayed it long before.
WROTE_KEPT_SECONDS = 300
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

replica_reads = Counter(
    "database_replica_reads",
    "Reads of lists, exports and charts that could go to the read replica, by the database that "
    "served them and why (replica; or primary: replica_down, replica_lagging, own_write, read_failed)",
    ["database", "reason"],
)

T = TypeVar("T")

_reading: ContextVar[bool] = ContextVar("replica_reading", default=False)
_caller: ContextVar[Callable[[], str | None] | None] = ContextVar("replica_caller", default=None)
_passed_over_until = 0.0
_last_reason = "replica"


def configured() -> bool:
    return REPLICA in settings.DATABASES


class ReplicaRouter:
    """Reads in `replica_read` outside a transaction: the replica. Everything else: the primary."""

    def db_for_read(self, model: Any, **hints: Any) -> str:
        if _reading.get() and not in_transaction():
            return REPLICA
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model: Any, **hints: Any) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database, two copies of it

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == DEFAULT_DB_ALIAS


def replica_read(read: Callable[[], T]) -> T:
    """`read()` on the replica when it may serve this caller now, else on the primary. `read`
    evaluates its querysets (a list, not a lazy queryset): what it leaves lazy is read later on
    the primary. A replica that fails during the read: the read runs again on the primary."""
    if not _replica_serves():
        return read()
    token = _reading.set(True)
    try:
        return read()
    except DatabaseError as exc:
        if not is_connection_error(exc):
            raise
        _pass_over("read_failed", exc)
    finally:
        _reading.reset(token)
    return read()


def read_alias() -> str:
    """The database a long read streamed after this call (a CSV export) should use: the
    replica when it may serve this caller now, else the primary. Unlike `replica_read`, a
    replica failing later fails that read (the download ends early) rather than repeating it."""
    return REPLICA if _replica_serves() else DEFAULT_DB_ALIAS


def _replica_serves() -> bool:
    if not configured() or in_transaction():
        return False
    if time.monotonic() < _passed_over_until:
        replica_reads.labels("primary", "replica_down").inc()
        return False
    wanted = _caller_wrote()
    try:
        standby = standby_state(connections[REPLICA])
    except DatabaseError as exc:
        if not is_connection_error(exc):
            raise
        _pass_over("replica_down", exc)
        return False
    if standby.lag_seconds > settings.DATABASE_REPLICA_MAX_LAG_SECONDS:
        _count("replica_lagging", f"{standby.lag_seconds:.1f} s behind the primary")
        return False
    if standby.replaying and wanted is not None and (standby.replayed is None or standby.replayed < wanted):
        replica_reads.labels("primary", "own_write").inc()  # each caller's own moment: not logged
        return False
    _count("replica", "")
    return True


def _pass_over(reason: str, exc: BaseException) -> None:
    global _passed_over_until
    _passed_over_until = time.monotonic() + RETRY_SECONDS
    connections[REPLICA].close()
    _count(reason, f"{type(exc).__name__}: {exc}".strip())


def _count(reason: str, detail: str) -> None:
    global _last_reason
    replica_reads.labels(REPLICA if reason == REPLICA else "primary", reason).inc()
    if reason != _last_reason:  # a change is logged, not every read
        if reason == REPLICA:
            log.info("read replica serving lists, exports and charts again")
        else:
            log.warning("read replica passed over, reading the primary (%s): %s", reason, detail)
        _last_reason = reason


def key_caller(api_key_id: object) -> str:
    """The caller an API key is, on REST and MCP alike."""
    return f"key:{api_key_id}"


def _caller_of(request: HttpRequest) -> str | None:
    api_key = getattr(request, "auth", None)
    if api_key is not None and getattr(api_key, "pk", None) is not None:
        return key_caller(api_key.pk)
    session = getattr(request, "session", None)
    session_key = getattr(session, "session_key", None) if session is not None else None
    return f"session:{session_key}" if session_key else None


@contextmanager
def calls_of(caller: Callable[[], str | None], *, writes: bool) -> Iterator[None]:
    """The reads in the block are `caller()`'s (asked when a read needs it: an API key is known
    only once the view authenticated it); a block that `writes` keeps the primary's WAL position
    for that caller when it ends, so the caller reads its own writes."""
    token = _caller.set(caller)
    try:
        yield
    finally:
        _caller.reset(token)
        if writes and configured():
            _remember_write(caller())


def _caller_wrote() -> int | None:
    """The primary's WAL position after this caller's last write; past any position (the
    primary for this read) when the cache does not answer."""
    caller = _caller.get()
    who = caller() if caller is not None else None
    if who is None:
        return None
    key = f"replica:wrote:{who}"
    try:
        wrote = cache.get(key)
    except Exception as exc:  # the cache down: this caller may have written, read the primary
        log.warning("read replica: the cache did not answer (%s), reading the primary", exc)
        return 1 << 64
    return None if wrote is None else int(wrote)


class ReplicaCallerMiddleware:
    """Knows the caller of the request's reads, and keeps a writing caller's WAL position."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        if not configured():
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with calls_of(lambda: _caller_of(request), writes=request.method not in SAFE_METHODS):
            return self.get_response(request)


def _remember_write(who: str | None) -> None:
    if who is None:
        return
    try:
        position = wal_position(connections[DEFAULT_DB_ALIAS])
        cache.set(f"replica:wrote:{who}", position, WROTE_KEPT_SECONDS)
    except Exception as exc:  # the response stands; the caller may read the replica before its write
        log.warning("read replica: could not keep a caller's write position (%s)", exc)
