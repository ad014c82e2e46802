"""Shared stores that survive a Redis outage: a cache that degrades, and counters that fall back.

Every web process must see the same sessions, rate limits and login throttles, so they live
in Redis when REDIS_URL is set and in the database otherwise. When Redis stops answering,
the cache behaves as empty (reads miss, writes are dropped) and the counters move to the
database until Redis answers again, so no request fails because of Redis.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

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


def _with_counter_store(operation: Callable[[BaseCache], T]) -> T:
    """Run `operation` on the shared counter store: Redis if it answers, else the database."""
    if not redis_marked_down():
        try:
            return operation(caches["counters"])
        except RedisError as exc:
            mark_redis_down(exc)
    return operation(caches["counters_fallback"])


def counter_hit(key: str, *, timeout: int) -> int:
    """Add one to the counter `key` (created with `timeout` seconds to live); its new value."""

    def hit(store: BaseCache) -> int:
        if store.add(key, 1, timeout=timeout):
            return 1
        try:
            return int(store.incr(key))
        except ValueError:
            # It expired between add and incr: this hit starts it again.
            store.set(key, 1, timeout=timeout)
            return 1

    return _with_counter_store(hit)


def counter_value(key: str) -> int:
    return _with_counter_store(lambda store: int(store.get(key, 0) or 0))


def counter_reset(key: str) -> None:
    _with_counter_store(lambda store: store.delete(key))


def counters_clear() -> None:
    """Every counter in both stores (tests start from zero)."""
    for alias in ("counters", "counters_fallback"):
        try:
            caches[alias].clear()
        except RedisError:
            continue
