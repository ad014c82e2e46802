"""A Redis server of the test's own, on a free port, that a test may kill and start again.

Fault tests never touch the machine's shared Redis: they stop and restart this one.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from config import cache as shared_stores
from tests.fixtures_mail import free_port
from tests.prerequisites import CELERY, require


class RedisServer:
    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url, socket_timeout=0.5).ping()
                break
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"redis-server did not start on port {self.port}"
                    ) from None
                time.sleep(0.05)
        # Let this process try Redis again at once instead of after the outage pause.
        shared_stores._down_until = 0.0

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


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
            "counters": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "OPTIONS": options,
                "KEY_PREFIX": "counters",
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
