"""What a read replica (a PostgreSQL hot standby) and its primary say about WAL positions: the
primary's position after a write, the replica's replayed position and how far behind it is.

Read by core/replica.py, which decides where a list, export or chart is read."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.backends.base.base import BaseDatabaseWrapper


def lsn_number(text: str | None) -> int | None:
    """A PostgreSQL LSN ('16/B374D848') as one comparable number."""
    if not text:
        return None
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def wal_position(connection: BaseDatabaseWrapper) -> int | None:
    """Where the primary's WAL ends now: every write committed before this is at or below it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()::text")
        row = cursor.fetchone()
    return lsn_number(row[0] if row else None)


@dataclass(frozen=True)
class Standby:
    replaying: bool  # False: not a standby (promoted, or the primary itself): it is up to date
    replayed: int | None  # the last WAL position replayed
    lag_seconds: float  # 0 when everything received is replayed, else the age of the last replayed commit


# Everything received replayed: no lag, however long ago the last commit was (an idle primary).
STANDBY_STATE = """
SELECT pg_is_in_recovery(),
       pg_last_wal_replay_lsn()::text,
       CASE WHEN NOT pg_is_in_recovery() OR pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
            ELSE COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0)::float8 END
"""


def standby_state(connection: BaseDatabaseWrapper) -> Standby:
    with connection.cursor() as cursor:
        cursor.execute(STANDBY_STATE)
        replaying, replayed, lag = cursor.fetchone()
    return Standby(replaying=bool(replaying), replayed=lsn_number(replayed), lag_seconds=float(lag or 0))
