"""Shared stores that survive a Redis outage: a cache that degrades, and counters that fall back.

Every web process must see the same sessions, rate limits and login throttles, so they live
in Redis when REDIS_URL is set and in the database otherwise. When Redis stops answering,
the cache behaves as empty (reads miss, writes are dropped) and the counters move to the
database (the quire_counter table, also their home without Redis) until Redis answers again,
so no request fails because of Redis.

The counters, and the few shared values read beside them on every MCP call, go through a
redis-py client of this module's own, built from REDIS_URL and REDIS_OPTIONS: Django's cache
API has no pipeline, and its client, connection pools and serializer are private to it.
"""

from __future__ import annotations

import logging
import random
import re
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import redis
from django.conf import settings
from django.core.cache import cache as shared_cache
from django.core.cache.backends.redis import RedisCache
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


class FailSafeRedisCache(RedisCache):
    """Django's Redis cache, except that an unreachable Redis is a miss, never an error, and
    clear() empties only its own keys when it has a KEY_PREFIX: Django's flushes the whole
    Redis database, sessions, counters and queued tasks included."""

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self.location = server.split(",")[0].split(";")[0]

    def _clear_own_keys(self) -> None:
        client = redis.Redis.from_url(self.location, **settings.REDIS_OPTIONS)
        try:
            _delete_matching(client, _under(self.key_prefix))
        finally:
            client.close()

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
        clear = self._clear_own_keys if self.key_prefix else super().clear
        self._safely(clear, None)


def _under(prefix: str) -> str:
    """The SCAN pattern of every key under `prefix`."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", prefix) + ":*"


def _delete_matching(client: redis.Redis, pattern: str) -> None:
    batch: list[bytes] = []
    for name in client.scan_iter(match=pattern, count=1000):
        batch.append(name)
        if len(batch) == 1000:
            client.delete(*batch)
            batch.clear()
    if batch:
        client.delete(*batch)


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


_clients: dict[str, redis.Redis] = {}


def _redis() -> redis.Redis | None:
    """This module's redis-py client for REDIS_URL (one per URL: a client is thread-safe and
    keeps its own connection pool); None without Redis or while it is marked down."""
    url = settings.REDIS_URL
    if not url or redis_marked_down():
        return None
    client = _clients.get(url)
    if client is None:
        client = _clients[url] = redis.Redis.from_url(url, **settings.REDIS_OPTIONS)
    return client


def _counter_name(key: str) -> str:
    # The name Django's cache gave a counter when the counters were a cache: a deploy keeps
    # the windows that are running.
    return f"{settings.QUIRE_COUNTERS_KEY_PREFIX}:1:{key}"


def _shared_name(key: str) -> str:
    return f"{settings.QUIRE_SHARED_KEY_PREFIX}:{key}"


def _count(pipe: Any, name: str, timeout: int) -> None:
    """Start the counter with its lifetime unless it runs, add one, and give it a lifetime
    if it somehow has none (never a counter that lives for ever)."""
    pipe.set(name, 0, ex=timeout, nx=True)
    pipe.incr(name)
    pipe.expire(name, timeout, nx=True)


def _redis_hit(client: redis.Redis, key: str, timeout: int) -> int:
    """One round trip (every MCP call makes one); Django's own add + incr would cost three."""
    pipe = client.pipeline(transaction=True)
    _count(pipe, _counter_name(key), timeout)
    _, value, _ = pipe.execute()
    return int(value)


def shared_value_and_hit(value_key: str, counter: str, *, timeout: int) -> tuple[Any, int] | None:
    """In one Redis round trip: the shared value at `value_key` (`shared_value`; None when
    absent) and `counter_hit(counter)`'s new value. None, having done neither, when Redis is
    not in use, is marked down or fails (then marked down): the caller then reads and counts
    as usual (`counter_hit` falls back to the database). Every MCP tool call checks its
    token's generation and counts itself."""
    client = _redis()
    if client is None:
        return None
    try:
        pipe = client.pipeline(transaction=True)
        pipe.get(_shared_name(value_key))
        _count(pipe, _counter_name(counter), timeout)
        raw, _, count, _ = pipe.execute()
    except RedisError as exc:
        mark_redis_down(exc)
        return None
    return (None if raw is None else raw.decode()), int(count)


def counter_unhit(key: str) -> None:
    """Take back one hit that `shared_value_and_hit` counted in Redis for a call that turned
    out not to be one. Nothing when Redis has failed since (the hit then expires with its
    window)."""
    client = _redis()
    if client is None:
        return
    try:
        client.decr(_counter_name(key))
    except RedisError as exc:
        mark_redis_down(exc)


# --- shared values (a string every process must agree on, e.g. the agents' generation) -------


def shared_value(key: str) -> str | None:
    """The shared value `key`: in Redis with it (None while Redis fails), else in the cache."""
    if not settings.REDIS_URL:
        value = shared_cache.get(_shared_name(key))
        return None if value is None else str(value)
    client = _redis()
    if client is None:
        return None
    try:
        raw: Any = client.get(_shared_name(key))
    except RedisError as exc:
        mark_redis_down(exc)
        return None
    return None if raw is None else bytes(raw).decode()


def shared_value_set(key: str, value: str, *, only_if_absent: bool = False) -> None:
    """Set the shared value `key` for good (or only where it has none); dropped while Redis
    fails, as a cache write is."""
    if not settings.REDIS_URL:
        if only_if_absent:
            shared_cache.add(_shared_name(key), value, timeout=None)
        else:
            shared_cache.set(_shared_name(key), value, timeout=None)
        return
    client = _redis()
    if client is None:
        return
    try:
        client.set(_shared_name(key), value, nx=only_if_absent)
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
    client = _redis()
    if client is not None:
        try:
            return _redis_hit(client, key, timeout)
        except RedisError as exc:
            mark_redis_down(exc)
    return _database_hit(key, timeout)


def counter_value(key: str) -> int:
    client = _redis()
    if client is not None:
        try:
            return int(client.get(_counter_name(key)) or 0)
        except RedisError as exc:
            mark_redis_down(exc)
    value = (
        Counter.objects.filter(name=key, expires_at__gte=time.time())
        .values_list("value", flat=True)
        .first()
    )
    return int(value or 0)


def counter_reset(key: str) -> None:
    client = _redis()
    if client is not None:
        try:
            client.delete(_counter_name(key))
        except RedisError as exc:
            mark_redis_down(exc)
    Counter.objects.filter(name=key).delete()


def counters_clear() -> None:
    """Every counter in both stores (tests start from zero). In Redis only the counters'
    own keys go: sessions and queued tasks share its database."""
    client = _redis()
    if client is not None:
        try:
            _delete_matching(client, _under(settings.QUIRE_COUNTERS_KEY_PREFIX))
        except RedisError:
            pass
    Counter.objects.all().delete()
