"""How the primary database's connections are made: SQLite for several writers at once, or
PostgreSQL through a pooler in transaction mode, or with server-side binding (settings in
docs/settings.md)."""

from __future__ import annotations

import dj_database_url

from core.env import env_bool, env_int


def primary_tuned(primary: dj_database_url.DBConfig, *, pooler: bool) -> None:
    """Set the primary alias's OPTIONS for its engine (DATABASE_TRANSACTION_POOLER: `pooler`)."""
    if primary["ENGINE"] == "django.db.backends.sqlite3":
        # Several gunicorn workers and Celery write at once: WAL lets readers run beside the writer,
        # IMMEDIATE takes the write lock when a transaction starts (no deadlocking lock upgrade), and
        # the timeout makes a writer wait for the lock instead of failing with "database is locked".
        primary.setdefault("OPTIONS", {}).update(
            {
                "transaction_mode": "IMMEDIATE",
                "timeout": env_int("SQLITE_TIMEOUT_SECONDS", 20, minimum=1),
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            }
        )
    elif pooler:
        # Reached through a pooler in transaction mode (PgBouncer pool_mode=transaction): each
        # transaction may run on another server connection, so nothing may outlive one. Parameters
        # are bound in the client (no server-side prepared statements) and querysets are not read
        # through server-side cursors (Django's DISABLE_SERVER_SIDE_CURSORS); the service sets no
        # session state (SET, advisory locks) that would need the same server connection. The pay
        # page's LISTEN needs one: it goes to LIVE_LISTEN_DATABASE_URL, or waiters poll (core/sql/notify.py).
        primary.setdefault("OPTIONS", {}).update({"server_side_binding": False, "prepare_threshold": None})
        primary["DISABLE_SERVER_SIDE_CURSORS"] = True
    elif env_bool("DATABASE_SERVER_SIDE_BINDING", True):
        # psycopg 3 sends parameters apart from the SQL and prepares a statement on the server
        # once a connection has run it `prepare_threshold` times: the hot statements (key look-up,
        # draft INSERT and SELECT) are parsed and planned once per connection, not per request.
        primary.setdefault("OPTIONS", {}).update({"server_side_binding": True, "prepare_threshold": 5})
