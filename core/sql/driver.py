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
    _text_choices_dump_as_str()


def _text_choices_dump_as_str() -> None:
    """Our TextChoices values (statuses, networks, currencies...) go to psycopg as themselves, a
    `str` subclass. psycopg finds their dumper by walking the class's MRO up to `str`, and keeps
    what it found only for the cursor at hand, so each new cursor walked it again for every
    such class (11 walks a creation, each raising and catching a few KeyErrors). Registered
    once here with `str`'s own dumpers for every format, the same ones are found at once.
    Before any connection: Django's adapters template copies the global map on first connect.
    tests/platform/test_rows.py checks each class gets `str`'s dumpers."""
    from django.db.models import TextChoices
    from psycopg import adapters
    from psycopg.adapt import PyFormat

    dumpers = [adapters.get_dumper(str, f) for f in (PyFormat.BINARY, PyFormat.TEXT, PyFormat.AUTO)]
    pending = list(TextChoices.__subclasses__())
    while pending:
        choices = pending.pop()
        pending.extend(choices.__subclasses__())
        for dumper in dumpers:  # AUTO last: registering a dumper also makes it the class's AUTO one
            adapters.register_dumper(choices, dumper)
