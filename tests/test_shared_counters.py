"""The database counters (rate limits and login throttles without Redis) count every hit,
however many processes or threads hit them at once, and restart once expired."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from config.cache import counter_hit, counter_reset, counter_value
from config.models import Counter

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_loses_no_hit_when_eight_threads_count_at_once(settings: object) -> None:
    settings.REDIS_URL = ""  # type: ignore[attr-defined]
    barrier = threading.Barrier(8)

    def hit_25_times() -> None:
        try:
            barrier.wait()
            for _ in range(25):
                counter_hit("quire:test", timeout=60)
        finally:
            connection.close()

    threads = [threading.Thread(target=hit_25_times) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)

    assert counter_value("quire:test") == 200


def test_it_starts_again_once_the_window_has_passed(settings: object) -> None:
    settings.REDIS_URL = ""  # type: ignore[attr-defined]
    assert [counter_hit("quire:test", timeout=60) for _ in range(3)] == [1, 2, 3]

    Counter.objects.filter(name="quire:test").update(expires_at=0)  # the window passed

    assert counter_value("quire:test") == 0
    assert counter_hit("quire:test", timeout=60) == 1
    counter_reset("quire:test")
    assert counter_value("quire:test") == 0
