"""Two web processes behave as one: rate limits, the login throttle and sessions are shared.

Two gunicorn servers on different ports serve one PostgreSQL database and one Redis (and
again with no Redis, where the database is the shared store); an agent's call over its limit
in a minute is refused whichever server it reaches, a login lockout made on one holds on the
other, and a session made on one is valid on the other. The servers allow 20 calls a minute
(QUIRE_AGENT_RATE_LIMIT, 120 by default), so the calls fit in a few seconds of one calendar
minute and seldom wait for the next.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import TypeVar

import httpx
import pytest
from django.contrib.auth.models import User

from tests.fixtures_mcp import AgentKey, mcp_session
from tests.fixtures_servers import QuireServer
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page

# Two servers share one PostgreSQL database (SQLite is the one-process default).
# gunicorn checks passwords with production's hashers, so the test's users are hashed so too.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.usefixtures("real_password_hasher"),
]

T = TypeVar("T")

LIMIT = 20
PASSWORD = "correct-horse-battery"


@pytest.fixture(params=["redis", "database"])
def two_servers(
    request: pytest.FixtureRequest, quire_servers: Callable[..., QuireServer]
) -> tuple[QuireServer, QuireServer]:
    """Two servers sharing Redis, or (without REDIS_URL) sharing only the database."""
    env = {"QUIRE_LOGIN_MAX_FAILURES": "3", "QUIRE_AGENT_RATE_LIMIT": str(LIMIT), "REDIS_URL": ""}
    if request.param == "redis":
        env["REDIS_URL"] = request.getfixturevalue("own_redis").url
    return quire_servers(env=env), quire_servers(env=env)


def _in_one_minute(calls: Callable[[], T]) -> T:
    """Run `calls` until one run starts and ends in the same calendar minute (the limit
    counts calls per calendar minute) and return what it returned. Near the end of a minute
    it starts in the next; on a machine so busy that a run crosses into the next minute
    anyway, it runs again from the start of the minute after, whose count starts afresh."""
    for attempt in range(5):
        left = 60 - time.time() % 60
        if attempt or left < 15:
            time.sleep(left + 0.5)
        minute = time.time() // 60
        result = calls()
        if time.time() // 60 == minute:
            return result
    raise AssertionError("five runs each crossed into the next minute")


def test_it_refuses_the_call_over_the_limit_in_a_minute_on_either_server(
    two_servers: tuple[QuireServer, QuireServer],
    make_page: Callable[..., Page],
    make_agent: Callable[..., AgentKey],
) -> None:
    first, second = two_servers
    key = make_agent("support-bot", pages=(make_page("Refunds"),))

    async def calls() -> tuple[list[bool], str, str]:
        async with (
            mcp_session(first.url + "/mcp", key.token) as on_first,
            mcp_session(second.url + "/mcp", key.token) as on_second,
        ):
            errors = []
            for n in range(LIMIT):
                session = on_first if n % 2 else on_second
                errors.append((await session.call_tool("browse", {})).isError)
            refused_first = await on_first.call_tool("browse", {})
            refused_second = await on_second.call_tool("browse", {})
        return (
            errors,
            refused_first.content[0].text,  # type: ignore[union-attr]
            refused_second.content[0].text,  # type: ignore[union-attr]
        )

    errors, refused_first, refused_second = _in_one_minute(lambda: asyncio.run(calls()))

    assert errors == [False] * LIMIT
    assert refused_first.startswith(f"rate_limited: you made more than {LIMIT} calls")
    assert refused_second.startswith(f"rate_limited: you made more than {LIMIT} calls")


def _login(client: httpx.Client, base: str, username: str, password: str) -> httpx.Response:
    form = client.get(base + "/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
    assert token is not None
    return client.post(
        base + "/login/",
        data={"username": username, "password": password, "csrfmiddlewaretoken": token[1]},
    )


def test_it_holds_a_login_lockout_on_both_servers_and_shares_sessions(
    two_servers: tuple[QuireServer, QuireServer], reader: User, make_page: Callable[..., Page]
) -> None:
    first, second = two_servers
    page = make_page("Refunds")
    with httpx.Client(verify=TLS, timeout=HTTP_TIMEOUT) as stranger:
        for _ in range(3):
            assert _login(stranger, first.url, "reed", "wrong").status_code == 200
    with httpx.Client(verify=TLS, timeout=HTTP_TIMEOUT) as on_second:
        locked = _login(on_second, second.url, "reed", PASSWORD)
    assert locked.status_code == 429
    assert "Too many failed attempts" in locked.text

    # A session made on one server is valid on the other (another user: reed is locked).
    User.objects.create_user("sam", password=PASSWORD)
    with httpx.Client(verify=TLS, timeout=HTTP_TIMEOUT) as browser:
        assert _login(browser, first.url, "sam", PASSWORD).status_code == 302
        shared = browser.get(f"{second.url}/p/{page.public_id}/")
    assert shared.status_code == 200
    assert "Refunds" in shared.text
