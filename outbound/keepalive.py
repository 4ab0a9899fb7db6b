"""Kept-alive connections, per process, each pinned to the address it was checked at.

After an answer read to its end, a connection the server keeps open waits here for the
next request to the same scheme, host name, port and CA bundle. Its peer cannot change, so
reusing it needs no DNS lookup; the request still passes every check of the URL, and the
pinned address is checked against the policy again. A connection idle for IDLE_SECONDS
(before most servers close theirs) or checked more than PIN_SECONDS ago is closed instead,
so the next request resolves and checks the host anew and a DNS change is followed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import urllib3.connection

from outbound.guard import IPAddress

IDLE_SECONDS = 4.0
PIN_SECONDS = 30.0
MAX_IDLE = 64


class Key(NamedTuple):
    scheme: str
    hostname: str
    port: int
    ca_bundle: str


@dataclass
class Kept:
    connection: urllib3.connection.HTTPConnection
    address: IPAddress
    checked_at: float  # time.monotonic() when the address was resolved and checked
    idle_since: float = 0.0
    reused: bool = False

    def expired(self, now: float) -> bool:
        return now - self.idle_since >= IDLE_SECONDS or now - self.checked_at >= PIN_SECONDS


_lock = threading.Lock()
_idle: dict[Key, list[Kept]] = {}


def take(key: Key, *, allowed: Callable[[IPAddress], bool]) -> Kept | None:
    """A live idle connection for `key` whose address `allowed` still admits, or None."""
    now = time.monotonic()
    with _lock:
        kept = _idle.get(key, [])
        while kept:
            candidate = kept.pop()  # the most recently used
            # is_connected: the server has not closed it (nothing to read on an idle connection)
            if not candidate.expired(now) and allowed(candidate.address) and candidate.connection.is_connected:
                candidate.reused = True
                return candidate
            candidate.connection.close()
    return None


def put(key: Key, kept: Kept) -> None:
    """Keep a connection whose exchange ended cleanly for the next request to `key`."""
    kept.idle_since = now = time.monotonic()
    with _lock:
        for entries in _idle.values():
            for stale in [entry for entry in entries if entry.expired(now)]:
                entries.remove(stale)
                stale.connection.close()
        _idle.setdefault(key, []).append(kept)
        while sum(len(entries) for entries in _idle.values()) > MAX_IDLE:
            oldest = min((entries for entries in _idle.values() if entries), key=lambda entries: entries[0].idle_since)
            oldest.pop(0).connection.close()


def close_all() -> None:
    with _lock:
        for entries in _idle.values():
            for entry in entries:
                entry.connection.close()
        _idle.clear()


def _forget_after_fork() -> None:
    # A forked child must not share the parent's sockets; dropping them closes nothing the parent uses.
    global _lock
    _lock = threading.Lock()
    _idle.clear()


os.register_at_fork(after_in_child=_forget_after_fork)
