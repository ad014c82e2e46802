"""A Redis outage degrades Quire, never breaks it: reads, writes and logins keep working.

Each test runs Quire against a redis-server of its own and kills it. Rate limits and login
throttles then count in the database (shared by every web process, so they still hold),
the cache reads as empty, and /healthz says "degraded".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client, override_settings

from config.cache import counter_hit, counter_value
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_redis import RedisServer, redis_settings
from wiki.models import Page

MakePage = Callable[..., Page]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def redis_configured(own_redis: RedisServer) -> Iterator[RedisServer]:
    with override_settings(**redis_settings(own_redis.url)):
        yield own_redis


def test_it_answers_mcp_calls_while_redis_is_down_and_still_limits_the_rate(
    redis_configured: RedisServer,
    live_server: Any,
    make_page: MakePage,
    make_agent: Callable[..., AgentKey],
    settings: Any,
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 3
    page = make_page("Refunds", "Refunds take five days.\n")
    key = make_agent("support-bot", pages=(page,))
    mcp = MCP(live_server.url)
    redis_configured.stop()

    first = mcp.ok(key, "browse")
    mcp.ok(key, "search_pages", query="refunds")
    mcp.ok(key, "get_page", pageId=page.public_id)
    refused = mcp.error(key, "browse")

    assert [row["pageId"] for row in first["pages"]] == [page.public_id]
    assert refused.startswith("rate_limited: you made more than 3 calls this minute.")
    assert "6379" not in refused and str(redis_configured.port) not in refused
    assert "redis" not in refused.lower()


def test_it_logs_in_serves_pages_and_throttles_logins_while_redis_is_down(
    redis_configured: RedisServer, make_page: MakePage, reader: User, settings: Any
) -> None:
    settings.QUIRE_LOGIN_MAX_FAILURES = 2
    page = make_page("Refunds", "Refunds take five days.\n")
    redis_configured.stop()
    client = Client()

    assert client.get("/login/").status_code == 200
    logged_in = client.post("/login/", {"username": "reed", "password": "correct-horse-battery"})
    assert logged_in.status_code == 302
    assert client.get(f"/p/{page.public_id}/").status_code == 200

    stranger = Client()
    for _ in range(2):
        assert (
            stranger.post("/login/", {"username": "reed", "password": "wrong"}).status_code == 200
        )
    locked = stranger.post("/login/", {"username": "reed", "password": "correct-horse-battery"})
    assert locked.status_code == 429


def test_it_reports_redis_down_in_healthz_as_degraded(
    redis_configured: RedisServer, client: Client
) -> None:
    assert client.get("/healthz").json()["status"] == "ok"
    redis_configured.stop()

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "redis": "error: ConnectionError"},
    }


def test_it_counts_in_redis_again_once_redis_is_back(redis_configured: RedisServer) -> None:
    redis_configured.stop()
    assert counter_hit("quire:test-counter", timeout=60) == 1  # in the database

    redis_configured.start()

    assert counter_hit("quire:test-counter", timeout=60) == 1  # a fresh count in Redis
    assert counter_hit("quire:test-counter", timeout=60) == 2
    assert counter_value("quire:test-counter") == 2
