"""The counters of rate limits and login throttles (in Redis when REDIS_URL is set, else in the
database) count every hit, however many processes or threads hit them at once, and restart
once expired."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.conf import settings as django_settings
from django.db import connection
from django.test import override_settings

from config import cache as config_cache
from config.cache import counter_hit, counter_reset, counter_value
from config.models import Counter
from tests.fixtures_redis import RedisServer, redis_settings

pytestmark = pytest.mark.django_db(transaction=True)


def hit_from_eight_threads(times: int) -> None:
    """Eight threads, started together, each counting `times` hits on quire:test."""
    barrier = threading.Barrier(8)

    def hit() -> None:
        try:
            barrier.wait()
            for _ in range(times):
                counter_hit("quire:test", timeout=60)
        finally:
            connection.close()

    threads = [threading.Thread(target=hit) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)


def test_it_loses_no_hit_when_eight_threads_count_at_once(settings: object) -> None:
    settings.REDIS_URL = ""  # type: ignore[attr-defined]
    hit_from_eight_threads(25)

    assert counter_value("quire:test") == 200


def test_it_starts_again_once_the_window_has_passed(settings: object) -> None:
    settings.REDIS_URL = ""  # type: ignore[attr-defined]
    assert [counter_hit("quire:test", timeout=60) for _ in range(3)] == [1, 2, 3]

    Counter.objects.filter(name="quire:test").update(expires_at=0)  # the window passed

    assert counter_value("quire:test") == 0
    assert counter_hit("quire:test", timeout=60) == 1
    counter_reset("quire:test")
    assert counter_value("quire:test") == 0


# --- in Redis (REDIS_URL set): one round trip per hit, never a counter without a lifetime ----


@pytest.fixture
def redis_counters(own_redis: RedisServer) -> Iterator[RedisServer]:
    with override_settings(**redis_settings(own_redis.url)):
        yield own_redis


def test_it_counts_every_hit_in_redis_from_eight_threads(redis_counters: RedisServer) -> None:
    hit_from_eight_threads(25)

    assert counter_value("quire:test") == 200
    assert Counter.objects.count() == 0  # all in Redis


def test_a_redis_counter_lives_its_window_and_starts_again(redis_counters: RedisServer) -> None:
    raw = redis.Redis.from_url(redis_counters.url)
    assert [counter_hit("quire:test", timeout=60) for _ in range(3)] == [1, 2, 3]
    [name] = raw.keys("*quire:test*")
    assert 0 < raw.ttl(name) <= 60

    raw.persist(name)  # a counter that lost its lifetime gets it back on the next hit
    assert counter_hit("quire:test", timeout=60) == 4
    assert 0 < raw.ttl(name) <= 60

    raw.delete(name)  # the window passed
    assert counter_hit("quire:test", timeout=60) == 1


def test_a_prefixed_redis_cache_clears_only_its_own_keys(redis_counters: RedisServer) -> None:
    """The counters (and, under pytest-xdist, each worker's cache) share one Redis database
    with sessions and the task queue: clearing them must leave the rest alone."""
    raw = redis.Redis.from_url(redis_counters.url)
    raw.set("celery", "a queued task")
    raw.set("counters-other:1:quire:test", 7)
    # Under pytest-xdist each worker's counters have a prefix of their own (conftest).
    mine = f"{django_settings.QUIRE_COUNTERS_KEY_PREFIX}:*"
    counter_hit("quire:test", timeout=60)
    assert len(raw.keys(mine)) == 1

    config_cache.counters_clear()

    assert raw.keys(mine) == []
    assert sorted(raw.keys("*")) == [b"celery", b"counters-other:1:quire:test"]


def test_a_hit_in_the_database_now_and_then_removes_expired_counters(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.REDIS_URL = ""
    Counter.objects.create(name="quire:old", value=3, expires_at=time.time() - 10)
    counter_hit("quire:new", timeout=60)  # a hit that does not purge (tests/conftest.py)
    assert Counter.objects.filter(name="quire:old").exists()

    monkeypatch.setattr(config_cache, "purge_due", lambda: True)
    counter_hit("quire:new", timeout=60)

    assert not Counter.objects.filter(name="quire:old").exists()
    assert counter_value("quire:new") == 2
