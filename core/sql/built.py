"""A statement built once per process and database vendor from the models' metadata, and run
through Django's cursor (core.sql.rows, core.sql.outbox, core.sql.fanout)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.db.models import Field, Model


def run(
    connection: Any, sql: str, params: Sequence[Any] | Mapping[str, Any], *, fetch: bool = True
) -> list[tuple[Any, ...]]:
    """Run one statement through Django's cursor and fetch its rows (`fetch=False`: one that
    returns none). It never asks the cursor whether there are rows (its `description`, which
    builds a Column for each column)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if fetch else []


def column_field(model: type[Model], name: str) -> Field[Any, Any]:
    """The field `name` of `model`, one with a column (not a reverse relation)."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{model.__name__}.{name} has no column")
    return field


class BuiltOnce:
    """A statement built on first use, once per process and database vendor."""

    def __init__(self) -> None:
        self._built: dict[str, tuple[Any, ...]] = {}

    def _build(self, connection: Any) -> tuple[Any, ...]:
        raise NotImplementedError

    def _built_for(self, connection: Any) -> tuple[Any, ...]:
        built = self._built.get(connection.vendor)
        if built is None:
            built = self._built[connection.vendor] = self._build(connection)
        return built
