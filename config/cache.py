"""Django's Redis cache, reusing one client per connection pool.

Django builds a new redis.Redis object for every cache call; construction alone cost
about 0.1 ms each, several times per API request (rate limits, rate tables). redis-py
clients are thread-safe and share the pool, so one per pool is enough.
"""

from __future__ import annotations

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class PooledRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
        return client


class PooledRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = PooledRedisCacheClient
