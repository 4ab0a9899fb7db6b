"""What the database under a connection can do in one statement, chosen once per database.

PostgreSQL runs data-modifying WITH queries, `FOR UPDATE ... SKIP LOCKED` and reads side by
side (`FULL JOIN ... ON FALSE`); SQLite (the embedded default) runs none of them. Every
difference of the hot paths between the two is one of these features, asked here rather than
of the vendor's name at each call:

- `one_statement_writes`: a creation's rows and reads in one statement
  (`core.sql.rows.insert_then_fetch`, `rows_together`); elsewhere one statement each, in the
  caller's transaction.
- `json_rows`: an INSERT's row sent as one jsonb parameter, read back by
  `jsonb_populate_record` (`core.sql.rows.RowInserter`); elsewhere a parameter per column.
- `leased_batches`: the outbox's statements (`core.sql.outbox`): a delivery lane leases due
  deliveries in batches and records a success in one statement; elsewhere one attempt at a
  time through the ORM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection as default_connection


@dataclass(frozen=True)
class Backend:
    one_statement_writes: bool
    json_rows: bool
    leased_batches: bool


_POSTGRESQL = Backend(one_statement_writes=True, json_rows=True, leased_batches=True)
_OTHER = Backend(one_statement_writes=False, json_rows=False, leased_batches=False)
_CHOSEN: dict[str, Backend] = {}


def backend(connection: Any = None) -> Backend:
    """The features of `connection`'s database (default: the default database's)."""
    connection = connection or default_connection
    chosen = _CHOSEN.get(connection.alias)
    if chosen is None:
        chosen = _CHOSEN[connection.alias] = _POSTGRESQL if connection.vendor == "postgresql" else _OTHER
    return chosen
