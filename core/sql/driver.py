"""The psycopg settings the statements of core.sql.rows rely on, applied once at start
(core.apps.CoreConfig.ready)."""

from __future__ import annotations

# psycopg turns a statement's %s placeholders into $1, $2... once and caches the result, but
# only for statements of at most 50 parameters: a guard against ORM bulk INSERTs whose size
# varies with every call. The statements core.sql.rows builds never vary, and a creation's one statement
# (draft, event, idempotency record and the owner's webhooks) has 65: parsing it anew took 8%
# of the instructions of a whole creation. So the bound covers them; the cache stays small
# (at most 128 entries of at most 256 parameters and 4 kB).
# tests/drafts/test_statement_parsing.py fails if a psycopg upgrade drops the bound.
CONVERSION_CACHE_MAX_PARAMS = 256


def driver_tune() -> None:
    try:
        from psycopg import _queries as _psycopg_queries
    except ImportError:  # SQLite only
        return
    _psycopg_queries.MAX_CACHED_STATEMENT_PARAMS = max(
        _psycopg_queries.MAX_CACHED_STATEMENT_PARAMS, CONVERSION_CACHE_MAX_PARAMS
    )
