"""Whole-row reads and inserts whose SQL is built once per process.

The ORM compiles a queryset into SQL on every call: for the draft's 40 columns that is about
0.4 ms of CPU, as much as running the statement. On the API's hot paths (the API key
look-up, reading a draft, the INSERTs of a creation) that compile was a fifth of a request.
`RowReader` and `RowInserter` build their statement from the model's fields on first use and
turn rows into instances the way the ORM does (the backend's and the fields' converters, then
`Model.from_db`), so they stay right on SQLite and PostgreSQL and follow model changes
without hand-written column lists. Only equality look-ups and plain INSERTs: anything else
stays an ordinary queryset.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar, cast

from django.db import connections, router
from django.db.models import Field, ForeignKey, IntegerField, Model

from core.sql.backend import backend
from core.sql.built import BuiltOnce, column_field, run
from core.sql.values import JSON, integer_form, jsonb, passed_as_is, row_json
from core.sql.writes import Refused, Written, rows_write


def _converters(field: Field[Any, Any], connection: Any, alias: str) -> list[Any]:
    column = field.get_col(alias)
    found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
    return [(converter, column) for converter in found]


class _Shape:
    """The columns of one model in a SELECT: where they start and how to read them."""

    def __init__(self, model: type[Model], connection: Any, start: int) -> None:
        self.model = model
        self.fields = list(model._meta.concrete_fields)
        self.table = model._meta.db_table
        self.start, self.stop = start, start + len(self.fields)
        self.names = [f.attname for f in self.fields]
        self.converters = [
            (index, found)
            for index, field in enumerate(self.fields)
            if (found := _converters(field, connection, self.table))
        ]
        quote = connection.ops.quote_name
        self.columns = [f"{quote(self.table)}.{quote(f.column)}" for f in self.fields]

    def instance(self, row: Sequence[Any], connection: Any) -> Model:
        values = list(row[self.start : self.stop])
        for index, converters in self.converters:
            value = values[index]
            for converter, column in converters:
                value = converter(value, column, connection)
            values[index] = value
        return self.model.from_db(connection.alias, self.names, values)


M = TypeVar("M", bound=Model)


class RowReader(BuiltOnce, Generic[M]):
    """Instances of `model` whose fields `by` equal the given values, optionally with the row
    of one forward foreign key `related` joined and cached on them (like select_related)."""

    def __init__(self, model: type[M], *, by: Sequence[str], related: str | None = None) -> None:
        super().__init__()
        self.model, self.by, self.related = model, tuple(by), related

    def _build(self, connection: Any) -> tuple[Any, ...]:
        quote = connection.ops.quote_name
        meta = self.model._meta
        shape = _Shape(self.model, connection, 0)
        shapes, joins = [shape], ""
        link = (
            cast("ForeignKey[Any, Any]", meta.get_field(self.related)) if self.related else None
        )  # a forward foreign key
        if link is not None:
            other = _Shape(link.related_model, connection, shape.stop)
            shapes.append(other)
            joins = (
                f" INNER JOIN {quote(other.table)} ON {quote(other.table)}.{quote(link.target_field.column)}"
                f" = {quote(shape.table)}.{quote(link.column)}"
            )
        fields = [column_field(self.model, name) if name != "pk" else meta.pk for name in self.by]
        where = " AND ".join(f"{quote(shape.table)}.{quote(f.column)} = %s" for f in fields)
        columns = ", ".join(c for s in shapes for c in s.columns)
        sql = f"SELECT {columns} FROM {quote(shape.table)}{joins} WHERE {where}"  # noqa: S608 (names from the model)
        return sql, fields, shapes, link

    def statement(self, connection: Any, values: Sequence[Any]) -> tuple[str, list[Any]]:
        sql, fields = self._built_for(connection)[:2]
        return sql, [field.get_db_prep_value(value, connection) for field, value in zip(fields, values, strict=True)]

    def within(
        self, connection: Any, values: Sequence[Any], *, after: str | None = None
    ) -> tuple[list[Any], str, list[Any]]:
        """For insert_then_fetch: the WITH queries this read adds (none) and its SELECT."""
        sql, params = self.statement(connection, values)
        return [], sql, params

    def fetch(self, *values: Any) -> list[M]:
        connection = connections[router.db_for_read(self.model)]
        sql, params = self.statement(connection, values)
        return self.instances(run(connection, sql, params), connection)

    def instances(self, rows: Sequence[Sequence[Any]], connection: Any) -> list[M]:
        _, _, shapes, link = self._built_for(connection)
        found = []
        for row in rows:
            instance = cast(M, shapes[0].instance(row, connection))  # the first shape is self.model's
            if link is not None:
                link.set_cached_value(instance, shapes[1].instance(row, connection))
            found.append(instance)
        return found

    def found_at(self, connection: Any, offset: int) -> int:
        """The column of the read model's primary key in a row whose first `offset` columns
        are something else (never NULL when the read found a row)."""
        shape = self._built_for(connection)[2][0]
        return int(offset + shape.start + shape.fields.index(self.model._meta.pk))

    def first(self, *values: Any) -> M | None:
        found = self.fetch(*values)
        return found[0] if found else None


class Select(BuiltOnce):
    """A SELECT of some columns (or aggregates of them) of `model`, filtered by `where`, built
    once per process. `where` holds (field, operator) pairs whose values each call gives in
    order, or (field, operator, value) triples fixed when built; operators are =, <>, >=, <=
    and "in" (a fixed tuple only). Fixed values that are plain words or integers (statuses,
    networks) are written into the SQL, so that PostgreSQL's plan of the prepared statement
    can use a partial index whose condition names them. `columns` name fields, or
    ("sum"|"min"|"max", field) and ("count", field) pairs. `having` keeps the one row of an
    aggregate read only when an aggregate compares with a value each call gives last:
    ((function, field), operator), a sum or count of no rows counting as 0. Rows come back
    as tuples, converted as the ORM converts that field.
    """

    AGGREGATES = {"sum": "SUM", "min": "MIN", "max": "MAX", "count": "COUNT"}
    OPERATORS = ("=", "<>", ">=", "<=", "in")

    def __init__(
        self,
        model: type[Model],
        *,
        columns: Sequence[Any],
        where: Sequence[tuple[Any, ...]],
        having: tuple[Any, ...] | None = None,
        limit: int | None = None,
    ) -> None:
        super().__init__()
        self.model, self.columns, self.where, self.limit = model, tuple(columns), tuple(where), limit
        self.having = having

    def _field(self, name: str) -> Any:  # a field of the model (or its key)
        meta = self.model._meta
        return meta.pk if name == "pk" else meta.get_field(name)

    def _build(self, connection: Any) -> tuple[Any, ...]:
        quote = connection.ops.quote_name
        table = self.model._meta.db_table

        def column(field: Field[Any, Any]) -> str:
            return f"{quote(table)}.{quote(field.column)}"

        selected, converters = [], []
        for entry in self.columns:
            function, name = entry if isinstance(entry, tuple) else (None, entry)
            field = self._field(name)
            if function is None:
                selected.append(column(field))
                converters.append(_converters(field, connection, table))
            else:
                selected.append(f"{self.AGGREGATES[function]}({column(field)})")
                converters.append([] if function == "count" else _converters(field, connection, table))
        clauses: list[str] = []
        fixed: list[Any] = []
        slots: list[Any] = []

        def fixed_value(field: Field[Any, Any], value: Any) -> str:
            # Written into the statement when plain, so that a prepared (generic) plan can still
            # use a partial index whose condition names these values; else bound like the rest.
            prepared = field.get_db_prep_value(value, connection)
            if isinstance(prepared, int) and not isinstance(prepared, bool):
                return str(int(prepared))
            if isinstance(prepared, str) and _PLAIN_LITERAL.fullmatch(text := str(prepared)):
                return f"'{text}'"
            fixed.append((len(slots), prepared))
            slots.append(None)
            return "%s"

        for condition in self.where:
            name, operator = condition[0], condition[1]
            if operator not in self.OPERATORS:
                raise ValueError(f"unsupported operator {operator!r}")
            field = self._field(name)
            if operator == "in":
                values = [fixed_value(field, value) for value in condition[2]]
                clauses.append(f"{column(field)} IN ({', '.join(values)})")
            elif len(condition) == 3:
                clauses.append(f"{column(field)} {operator} {fixed_value(field, condition[2])}")
            else:
                clauses.append(f"{column(field)} {operator} %s")
                slots.append(field)
        sql = f"SELECT {', '.join(selected)} FROM {quote(table)}"  # noqa: S608 (names from the model)
        if clauses:
            sql += " WHERE " + " AND ".join(clauses)
        if self.having is not None:
            (function, name), operator = self.having
            if operator not in ("=", "<>", ">=", "<="):
                raise ValueError(f"unsupported operator {operator!r}")
            field = self._field(name)
            aggregate = f"{self.AGGREGATES[function]}({column(field)})"
            if function in ("sum", "count"):
                aggregate = f"COALESCE({aggregate}, 0)"
            sql += f" HAVING {aggregate} {operator} %s"
            slots.append(_A_COUNT if function == "count" else field)
        if self.limit is not None:
            sql += f" LIMIT {int(self.limit)}"
        return sql, slots, dict(fixed), converters

    def statement(self, connection: Any, values: Sequence[Any]) -> tuple[str, list[Any]]:
        sql, slots, fixed = self._built_for(connection)[:3]
        given = iter(values)
        params = [
            fixed[i] if field is None else field.get_db_prep_value(next(given), connection)
            for i, field in enumerate(slots)
        ]
        if next(given, _END) is not _END:
            raise TypeError("too many values for this Select")
        return sql, params

    def rows(self, *values: Any) -> list[tuple[Any, ...]]:
        connection = connections[router.db_for_read(self.model)]
        sql, params = self.statement(connection, values)
        return self.converted(run(connection, sql, params), connection)

    def width(self, connection: Any) -> int:
        return len(self._built_for(connection)[3])

    def converted(self, found: Sequence[Sequence[Any]], connection: Any) -> list[tuple[Any, ...]]:
        converters = self._built_for(connection)[3]
        if not any(converters):
            return [tuple(row) for row in found]
        converted = []
        for row in found:
            values_out = list(row)
            for index, pairs in enumerate(converters):
                for converter, column in pairs:
                    values_out[index] = converter(values_out[index], column, connection)
            converted.append(tuple(values_out))
        return converted


def rows_together(*reads: tuple[Select, Sequence[Any]]) -> list[list[tuple[Any, ...]]]:
    """The rows of each (Select, values), as `Select.rows` gives them: on PostgreSQL in one
    round trip (the reads side by side, `FULL JOIN ... ON FALSE`, each row marked with the read
    it comes from), elsewhere one statement each."""
    connection = connections[router.db_for_read(reads[0][0].model)]
    if not backend(connection).one_statement_writes or len(reads) == 1:
        return [select.rows(*values) for select, values in reads]
    branches, params, starts = [], [], []
    start = 0
    for number, (select, values) in enumerate(reads):
        sql, read_params = select.statement(connection, values)
        branch = f"(SELECT 1 AS read_{number}, r.* FROM ({sql}) AS r) AS read_{number}"  # noqa: S608 (no input)
        branches.append(branch if number == 0 else f"FULL JOIN {branch} ON FALSE")
        params += read_params
        starts.append(start)
        start += 1 + select.width(connection)
    found = run(connection, f"SELECT * FROM {' '.join(branches)}", params)  # noqa: S608 (built above)
    results = []
    for (select, _), begin in zip(reads, starts, strict=True):
        stop = begin + 1 + select.width(connection)
        mine = [row[begin + 1 : stop] for row in found if row[begin] is not None]
        results.append(select.converted(mine, connection))
    return results


_END = object()
_A_COUNT = IntegerField()  # what a count compared in HAVING is bound as
_PLAIN_LITERAL = re.compile(r"[A-Za-z0-9_]{1,64}")  # enum values: no quote or % to escape


class RowInserter(BuiltOnce):
    """INSERT one instance of `model` with every concrete field (an auto-incremented primary
    key comes back from the database). `on_conflict` names the columns of a unique constraint:
    a row that already holds them is left alone and `insert` returns False. An auto_now or
    auto_now_add field keeps a time the caller gave the new instance (a new row's updated_at
    can be its created_at); left empty, it is now, as with the ORM.

    On PostgreSQL the row goes as one jsonb parameter, its columns read back by
    `jsonb_populate_record` (each value through its column type's own input, as a literal
    would be), so that a creation's statement (the draft's 53 columns, its event, the key's
    answer, the fan-out) stays within the 50 parameters for which psycopg keeps the
    statement's conversion: parsing it anew cost a quarter of a creation's instructions."""

    def __init__(self, model: type[Model], *, on_conflict: Sequence[str] = ()) -> None:
        super().__init__()
        self.model, self.on_conflict = model, tuple(on_conflict)

    def _build(self, connection: Any) -> tuple[Any, ...]:
        quote = connection.ops.quote_name
        meta = self.model._meta
        fields = [f for f in meta.concrete_fields if not (f.primary_key and getattr(f, "db_returning", False))]
        columns = ", ".join(quote(f.column) for f in fields)
        placeholders = ", ".join(["%s"] * len(fields))
        head = f"INSERT INTO {quote(meta.db_table)} ({columns})"  # noqa: S608 (names from the model)
        tail = ""
        if self.on_conflict:
            targets = ", ".join(quote(column_field(self.model, name).column) for name in self.on_conflict)
            tail += f" ON CONFLICT ({targets}) DO NOTHING"
        returning = bool(self.on_conflict) or len(fields) < len(meta.concrete_fields)
        if returning:
            tail += f" RETURNING {quote(meta.pk.column)}"
        json_row = backend(connection).json_rows
        if json_row:  # the row as one parameter, read as the table's row type
            row = f"jsonb_populate_record(NULL::{quote(meta.db_table)}, %s::jsonb) AS r"
            if len(fields) == len(meta.concrete_fields):  # every column, in the table's order
                head, names = f"INSERT INTO {quote(meta.db_table)}", "r.*"  # noqa: S608 (names from the model)
            else:  # the database numbers the key
                names = ", ".join(f"r.{quote(f.column)}" for f in fields)
            forms = (f"{head} SELECT {names} FROM {row}{tail}", f"{head} SELECT {names} FROM {row}, ", tail)  # noqa: S608
        else:
            forms = (f"{head} VALUES ({placeholders}){tail}", f"{head} SELECT {placeholders} FROM ", tail)  # noqa: S608
        stamped = [getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False) for field in fields]
        shapes = [
            (f, passed_as_is(f, connection), s, integer_form(f, connection))
            for f, s in zip(fields, stamped, strict=True)
        ]
        return forms, shapes, returning, [field.column for field in fields] if json_row else None

    def statement(self, connection: Any, instance: Model, *, after: str | None = None) -> tuple[str, list[Any], bool]:
        """The INSERT and its parameters. `after` names a WITH query (PostgreSQL): the row is
        then written only if that query gives a row (INSERT ... SELECT ... FROM it), which
        also makes it run first."""
        (plain, guarded, tail), _, returning, json_columns = self._built_for(connection)
        sql = plain if after is None else f"{guarded}{after}{tail}"
        values = self.values(connection, instance)
        if json_columns is not None:
            return sql, [row_json(json_columns, values)], returning
        return sql, values, returning

    def values(self, connection: Any, instance: Model) -> list[Any]:
        """The row's values, field by field, as Django prepares them for the database."""
        fields = self._built_for(connection)[1]
        params = []
        for field, plain_type, stamped, integer in fields:
            value = (
                getattr(instance, field.attname)
                if plain_type is not None or stamped
                else field.pre_save(instance, True)
            )
            if stamped and value is None:  # auto_now(_add) left empty: now, as the ORM would
                value = field.pre_save(instance, True)
            if plain_type is not None and (
                value is None
                or (type(value) is plain_type and (plain_type is not datetime or value.tzinfo is not None))
                or (plain_type is str and isinstance(value, str))  # a TextChoices member: to_python keeps any str
            ):
                params.append(value)  # what get_db_prep_save would give back unchanged
            elif plain_type is JSON and value is not None:
                params.append(jsonb(value))
            elif integer is not None and type(value) is int:
                params.append(integer(value))
            else:
                params.append(field.get_db_prep_save(value, connection))
        return params

    def insert(self, instance: Model) -> bool:
        connection = connections[router.db_for_write(self.model)]
        sql, params, returning = self.statement(connection, instance)
        rows = run(connection, sql, params, fetch=returning)
        if returning:
            if not rows:
                return False
            if instance.pk is None:
                instance.pk = rows[0][0]
        instance._state.adding, instance._state.db = False, connection.alias
        return True


