"""With Redis, a process reads an agent's scope (its set's entries) once per kept copy of the
agent, not on every call, and never uses it after a change to the set or the tree commits,
even where another process kept it: the shared generation the copy is confirmed against
moves with the change. Without Redis every call reads the scope.

"Another process" is this one with its kept copies put back after the change, as
test_call_statements does for tokens."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from agents import selectors
from agents import services as agent_services
from core.actors import SystemActor
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import AgentKey, rpc_tool
from .fixtures_redis import RedisServer

pytestmark = pytest.mark.django_db

SCOPE_READ = "SELECT set_entry.page_id, set_page.path, EXISTS"


def scope_reads(queries: CaptureQueriesContext) -> int:
    return sum(query["sql"].startswith(SCOPE_READ) for query in queries.captured_queries)


def found(client: Client, key: AgentKey, query: str) -> list[str]:
    result = rpc_tool(client, key.token, "search_pages", query=query)
    assert result["isError"] is False, result
    return [hit["title"] for hit in result["structuredContent"]["results"]]


@contextmanager
def in_another_process() -> Iterator[None]:
    """Make changes in "another process": this one keeps the agent copies (and their scopes)
    it had before them, as if the changes' in-process forgetting had happened elsewhere;
    only the generation in Redis tells it."""
    kept = dict(selectors._agents_by_token_hash)
    assert kept and all(scope is not None for scope in kept_scopes()), "read a scope first"
    yield
    selectors._agents_by_token_hash.update(kept)


def kept_scopes() -> list[Any]:
    """The scopes this process keeps on its agent copies (None where not read yet)."""
    return [
        vars(agent)[selectors._KEPT_SCOPE].scope
        for _, _, agent in selectors._agents_by_token_hash.values()
    ]


def test_a_kept_agent_reads_its_scope_once_with_redis(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    redis_configured: RedisServer,
) -> None:
    reader_agent.give(make_page("Zebra care", "Feed the zebras hay.\n"), make_page("Lions"))
    with CaptureQueriesContext(connection) as first:
        assert found(client, reader_agent, "zebra") == ["Zebra care"]
    with CaptureQueriesContext(connection) as later:
        for _ in range(3):
            assert found(client, reader_agent, "zebra") == ["Zebra care"]
            rpc_tool(client, reader_agent.token, "browse")
    assert scope_reads(first) == 1
    assert scope_reads(later) == 0


@pytest.fixture
def no_redis() -> Iterator[None]:
    """Without REDIS_URL, as the embedded default runs (CI's PostgreSQL pass sets it)."""
    with override_settings(REDIS_URL=""):
        selectors.forget_agent_tokens()
        yield
    selectors.forget_agent_tokens()


@pytest.mark.usefixtures("no_redis")
def test_without_redis_every_call_reads_its_scope(
    client: Client, reader_agent: AgentKey, make_page: Callable[..., Page]
) -> None:
    reader_agent.give(make_page("Zebra care", "Feed the zebras hay.\n"))
    found(client, reader_agent, "zebra")
    with CaptureQueriesContext(connection) as later:
        for _ in range(3):
            assert found(client, reader_agent, "zebra") == ["Zebra care"]
    assert scope_reads(later) == 3


@pytest.mark.django_db(transaction=True)
def test_a_page_taken_out_of_the_set_is_not_found_through_a_scope_another_process_kept(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    redis_configured: RedisServer,
) -> None:
    zebras = make_page("Zebra care", "Feed the zebras hay.\n")
    reader_agent.give(make_page("Lions"), zebras)
    assert found(client, reader_agent, "zebra") == ["Zebra care"]

    with in_another_process():
        agent_services.page_set_remove(
            actor=SystemActor("tests"), agent=reader_agent.agent, page=zebras
        )

    assert found(client, reader_agent, "zebra") == []
    listed = rpc_tool(client, reader_agent.token, "browse")["structuredContent"]["pages"]
    assert [page["title"] for page in listed] == ["Lions"]


@pytest.mark.django_db(transaction=True)
def test_a_moved_entry_takes_its_range_along_in_a_scope_another_process_kept(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    editor: User,
    redis_configured: RedisServer,
) -> None:
    guides = make_page("Guides")
    make_page("Zebra care", "Feed the zebras hay.\n", parent=guides)
    archive = make_page("Archive")
    reader_agent.give(guides)
    assert found(client, reader_agent, "zebra") == ["Zebra care"]

    # The entry moves away; a page outside the set takes its old path, with a child.
    with in_another_process():
        wiki_services.page_move(actor=editor, page=guides, parent=archive)
        other = make_page("Guides")
        assert other.path == "guides"
        make_page("Zebra secrets", "Zebras are not for this agent.\n", parent=other)

    assert found(client, reader_agent, "zebra") == ["Zebra care"]


@pytest.mark.django_db(transaction=True)
def test_pages_added_in_bulk_are_found_through_a_scope_another_process_kept(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    redis_configured: RedisServer,
) -> None:
    reader_agent.give(make_page("Lions"))
    make_page("Zebra care", "Feed the zebras hay.\n", tags=["stripes"])
    assert found(client, reader_agent, "zebra") == []

    with in_another_process():
        agent_services.page_set_add_tagged(
            actor=SystemActor("tests"), agent=reader_agent.agent, tag="stripes"
        )

    assert found(client, reader_agent, "zebra") == ["Zebra care"]
