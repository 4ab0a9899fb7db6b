"""Run a function in several real threads at once, each with its own database connection."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from django.db import connection

T = TypeVar("T")


def run_at_once(count: int, work: Callable[[], T], *, timeout: float = 60) -> list[T]:
    """Start `count` threads that call `work` together (after a barrier); return their results.
    An exception in any thread is raised here, after all have finished."""
    barrier = threading.Barrier(count)
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait()
            results.append(work())
        except BaseException as exc:  # re-raised in the test's thread below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    if errors:
        raise errors[0]
    return results
