"""Reads and writes of one text column of a table by key, for work over every row of a column
(core.encryption: bringing a column under the current key, or undoing its encryption in a
migration going backwards). The table and column names are the model's (`Model._meta.db_table`,
a field's `column`), given by the caller, which may hold a migration's historical model.
The statements are the same on PostgreSQL and SQLite.
"""

from __future__ import annotations

from typing import Any


def column_values(
    connection: Any, *, table: str, pk: str, column: str, after: Any = None, limit: int | None = None
) -> list[tuple[Any, str]]:
    """(key, value) of the rows whose `column` is not empty, in key order: only keys past
    `after` (when given), at most `limit` (when given)."""
    quote = connection.ops.quote_name
    table, pk, column = quote(table), quote(pk), quote(column)
    sql = f"SELECT {pk}, {column} FROM {table} WHERE {column} <> ''"  # noqa: S608 (names from the model)
    params: list[Any] = []
    if after is not None:
        sql += f" AND {pk} > %s"
        params.append(after)
    sql += f" ORDER BY {pk}"
    if limit is not None:
        sql += " LIMIT %s"
        params.append(limit)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [(key, value) for key, value in cursor.fetchall()]


_ANY = object()


def column_set(connection: Any, *, table: str, pk: str, column: str, key: Any, value: str, was: Any = _ANY) -> int:
    """Write `value` into the row `key`'s `column` (only if it still holds `was`, when given):
    how many rows changed."""
    quote = connection.ops.quote_name
    table, pk, column = quote(table), quote(pk), quote(column)
    sql = f"UPDATE {table} SET {column} = %s WHERE {pk} = %s"  # noqa: S608 (names from the model)
    params = [value, key]
    if was is not _ANY:
        sql += f" AND {column} = %s"
        params.append(was)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return int(cursor.rowcount)
