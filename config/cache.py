"""Shared stores that survive a Redis outage: a cache that degrades, and counters that fall back.

Every web process must see the same sessions, rate limits and login throttles, so they live
in Redis when REDIS_URL is set and in the database otherwise. When Redis stops answering,
the cache behaves as empty (reads miss, writes are dropped) and the counters move to the
database (the quire_counter table, also their home without Redis) until Redis answers again,
so no request fails because of Redis.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.db import connection
from redis.exceptions import RedisError

from config.models import Counter

logger = logging.getLogger(__name__)

T = TypeVar("T")

# After a failure, Redis is left alone this long before it is tried again, so that an outage
# costs one failed connection per process every few seconds instead of one per request.
RETRY_AFTER_SECONDS = 5.0

_lock = threading.Lock()
_down_until = 0.0


def redis_marked_down() -> bool:
    return time.monotonic() < _down_until


def mark_redis_down(exc: BaseException) -> None:
    global _down_until
    with _lock:
        first = not redis_marked_down()
        _down_until = time.monotonic() + RETRY_AFTER_SECONDS
    if first:
        logger.warning(
            "Redis is unavailable (%s); using the database for counters and skipping the "
            "cache until it answers again.",
            exc.__class__.__name__,
        )


class _OneClientPerPool(RedisCacheClient):
    """Django builds a redis-py client for every operation (about 0.1 ms each, and every MCP
    call counts itself in Redis); a client is thread-safe, so one per connection pool does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class QuireRedisCache(RedisCache):
    """Django's Redis cache with one redis-py client per connection pool, whose clear()
    empties only its own keys when it has a KEY_PREFIX (the counters do): Django's flushes
    the whole Redis database, sessions and queued tasks included."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _OneClientPerPool

    def clear(self) -> None:
        if not self.key_prefix:
            super().clear()
            return
        client = self._cache.get_client(None, write=True)
        batch: list[bytes] = []
        own = re.sub(r"([*?\[\]\\])", r"\\\1", self.key_prefix) + ":*"
        for key in client.scan_iter(match=own, count=1000):
            batch.append(key)
            if len(batch) == 1000:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)


class FailSafeRedisCache(QuireRedisCache):
    """Django's Redis cache, except that an unreachable Redis is a miss, never an error."""

    def _safely(self, operation: Callable[[], T], fallback: T) -> T:
        if redis_marked_down():
            return fallback
        try:
            return operation()
        except RedisError as exc:
            mark_redis_down(exc)
            return fallback

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        get = super().get
        return self._safely(lambda: get(key, default, version), default)

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        get_many = super().get_many
        return self._safely(lambda: get_many(keys, version), {})

    def has_key(self, key: Any, version: int | None = None) -> bool:
        has_key = super().has_key
        return self._safely(lambda: has_key(key, version), False)

    def add(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        add = super().add
        return self._safely(lambda: add(key, value, timeout, version), False)

    def set(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> None:
        store = super().set
        self._safely(lambda: store(key, value, timeout, version), None)

    def set_many(self, data: Any, timeout: Any = None, version: int | None = None) -> list[Any]:
        store = super().set_many
        return self._safely(lambda: store(data, timeout, version), list(data))

    def touch(self, key: Any, timeout: Any = None, version: int | None = None) -> bool:
        touch = super().touch
        return self._safely(lambda: touch(key, timeout, version), False)

    def delete(self, key: Any, version: int | None = None) -> bool:
        delete = super().delete
        return self._safely(lambda: delete(key, version), False)

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        delete_many = super().delete_many
        self._safely(lambda: delete_many(keys, version), None)

    def clear(self) -> None:
        clear = super().clear
        self._safely(clear, None)


# --- counters (rate limits, login throttles) ------------------------------------------------

# One statement that starts, counts or restarts (once expired) a counter and returns its value:
# atomic on PostgreSQL and SQLite alike, so concurrent web processes never lose a hit.
_HIT = """
INSERT INTO quire_counter (name, value, expires_at) VALUES (%s, 1, %s)
ON CONFLICT (name) DO UPDATE SET
    value = CASE WHEN quire_counter.expires_at < %s THEN 1 ELSE quire_counter.value + 1 END,
    expires_at = CASE WHEN quire_counter.expires_at < %s
        THEN excluded.expires_at ELSE quire_counter.expires_at END
RETURNING value
"""
# Expired rows are removed now and then by the hits themselves.
_PURGE_EVERY = 500


def purge_due() -> bool:
    """Whether this hit also removes the expired rows: one hit in _PURGE_EVERY, at random."""
    return random.randrange(_PURGE_EVERY) == 0


def _redis_counters() -> BaseCache | None:
    if not settings.REDIS_URL or redis_marked_down():
        return None
    return caches["counters"]


def _redis_hit(store: BaseCache, key: str, timeout: int) -> int:
    """One round trip (every MCP call makes one): start the counter with its lifetime unless
    it runs, add one, and give it a lifetime if it somehow has none (never a counter that
    lives for ever). Django's own add + incr would cost three."""
    assert isinstance(store, QuireRedisCache)
    name = store.make_and_validate_key(key)
    pipe = store._cache.get_client(name, write=True).pipeline(transaction=True)
    pipe.set(name, 0, ex=timeout, nx=True)
    pipe.incr(name)
    pipe.expire(name, timeout, nx=True)
    _, value, _ = pipe.execute()
    return int(value)


def cached_value_and_hit(cache_key: str, counter: str, *, timeout: int) -> tuple[Any, int] | None:
    """In one Redis round trip: the shared cache's value at `cache_key` (None when absent)
    and `counter_hit(counter)`'s new value. None, having done neither, when Redis is not in
    use, is marked down, fails (then marked down) or the cache and the counters are not the
    same Redis: the caller then reads and counts as usual (`counter_hit` falls back to the
    database). Every MCP tool call checks its token's generation and counts itself."""
    store = _redis_counters()
    shared = caches["default"]
    if (
        store is None
        or not isinstance(store, QuireRedisCache)
        or not isinstance(shared, QuireRedisCache)
        or store._cache._servers != shared._cache._servers  # type: ignore[attr-defined]
    ):
        return None
    name = store.make_and_validate_key(counter)
    value_name = shared.make_and_validate_key(cache_key)
    try:
        pipe = store._cache.get_client(name, write=True).pipeline(transaction=True)
        pipe.get(value_name)
        pipe.set(name, 0, ex=timeout, nx=True)
        pipe.incr(name)
        pipe.expire(name, timeout, nx=True)
        raw, _, count, _ = pipe.execute()
    except RedisError as exc:
        mark_redis_down(exc)
        return None
    value = None if raw is None else shared._cache._serializer.loads(raw)  # type: ignore[attr-defined]
    return value, int(count)


def counter_unhit(key: str) -> None:
    """Take back one hit that `cached_value_and_hit` counted in Redis for a call that turned
    out not to be one. Nothing when Redis has failed since (the hit then expires with its
    window)."""
    store = _redis_counters()
    if store is None:
        return
    assert isinstance(store, QuireRedisCache)
    name = store.make_and_validate_key(key)
    try:
        store._cache.get_client(name, write=True).decr(name)
    except RedisError as exc:
        mark_redis_down(exc)


def _database_hit(key: str, timeout: int) -> int:
    now = time.time()
    with connection.cursor() as cursor:
        cursor.execute(_HIT, [key, now + timeout, now, now])
        row = cursor.fetchone()
        if purge_due():
            cursor.execute("DELETE FROM quire_counter WHERE expires_at < %s", [now])
    return int(row[0]) if row else 1


def counter_hit(key: str, *, timeout: int) -> int:
    """Add one to the counter `key` (created with `timeout` seconds to live); its new value."""
    store = _redis_counters()
    if store is not None:
        try:
            return _redis_hit(store, key, timeout)
        except RedisError as exc:
            mark_redis_down(exc)
    return _database_hit(key, timeout)


def counter_value(key: str) -> int:
    store = _redis_counters()
    if store is not None:
        try:
            return int(store.get(key, 0) or 0)
        except RedisError as exc:
            mark_redis_down(exc)
    value = (
        Counter.objects.filter(name=key, expires_at__gte=time.time())
        .values_list("value", flat=True)
        .first()
    )
    return int(value or 0)


def counter_reset(key: str) -> None:
    store = _redis_counters()
    if store is not None:
        try:
            store.delete(key)
        except RedisError as exc:
            mark_redis_down(exc)
    Counter.objects.filter(name=key).delete()


def counters_clear() -> None:
    """Every counter in both stores (tests start from zero)."""
    if settings.REDIS_URL:
        try:
            caches["counters"].clear()
        except RedisError:
            pass
    Counter.objects.all().delete()
