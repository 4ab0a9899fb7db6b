"""The rate-limit counter lives in the shared Redis cache and costs one round trip a request."""

from __future__ import annotations

from django.core.cache import caches
from redis.connection import AbstractConnection

from core.api.throttling import rate_limit_take
from core.cache import window_count


def _round_trips(monkeypatch, action) -> int:
    sent = []
    original = AbstractConnection.send_packed_command

    def counting(self, command, check_health=True):
        sent.append(command)
        return original(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counting)
    action()
    return len(sent)


def test_counting_a_request_against_the_rate_limit_is_one_redis_round_trip(monkeypatch):
    rate_limit_take(scope="write", ident="key:round-trips", rate="5/min")  # connects
    assert _round_trips(monkeypatch, lambda: rate_limit_take(scope="write", ident="key:round-trips", rate="5/min")) == 1


def test_the_limit_holds_and_counts_are_seen_by_every_process_sharing_the_cache():
    taken = [rate_limit_take(scope="read", ident="key:shared", rate="3/min")[0] for _ in range(4)]
    assert taken == [True, True, True, False]
    # Another process is another client of the same Redis: it reads the same counter.
    backend = caches["default"]
    keys = [k for k in backend._cache.get_client().scan_iter(match=f"{backend.key_prefix}:*throttle:read:key:shared:*")]
    assert len(keys) == 1 and int(backend._cache.get_client().get(keys[0])) == 4


def test_a_window_counter_starts_at_one_and_expires_after_its_window():
    assert [window_count("bench-window", timeout=61) for _ in range(3)] == [1, 2, 3]
    backend = caches["default"]
    ttl = backend._cache.get_client().ttl(backend.make_and_validate_key("bench-window"))
    assert 0 < ttl <= 61
