"""The optional read replica's database alias (DATABASE_REPLICA_URL; core/replica.py uses it)."""

from __future__ import annotations

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from core.env import env_int


def replica_database(url: str, primary: dj_database_url.DBConfig) -> dj_database_url.DBConfig:
    """The `replica` alias: the primary's options, a short connect time-out. Refuses a replica
    of SQLite, or one that is not PostgreSQL."""
    if primary["ENGINE"] == "django.db.backends.sqlite3":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL (it is its replica)")
    replica = dj_database_url.parse(url, conn_max_age=primary["CONN_MAX_AGE"], conn_health_checks=True)
    if replica["ENGINE"] != primary["ENGINE"]:
        raise ImproperlyConfigured("DATABASE_REPLICA_URL must be a postgres:// URL (a replica of DATABASE_URL)")
    # A replica that does not answer is passed over after this many seconds, not waited for.
    timeout = env_int("DATABASE_REPLICA_CONNECT_TIMEOUT", 2, minimum=1)
    replica["OPTIONS"] = {**primary.get("OPTIONS", {}), "connect_timeout": timeout}
    # Tests read the replica's alias through the primary's connection unless they start their own.
    replica["TEST"] = {"MIRROR": "default"}
    return replica
