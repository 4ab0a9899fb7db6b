"""Rows of one model written for every matching row of another, inside the statement that
writes their source: on PostgreSQL one more data-modifying WITH of
`core.sql.rows.insert_then_fetch` (`INSERT INTO child ... SELECT ... FROM parent`), read back
as the parent rows that got one. Elsewhere insert_then_fetch asks the read's own `fetch`
(ORM statements, in the caller's transaction): that difference is insert_then_fetch's.

The statement is built once per database from the models' metadata: every column of the
child, its key a fresh UUID (the key must default to uuid.uuid4), its link to the parent the
parent's key, the fields named in `per_call` a value the call gives, and every other field its
default (the same for every row; a default computed per row is refused when built).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Generic

from django.db.models import Model

from core.sql.built import BuiltOnce, column_field
from core.sql.rows import M, RowReader
from core.sql.state import table

FANNED_OUT = "fanned_out"  # the WITH query's name: its rows are the child rows written


class FanOut(BuiltOnce, Generic[M]):
    """A `child` row for every row `parents` reads (a RowReader: equality on its `by` fields)
    whose JSON field `listing` lists the value a call names, or is no non-empty list (then the
    call says whether such a row wants it). `link` is the child's foreign key to the parent."""

    def __init__(
        self, child: type[Model], parents: RowReader[M], *, link: str, listing: str, per_call: Mapping[str, str]
    ) -> None:
        super().__init__()
        self.child, self.parents, self.link, self.listing = child, parents, link, listing
        self.per_call = dict(per_call)  # child field -> the name of the call's value it takes

    @property
    def model(self) -> type[Model]:
        return self.parents.model

    def _build(self, connection: Any) -> tuple[Any, ...]:
        quote = connection.ops.quote_name
        meta, parent = self.child._meta, self.parents.model
        if meta.pk is None or meta.pk.default is not uuid.uuid4:  # gen_random_uuid() stands for it below
            raise TypeError(f"{self.child.__name__}'s primary key must default to uuid.uuid4")
        source = table(parent, connection)
        parent_key = f"{source}.{quote(parent._meta.pk.column)}"
        columns: list[str] = []
        selected: list[str] = []
        given: list[str | tuple[Any]] = []  # the name of a call's value, or a fixed value
        for field in meta.concrete_fields:
            columns.append(quote(field.column))
            if field.primary_key:
                selected.append("gen_random_uuid()")
                continue
            if field.name == self.link:
                selected.append(parent_key)
                continue
            selected.append("%s")
            if field.name in self.per_call:
                given.append(self.per_call[field.name])
            elif field.has_default() and callable(field.default):  # a value per row: it needs a place here
                raise TypeError(f"{self.child.__name__}.{field.name}: a computed default the fan-out does not know")
            else:  # the field's default, the same for every row
                given.append((field.get_db_prep_save(field.get_default(), connection),))
        listing = f"{source}.{quote(column_field(parent, self.listing).column)}"
        lists = (
            f"(CASE WHEN jsonb_typeof({listing}) <> 'array' OR {listing} = '[]'::jsonb THEN %s"
            f" ELSE {listing} @> jsonb_build_array(%s::text) END)"
        )
        matching = " AND ".join(f"{source}.{quote(column_field(parent, name).column)} = %s" for name in self.parents.by)
        link = quote(column_field(self.child, self.link).column)
        insert = (
            f"INSERT INTO {table(self.child, connection)} ({', '.join(columns)}) SELECT {', '.join(selected)}"  # noqa: S608
            f" FROM {source}{{guard}} WHERE {matching} AND {lists} ON CONFLICT DO NOTHING RETURNING {link}"
        )
        reader_sql = self.parents.statement(connection, [None] * len(self.parents.by))[0]
        select = f"{reader_sql} AND {parent_key} IN (SELECT {link} FROM {FANNED_OUT})"  # noqa: S608 (names from the models)
        return insert, given, select

    def fanned_out(
        self,
        connection: Any,
        *,
        given: Mapping[str, Any],
        by: Sequence[Any],
        listed: str,
        when_unlisted: bool,
        after: str | None = None,
    ) -> tuple[list[str], str, list[Any]]:
        """For insert_then_fetch's `within`: the WITH query writing the rows and the read of the
        parents that got one. `given`: the call's values by name; `by`: the parents' `by` values;
        a parent wants a row when its listing names `listed`, or has none and `when_unlisted`."""
        insert, fields, select = self._built_for(connection)
        params = [given[value] if isinstance(value, str) else value[0] for value in fields]
        params += [*by, when_unlisted, listed, *by]
        written = f"{FANNED_OUT} AS ({insert.replace('{guard}', f', {after}' if after else '')})"
        return [written], select, params

    def instances(self, rows: Sequence[Sequence[Any]], connection: Any) -> list[M]:
        return self.parents.instances(rows, connection)

    def found_at(self, connection: Any, offset: int) -> int:
        return self.parents.found_at(connection, offset)
