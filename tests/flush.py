"""Emptying the database after a test that commits (transactional_db, live_server,
django_db(transaction=True)) by DELETE in one transaction instead of Django's flush.

Django's flush TRUNCATEs every table, which on PostgreSQL makes new files for each of them,
and then the post_migrate signal writes the content types and permissions back: about two
seconds of the server's time after each such test, most of a transactional test's cost.
The tables of a test are small, so DELETE is far cheaper; content types and permissions are
kept as the migrations left them, so nothing has to be written back. Anything else (SQLite,
available_apps, serialized_rollback) gets Django's own flush.
"""

from __future__ import annotations

from django.db import connections, transaction
from django.test import TransactionTestCase

KEPT = {"django_content_type", "auth_permission", "django_migrations"}
_django_fixture_teardown = TransactionTestCase._fixture_teardown


def _fixture_teardown(self) -> None:
    if self.available_apps is not None or self.serialized_rollback:
        return _django_fixture_teardown(self)
    for alias in self._databases_names(include_mirrors=False):
        connection = connections[alias]
        if connection.vendor != "postgresql":
            return _django_fixture_teardown(self)
    for alias in self._databases_names(include_mirrors=False):
        connection = connections[alias]
        tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
        with transaction.atomic(using=alias), connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")  # rows referring to each other go in any order
            for table in sorted(set(tables) - KEPT):
                cursor.execute(f"DELETE FROM {connection.ops.quote_name(table)}")
    return None


def install() -> None:
    TransactionTestCase._fixture_teardown = _fixture_teardown
