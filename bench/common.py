"""What the benches under bench/ share: a free local port, the load-average line printed beside
their figures, and a database of their own on the server DATABASE_URL names."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def load_average() -> str:
    """Printed beside a bench's figures: those taken on a busy machine are not comparable."""
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"load average: {load} (figures on a busy machine are not comparable)"


@contextmanager
def own_database(name: str, *, keep: bool = False) -> Iterator[str]:
    """A fresh database `name` on DATABASE_URL's server for the bench's connection (Django's
    test-database machinery), dropped at the end unless `keep`; yields its name."""
    from django.db import connection

    connection.settings_dict.setdefault("TEST", {})["NAME"] = name
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    fresh = connection.settings_dict["NAME"]
    try:
        yield fresh
    finally:
        connection.close()
        connection.settings_dict["NAME"] = fresh
        if not keep:
            connection.creation.destroy_test_db(old_name, verbosity=0)
