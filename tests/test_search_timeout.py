"""A search that runs too long is stopped and answered "try again", never a 500: MCP
`rate_limited` with the next step, REST 503 with Retry-After; the next search works."""

from __future__ import annotations

import itertools
import tempfile
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from agents import selectors
from agents import services as agent_services
from core.actors import SystemActor
from core.errors import TryAgain
from tests.bulk import make_live
from wiki import search
from wiki.models import Page
from wiki.search import search_pages

from .conftest import is_postgres
from .fixtures_mcp import AgentKey, rpc_tool

pytestmark = pytest.mark.django_db


@pytest.fixture
def many_pages(editor: User) -> list[Page]:
    pages = Page.objects.bulk_create(
        Page(title=f"Common page {n}", slug=f"common-page-{n}", path=f"common-page-{n}")
        for n in range(600)
    )
    make_live(
        pages,
        author=editor,
        body=lambda n, page: ("Body mentions the common word and another. " * 40) + f"{n}\n",
    )
    search.reindex_all()
    return pages


def test_it_stops_a_slow_search_with_a_retryable_error(
    many_pages: list[Page], settings: Any
) -> None:
    settings.QUIRE_SEARCH_TIMEOUT_MS = 1

    with pytest.raises(TryAgain) as raised:
        search_pages("common word another body mentions")

    assert raised.value.code == "rate_limited"
    assert "Try again in a few seconds" in raised.value.message
    settings.QUIRE_SEARCH_TIMEOUT_MS = 10_000
    assert len(search_pages("common")) == 20


def test_mcp_answers_rate_limited_with_the_next_step(
    many_pages: list[Page], settings: Any, client: Client
) -> None:
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="slow-bot")
    for page in many_pages[:300]:
        agent_services.page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    settings.QUIRE_SEARCH_TIMEOUT_MS = 1

    result = rpc_tool(client, token, "search_pages", query="common word another body")

    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("rate_limited: the search took longer than")
    assert "Try again in a few seconds" in text


def test_rest_answers_503_with_retry_after(
    many_pages: list[Page], settings: Any, admin_user: User, client: Client
) -> None:
    client.force_login(admin_user)
    settings.QUIRE_SEARCH_TIMEOUT_MS = 1

    response = client.get("/api/v1/pages/", {"q": "common word another body"})

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response.json()["error"]["code"] == "rate_limited"


@pytest.mark.django_db(transaction=True)
def test_a_search_outside_any_transaction_is_stopped_and_leaves_nothing_behind(
    many_pages: list[Page], settings: Any
) -> None:
    # As a request runs it: no transaction around the search. On PostgreSQL its settings go
    # with each of its statements (wiki.search_limits.search_rows), not into a transaction.
    settings.QUIRE_SEARCH_TIMEOUT_MS = 1

    with pytest.raises(TryAgain):
        search_pages("common word another body mentions", semantic=False)

    assert not connection.in_atomic_block
    if is_postgres():
        from psycopg.pq import TransactionStatus

        assert connection.connection.info.transaction_status == TransactionStatus.IDLE
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('statement_timeout')")
            assert cursor.fetchone()[0] == "0"
    settings.QUIRE_SEARCH_TIMEOUT_MS = 10_000
    assert len(search_pages("common", semantic=False)) == 20


def round_trips(trace: str) -> int:
    """How many times the client waited for the server in a libpq trace: each run of
    messages from the client (F) that the server (B) then answers."""
    directions = [line.split("\t", 1)[0] for line in trace.splitlines() if line]
    return sum(1 for pair in itertools.pairwise(directions) if pair == ("F", "B"))


@pytest.mark.skipif(not is_postgres(), reason="the settings and the pipeline are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_search_sends_its_settings_and_its_statement_in_one_round_trip(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    # It used to open a transaction for its settings: BEGIN, set_config, the search,
    # COMMIT, four round trips where one does (each one more wake of a server process).
    from psycopg import pq

    page = make_page("Quarterly planning", "Notes from the planning day.\n")
    reader_agent.give(page)
    scope = selectors.agent_scope(reader_agent.agent)
    assert [hit.public_id for hit in search_pages("planning", scope=scope, semantic=False)] == [
        page.public_id
    ]
    connection.ensure_connection()
    raw = connection.connection.pgconn
    with tempfile.TemporaryFile("w+") as trace:
        raw.trace(trace.fileno())
        raw.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            hits = search_pages("quarterly planning", scope=scope, semantic=False)
        finally:
            raw.untrace()
        trace.seek(0)
        sent = trace.read()

    assert [hit.public_id for hit in hits] == [page.public_id]
    assert round_trips(sent) == 1, sent
    assert "set_config" in sent and "BEGIN" not in sent and "COMMIT" not in sent
