"""psycopg's adapters for the project's values, registered once at start
(core.apps.CoreConfig.ready) through psycopg's public adapters map."""

from __future__ import annotations


def driver_tune() -> None:
    try:
        import psycopg  # noqa: F401
    except ImportError:  # SQLite only
        return
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