def writes_in_one_statement(connection: Any) -> bool:
    """Whether insert_then_fetch writes its rows (and its reader's) in one statement."""
    return backend(connection).one_statement_writes


class WriteRefused(Exception):
    """insert_then_fetch wrote nothing: one of its `unless` reads found a row."""


class Reader(Protocol[M]):
    """What insert_then_fetch reads with: a RowReader, or a read that writes rows of its own."""

    @property
    def model(self) -> type[Model]: ...

    def fetch(self, *values: Any) -> list[M]: ...

    def within(
        self, connection: Any, values: Sequence[Any], *, after: str | None = None
    ) -> tuple[list[str], str, list[Any]]: ...

    def instances(self, rows: Sequence[Sequence[Any]], connection: Any) -> list[M]: ...

    def found_at(self, connection: Any, offset: int) -> int: ...


def insert_then_fetch(
    inserts: Sequence[tuple[RowInserter, Model]],
    reader: Reader[M],
    *values: Any,
    unless: Sequence[tuple[Select, Sequence[Any]]] = (),
) -> list[M]:
    """INSERT each (inserter, instance) in order, then read with `reader` (a RowReader, or
    anything with the same `fetch`, `within`, `instances` and `found_at`, such as a read that
    writes rows of its own), by the write its database does (core.sql.writes: on PostgreSQL
    one statement, all or nothing even outside a transaction; elsewhere one statement each, in
    the caller's transaction).

    A row its inserter's `on_conflict` refuses stops the rest: neither the rows after it nor
    the reader's own writes happen, and the read gives []; a row not written keeps its
    instance's `_state.adding` True (the caller decides what that means). `unless` holds reads
    (Select, values) that refuse the whole write when any of them finds a row: then nothing is
    written and WriteRefused is raised. A caller that would rather be told in the result calls
    `core.sql.writes.rows_write(connection)` itself (a creation: drafts.creation.draft_write)."""
    connection = connections[router.db_for_write(reader.model)]
    written = rows_write(connection)(connection, inserts, reader, *values, unless=unless)
    if isinstance(written, Refused):
        raise WriteRefused()
    return written.found if isinstance(written, Written) else []
