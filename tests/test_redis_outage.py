"""A Redis outage degrades Quire, never breaks it: reads, writes and logins keep working.

Each test runs Quire against a redis-server of its own and kills it. Rate limits and login
throttles then count in the database (shared by every web process, so they still hold),
the cache reads as empty, and /healthz says "degraded".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client

from agents import mcp_rate
from agents.models import Agent
from config.cache import counter_hit, counter_value
from reviews.actions.propose import version_propose
from reviews.models import Notification, NotificationStatus
from tests.fixtures_mail import CeleryWorker, SMTPServer, celery_publishing_to
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_redis import RedisServer
from tests.waits import PATIENCE
from wiki.models import Page

MakePage = Callable[..., Page]

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_answers_mcp_calls_while_redis_is_down_and_still_limits_the_rate(
    redis_configured: RedisServer,
    live_server: Any,
    make_page: MakePage,
    make_agent: Callable[..., AgentKey],
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 3
    # The four calls fall in one window however slowly the machine runs them (a minute
    # turning between the third and the fourth let the fourth through in CI).
    monkeypatch.setattr(mcp_rate, "rate_clock", lambda: 1_800_000_010.0)
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
    body = response.json()
    assert (body["status"], body["checks"]) == (
        "degraded",
        {"database": "ok", "redis": "error: ConnectionError"},
    )


def test_it_counts_in_redis_again_once_redis_is_back(redis_configured: RedisServer) -> None:
    redis_configured.stop()
    assert counter_hit("quire:test-counter", timeout=60) == 1  # in the database

    redis_configured.start()

    assert counter_hit("quire:test-counter", timeout=60) == 1  # a fresh count in Redis
    assert counter_hit("quire:test-counter", timeout=60) == 2
    assert counter_value("quire:test-counter") == 2


@pytest.mark.celery
def test_a_celery_worker_outlives_a_redis_restart_and_sends_what_waited(
    celery_worker: Callable[..., CeleryWorker],
    own_redis: RedisServer,
    smtp_server: SMTPServer,
    reviewer: User,
    make_user: Callable[..., User],
    make_page: MakePage,
) -> None:
    """Celery 5.7 / kombu 5.7 killed the worker ("Unrecoverable error") when Redis went away
    while it held a delayed task; nothing was emailed again until someone restarted it."""
    agent = Agent.objects.create(name="support-bot", owner=make_user("owen"), can_edit_pages=True)
    pages = [make_page(f"Policy {n}", "Old.\n") for n in range(3)]

    def propose(page: Page) -> None:
        version_propose(actor=agent, page=page, body="New.\n", change_summary="New.")

    with celery_publishing_to(own_redis.url):
        worker = celery_worker(
            smtp_port=smtp_server.port,
            redis_url=own_redis.url,
            pool="prefork",
            extra_env={"QUIRE_REVIEW_EMAIL_GATHER_SECONDS": "60"},
        )
        propose(pages[0])
        smtp_server.wait_for(1)
        propose(pages[1])  # gathered: the worker holds the follow-up, unacknowledged
        wait_for(lambda: "reviews.tasks.send_review_requests" in worker.output(), worker.output)

        for restart in range(1, 4):
            own_redis.stop()
            wait_for(logged(worker, "Connection to broker lost", restart), worker.output)
            own_redis.start()
            # Connected again, not merely alive a while later: with kombu 5.7 the worker
            # stopped with "Unrecoverable error" instead.
            wait_for(logged(worker, "Connected to redis://", restart + 1), worker.output)
            assert worker.process.poll() is None, worker.output()
        # The gathering window closes: the next review request sends everything owed.
        gone = timedelta(minutes=2)
        Notification.objects.update(last_attempt_at=F("last_attempt_at") - gone)
        propose(pages[2])

        wait_for(lambda: len(smtp_server.messages) >= 2, worker.output)
        [_, follow_up] = smtp_server.messages
    assert follow_up["Subject"] == "[Quire] 2 proposals waiting for review"
    wait_for(
        lambda: (
            set(Notification.objects.values_list("status", flat=True)) == {NotificationStatus.SENT}
        ),
        lambda: str(list(Notification.objects.values_list("pk", "status", "last_error"))),
    )


def logged(worker: CeleryWorker, line: str, times: int) -> Callable[[], bool]:
    """A condition: the worker has logged `line` at least `times` times."""
    return lambda: worker.output().count(line) >= times


def wait_for(condition: Callable[[], bool], explain: Callable[[], str]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not condition():
        assert time.monotonic() < deadline, explain()
        time.sleep(0.2)
