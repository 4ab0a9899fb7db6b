"""Cache backends: Django's Redis cache reusing one client per connection pool, and a
process-safe file cache for the embedded default.

Redis:

Django builds a new redis.Redis object for every cache call; construction alone cost
about 0.1 ms each, several times per API request (rate limits, rate tables). redis-py
clients are thread-safe and share the pool, so one per pool is enough.

Window counters (rate limits): `window_count` and its batched forms count in Redis, and while
Redis does not answer, in this process's memory (`LocalWindows`), so a cache outage refuses no
request for itself (docs/operations.md, "When Redis is down").
"""

from __future__ import annotations

import fcntl
import logging
import os
import pickle
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core.metrics import rate_limit_local_counting, rate_limit_local_counts

logger = logging.getLogger(__name__)


class PooledRedisCacheClient(RedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Redis] = {}

    def get_client(self, key: str | bytes | memoryview | None = None, *, write: bool = False) -> Redis:
        # Django's RedisCacheClient members below are private, so its stubs leave them out.
        index = self._get_connection_pool_index(write)  # type: ignore[attr-defined]
        client = self._clients.get(index)
        if client is None:
            pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
            client = self._clients[index] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class PooledRedisCache(RedisCache):
    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient


class LockedFileCache(FileBasedCache):
    """Django's file cache with add() and incr() made atomic across processes by a file lock.

    The embedded default (no CACHE_URL) runs several gunicorn workers and Celery processes on
    one machine: they must share rate-limit counters, and an unlocked read-modify-write would
    lose increments made at the same moment.
    """

    @contextmanager
    def _locked(self) -> Iterator[None]:
        folder = self._dir  # type: ignore[attr-defined]  # Django's FileBasedCache's own folder (private, not in its stubs)
        os.makedirs(folder, 0o700, exist_ok=True)
        with open(os.path.join(folder, ".lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        with self._locked():
            return super().add(key, value, timeout, version)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        """Add delta and keep the key's expiry (Django's generic incr resets it to the default)."""
        with self._locked():
            fname = self._key_to_file(key, version)  # type: ignore[attr-defined]  # FileBasedCache's (private)
            try:
                with open(fname, "rb") as f:  # our own cache files, written by set() below
                    expiry = pickle.load(f)  # noqa: S301
                    value: int = pickle.loads(zlib.decompress(f.read()))  # noqa: S301
            except (FileNotFoundError, EOFError):
                raise ValueError(f"Key '{key}' not found") from None
            if expiry is not None and expiry < time.time():
                self._delete(fname)  # type: ignore[attr-defined]  # FileBasedCache's (private)
                raise ValueError(f"Key '{key}' not found")
            value += delta
            self.set(key, value, None if expiry is None else max(expiry - time.time(), 0.001), version)
            return value


class LocalWindows:
    """Window counters of this process alone, counted while the shared cache does not answer.

    Each count weighs `settings.RATE_LIMIT_LOCAL_WEIGHT` (the number of processes that serve
    requests): the callers compare it with the shared limit unchanged, so each process lets
    through about its share of it, and all of them together about the shared limit."""

    MAX_KEYS = 50_000  # past this, expired windows are dropped (each lives one window)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, float]] = {}

    def count(self, key: str, *, timeout: int) -> int:
        weight = max(int(getattr(settings, "RATE_LIMIT_LOCAL_WEIGHT", 1)), 1)
        now = time.monotonic()
        with self._lock:
            if len(self._counts) >= self.MAX_KEYS:
                self._counts = {k: v for k, v in self._counts.items() if v[1] > now}
            count, expires = self._counts.get(key, (0, 0.0))
            count = (count if expires > now else 0) + weight
            self._counts[key] = (count, now + timeout)
        rate_limit_local_counts.inc()
        return count

    def get(self, key: str) -> int | None:
        with self._lock:
            count, expires = self._counts.get(key, (0, 0.0))
        return count if expires > time.monotonic() else None

    def clear(self) -> None:
        with self._lock:
            self._counts.clear()


local_windows = LocalWindows()


class SharedCounting:
    """Whether this process counts rate limits in the shared cache or, while it does not answer,
    in `local_windows`. After a failure the cache is asked again only after
    RATE_LIMIT_CACHE_RETRY_SECONDS, so an outage costs one failed round trip per process per
    interval, not one per request."""

    def __init__(self) -> None:
        self.down_since: float | None = None  # wall-clock time of the first failure of this outage
        self._retry_at = 0.0

    def usable(self) -> bool:
        return self.down_since is None or time.monotonic() >= self._retry_at

    def failed(self, exc: BaseException) -> None:
        self._retry_at = time.monotonic() + settings.RATE_LIMIT_CACHE_RETRY_SECONDS
        if self.down_since is None:
            self.down_since = time.time()
            rate_limit_local_counting.set(1)
            logger.error("cache unreachable: rate limits counted per process (%s: %s)", type(exc).__name__, exc)

    def answered(self) -> None:
        if self.down_since is not None:
            logger.warning("cache answers again: rate limits counted in the cache again")
            self.down_since = None
            rate_limit_local_counting.set(0)


shared_counting = SharedCounting()


@contextmanager
def _counting() -> Iterator[None]:
    """Runs a count in the shared cache; raises _CountLocally when it does not answer (or did not
    answer a moment ago), for the caller to count in `local_windows` instead."""
    if not shared_counting.usable():
        raise _CountLocally
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError) as exc:
        shared_counting.failed(exc)
        raise _CountLocally from exc
    shared_counting.answered()


class _CountLocally(Exception):
    pass


def window_count(key: str, *, timeout: int, fail_closed: bool = False) -> int:
    """Add one to the counter `key` in the default cache and return it; a missing counter starts at 1.

    `fail_closed`: when the cache does not answer, raise (503 `cache_unavailable`, core.outages)
    rather than count in this process (the sign-in guess limits, accounts/ratelimit.py).

    For counters whose key names their time window (rate limits): the key expires `timeout`
    seconds after its latest count. On Redis it is one round trip (INCR and EXPIRE in one
    MULTI/EXEC) instead of the three of Django's add + incr (SET NX, EXISTS, INCRBY).
    """
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        full_key = backend.make_and_validate_key(key)

        def shared() -> int:
            with backend._cache.get_client(full_key, write=True).pipeline(transaction=True) as pipe:
                pipe.incr(full_key).expire(full_key, timeout)  # type: ignore[attr-defined]  # a pipeline's incr returns the pipeline
                count, _ = pipe.execute()
            return int(count)

        if fail_closed:
            return shared()
        try:
            with _counting():
                return shared()
        except _CountLocally:
            return local_windows.count(key, timeout=timeout)
    backend.add(key, 0, timeout=timeout)
    try:
        return backend.incr(key)
    except ValueError:  # expired between add and incr: this count opens the window
        backend.add(key, 1, timeout=timeout)
        return 1


def counter_get(key: str) -> int | None:
    """The window counter `key` (None when not counted yet); while the cache does not answer,
    this process's own count of it."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        counted: int | None = backend.get(key)
        return counted
    try:
        with _counting():
            counted = backend.get(key)
            return counted
    except _CountLocally:
        return local_windows.get(key)


# One command instead of MULTI, GET, INCR, EXPIRE, EXEC: the same atomic step, run by Redis
# itself (EVALSHA; redis-py loads the script again if the server has forgotten it).
_GET_AND_COUNT = """
local value = redis.call('GET', KEYS[1])
local count = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return {value, count}
"""
_get_and_count_script = None


def get_and_window_count(read_key: str, count_key: str | None, *, timeout: int) -> tuple[Any, int | None]:
    """The value at `read_key` and, in the same Redis round trip, one more on the window counter
    `count_key` (as window_count; None when no counter is given)."""
    backend = caches["default"]
    if count_key is None:
        return counter_get(read_key), None
    if isinstance(backend, RedisCache):
        read_full, count_full = backend.make_and_validate_key(read_key), backend.make_and_validate_key(count_key)
        client = backend._cache.get_client(count_full, write=True)
        global _get_and_count_script
        if _get_and_count_script is None:
            _get_and_count_script = client.register_script(_GET_AND_COUNT)
        try:
            with _counting():
                value, count = _get_and_count_script(keys=[read_full, count_full], args=[timeout], client=client)
        except _CountLocally:
            return local_windows.get(read_key), local_windows.count(count_key, timeout=timeout)
        serializer = backend._cache._serializer  # type: ignore[attr-defined]  # the client's (private, not in its stubs)
        return (None if value is None else serializer.loads(value)), int(count)
    return backend.get(read_key), window_count(count_key, timeout=timeout)


# Counts each counter in turn and stops after the first one past its limit, so a request
# refused by its API key's budget does not spend its account's.
_COUNT_UNTIL_OVER = """
local counts = {}
for i, key in ipairs(KEYS) do
  local count = redis.call('INCR', key)
  redis.call('EXPIRE', key, ARGV[2 * i])
  counts[i] = count
  if count > tonumber(ARGV[2 * i - 1]) then break end
end
return counts
"""
_count_until_over_script = None


def window_counts_until_over(counters: list[tuple[str, int, int]]) -> list[int]:
    """Add one to each window counter (key, limit, timeout) in order, as window_count, stopping
    after the first whose count passes its limit: the counts taken. One round trip on Redis."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        counts = []
        for key, limit, timeout in counters:
            counts.append(window_count(key, timeout=timeout))
            if counts[-1] > limit:
                break
        return counts
    keys = [backend.make_and_validate_key(key) for key, _, _ in counters]
    client = backend._cache.get_client(keys[0], write=True)
    global _count_until_over_script
    if _count_until_over_script is None:
        _count_until_over_script = client.register_script(_COUNT_UNTIL_OVER)
    args = [value for _, limit, timeout in counters for value in (limit, timeout)]
    try:
        with _counting():
            counts = _count_until_over_script(keys=keys, args=args, client=client)
    except _CountLocally:
        counts = []
        for key, limit, timeout in counters:
            counts.append(local_windows.count(key, timeout=timeout))
            if counts[-1] > limit:
                break
    return [int(count) for count in counts]
