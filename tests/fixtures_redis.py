"""A Redis server of the test's own, on a free port, that a test may kill and start again.

Fault tests never touch the machine's shared Redis: they stop and restart this one.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import override_settings

from config import cache as shared_stores
from tests import servers
from tests.prerequisites import CELERY, require


class RedisServer(servers.RedisServer):
    def start(self) -> None:
        super().start()
        # Let this process try Redis again at once instead of after the outage pause.
        shared_stores._down_until = 0.0


def redis_settings(url: str) -> dict[str, Any]:
    """The settings Quire derives from REDIS_URL=url (see config/settings.py)."""
    options = {"socket_connect_timeout": 0.5, "socket_timeout": 0.5}
    return {
        "REDIS_URL": url,
        "CACHES": {
            "default": {
                "BACKEND": "config.cache.FailSafeRedisCache",
                "LOCATION": url,
                "OPTIONS": options,
            },
        },
        "SESSION_ENGINE": "django.contrib.sessions.backends.cached_db",
    }


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    require(CELERY, shutil.which("redis-server") is not None, "redis-server is not installed")
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.stop()
    shared_stores._down_until = 0.0


@pytest.fixture
def redis_configured(own_redis: RedisServer) -> Iterator[RedisServer]:
    """Quire set up on the test's own Redis, as REDIS_URL would set it up, with no agent kept
    from before (a process trusts the agents it keeps against a generation kept in Redis)."""
    from agents import selectors

    with override_settings(**redis_settings(own_redis.url)):
        selectors.forget_agent_tokens()
        yield own_redis
    selectors.forget_agent_tokens()
