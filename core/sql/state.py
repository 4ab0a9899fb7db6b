"""What the rest of the code may ask of Django's private state of rows and connections.

Django keeps these as private attributes (`Model._state`, a connection's `run_on_commit` list
and `in_atomic_block`); they are read here only, so a Django upgrade that changes them breaks
one module. `tests/platform/test_architecture.py` refuses those names anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from django.db import connections, models, transaction


def unwritten(instance: models.Model) -> bool:
    """The instance has no row yet: never saved, or its INSERT was refused (`ON CONFLICT DO
    NOTHING`, or a statement that stopped before it: core.sql.rows.insert_then_fetch)."""
    return instance._state.adding


def mark_written(instance: models.Model, using: str) -> None:
    """The instance's row is in the database `using` (it was inserted without `save()`)."""
    instance._state.adding, instance._state.db = False, using


def in_transaction(using: str | None = None) -> bool:
    """A transaction (or savepoint) is open on the connection."""
    return bool(transaction.get_connection(using).in_atomic_block)


def on_commit_once(key: Hashable, func: Callable[[], None], using: str | None = None) -> None:
    """`transaction.on_commit(func)` unless a callback of the same key already waits on this
    transaction (a batch of changes needs one send)."""
    connection = transaction.get_connection(using)
    if any(getattr(waiting, "on_commit_key", None) == key for _, waiting, _ in connection.run_on_commit):
        return
    func.on_commit_key = key  # type: ignore[attr-defined]
    transaction.on_commit(func, using=using)


def discardable_connections() -> list[Any]:
    """This thread's opened connections that are outside a transaction (one that is open is
    the caller's to end)."""
    return [c for c in connections.all(initialized_only=True) if c.connection is not None and not c.in_atomic_block]


def table(model: type[models.Model], connection: Any) -> str:
    """The model's table name, quoted for the connection's SQL."""
    return str(connection.ops.quote_name(model._meta.db_table))


def table_name(model: type[models.Model]) -> str:
    """The model's table name as the database knows it (for messages and raw SQL helpers)."""
    return model._meta.db_table
