"""Database connections that failed are closed, so the next use connects afresh."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError, connections

from core.sql.state import discardable_connections


def is_connection_error(exc: BaseException | None) -> bool:
    """A failure of the connection or the server (not of the query): lost, refused, closed."""
    return isinstance(exc, (OperationalError, InterfaceError))


def discard_broken_connections() -> None:
    """Close every connection of this thread that no longer answers (outside a transaction:
    one that is open is the caller's to end)."""
    for conn in discardable_connections():
        if not conn.is_usable():
            conn.close()


def database_answers(alias: str = "default") -> None:
    """Ask the database a trivial question; raises what the connection raises when it cannot."""
    with connections[alias].cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
