"""Rows written together, then a read: one function per database, chosen once per database.

A creation writes several rows that stand or fall together (an Idempotency-Key's answer, the
draft, its event, the event's deliveries), guarded by reads that refuse the whole write when
one finds a row (the fee cap, an amount already billed). How depends only on the database:

- `write_together` (PostgreSQL, `one_statement_writes`): one statement of data-modifying WITH
  queries, the guarding reads before its first INSERT, the read at its end; all or nothing
  without a transaction, one round trip;
- `write_each` (elsewhere): one statement each, in the caller's transaction.

`rows_write(connection)` gives the one for a connection's database, chosen on its first use.
Each says what happened in its type: `Written` (every row, and what the read found),
`Refused` (a guarding read found a row: nothing written) or `Conflicted` (the row at `at`
was refused by its inserter's `on_conflict`: neither it nor any row after it was written).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from django.db.models import Model

from core.sql.backend import backend
from core.sql.built import run
from core.sql.state import mark_written

if TYPE_CHECKING:  # core.sql.rows imports this module
    from core.sql.rows import Reader, RowInserter, Select

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class Written(Generic[M]):
    """Every row was written; `found` is what the read gave."""

    found: list[M]


@dataclass(frozen=True)
class Refused:
    """A guarding read found a row: nothing was written."""


@dataclass(frozen=True)
class Conflicted:
    """The row at `at` already existed (its inserter's `on_conflict`): it and the rows after it
    were not written, and their instances stay unwritten (core.sql.state.unwritten)."""

    at: int


REFUSED = Refused()

Inserts = Sequence[tuple["RowInserter", Model]]
Guards = Sequence[tuple["Select", Sequence[Any]]]


class RowsWrite(Protocol):
    """`write_together` or `write_each`."""

    def __call__(
        self, connection: Any, inserts: Inserts, reader: Reader[M], *values: Any, unless: Guards = ()
    ) -> Written[M] | Refused | Conflicted: ...


def write_together(
    connection: Any, inserts: Inserts, reader: Reader[M], *values: Any, unless: Guards = ()
) -> Written[M] | Refused | Conflicted:
    """PostgreSQL: INSERT each (inserter, instance) in order, then read with `reader`, in one
    statement (each INSERT a data-modifying WITH; foreign keys are checked at its end, or at
    commit). `unless` reads are checked before the first INSERT, in the same snapshot: the
    rows are written `INSERT ... SELECT ... FROM` a row that exists only when none of them
    finds one. Each row after a refusable one (`on_conflict`) is written `INSERT ... SELECT
    ... FROM` it, which also orders them. An auto-incremented key comes back onto its instance."""
    parts: list[str] = []
    params: list[Any] = []
    returned: list[tuple[str, Model | None]] = []
    guard = None  # the last refusable INSERT so far: the rows after it need its row
    if unless:  # one row when no refusing read finds any: every INSERT below needs it
        refusals = []
        for select, read_values in unless:
            sql, read_params = select.statement(connection, read_values)
            refusals.append(f"NOT EXISTS ({sql})")
            params += read_params
        parts.append(f"allowed AS (SELECT 1 WHERE {' AND '.join(refusals)})")  # noqa: S608 (no input)
        returned.append(("(SELECT COUNT(*) FROM allowed)", None))
        guard = "allowed"
    for number, (inserter, instance) in enumerate(inserts):
        name = f"inserted_{number}"
        sql, insert_params, returning = inserter.statement(connection, instance, after=guard)
        parts.append(f"{name} AS ({sql})")
        params += insert_params
        if returning:  # its key, or NULL when not written, read in the same statement
            returned.append((f"(SELECT * FROM {name})", instance))  # noqa: S608 (no input)
        if inserter.on_conflict:
            guard = name
    ctes, select_sql, select_params = reader.within(connection, values, after=guard)
    if returned:  # one row at least, whether or not the read finds any
        keys = ", ".join(column for column, _ in returned)
        select_sql = f"SELECT {keys}, fetched.* FROM (SELECT 1) AS one LEFT JOIN ({select_sql}) AS fetched ON TRUE"  # noqa: S608
    rows = run(connection, f"WITH {', '.join(parts + ctes)} {select_sql}", params + select_params)
    written = len(inserts)
    if unless and not rows[0][0]:
        return REFUSED
    if returned:
        got = {id(instance): key for (_, instance), key in zip(returned, rows[0], strict=False) if instance}
        for index, (_, instance) in enumerate(inserts):
            if id(instance) not in got:
                continue
            if got[id(instance)] is None:  # refused, or after a refused row
                written = min(written, index)
            elif instance.pk is None:
                instance.pk = got[id(instance)]
        found = reader.found_at(connection, len(returned))
        rows = [row[len(returned) :] for row in rows if row[found] is not None]
    for _, instance in inserts[:written]:
        mark_written(instance, connection.alias)
    if written < len(inserts):
        return Conflicted(at=written)
    return Written(reader.instances(rows, connection))


def write_each(
    connection: Any, inserts: Inserts, reader: Reader[M], *values: Any, unless: Guards = ()
) -> Written[M] | Refused | Conflicted:
    """Elsewhere: the `unless` reads, then one INSERT each (stopping at a refused one), then the
    read's own `fetch`, one statement each in the caller's transaction."""
    if any(select.rows(*read_values) for select, read_values in unless):
        return REFUSED
    for index, (inserter, instance) in enumerate(inserts):
        if not inserter.insert(instance):
            return Conflicted(at=index)
    return Written(reader.fetch(*values))


_CHOSEN: dict[str, RowsWrite] = {}


def rows_write(connection: Any) -> RowsWrite:
    """The write of rows together for `connection`'s database, chosen on its first use."""
    chosen = _CHOSEN.get(connection.alias)
    if chosen is None:
        chosen = _CHOSEN[connection.alias] = write_together if backend(connection).one_statement_writes else write_each
    return chosen
