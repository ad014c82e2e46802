"""recent_activity: what was published in an agent's set since a time, and the decisions on
its own proposals, newest first, paged, at a constant cost."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.propose import version_propose
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey, rpc_tool

MakePage = Callable[..., Page]


def _publish(editor: User, page: Page, body: str, summary: str) -> Version:
    return version_propose(actor=editor, page=page, body=body, change_summary=summary, publish=True)


def _age(page: Page, days: int) -> None:
    Version.objects.filter(page=page).update(decided_at=timezone.now() - timedelta(days=days))


@pytest.mark.django_db(transaction=True)
def test_it_lists_what_was_published_in_the_set_newest_first(
    mcp: MCP, make_page: MakePage, editor: User, reader_agent: AgentKey
) -> None:
    old = make_page("Old news", "Old.")
    _age(old, 10)
    refunds = make_page("Refunds", "Refunds take 5 days.")
    outside = make_page("Secret plans", "Hidden.")
    archived = make_page("Gone", "Gone.")
    reader_agent.give(old, refunds, archived)
    _publish(editor, refunds, "Refunds take 3 days.", "Shorter wait.")
    _publish(editor, outside, "Still hidden.", "Outside edit.")
    Page.objects.filter(pk=archived.pk).update(archived=True)
    answer = mcp.ok(reader_agent, "recent_activity")
    assert "decisions" not in answer and answer["nextCursor"] is None
    published = answer["published"]
    assert [(p["pageId"], p["versionNumber"]) for p in published] == [
        (refunds.public_id, 2),
        (refunds.public_id, 1),
    ]
    latest = Version.objects.get(page=refunds, number=2)
    assert published[0] == {
        "pageId": refunds.public_id,
        "title": "Refunds",
        "path": "refunds",
        "versionNumber": 2,
        "publishedAt": latest.decided_at.isoformat(),  # type: ignore[union-attr]
        "changeSummary": "Shorter wait.",
    }
    since = (timezone.now() - timedelta(days=30)).isoformat()
    older = mcp.ok(reader_agent, "recent_activity", since=since)["published"]
    assert [p["pageId"] for p in older] == [refunds.public_id, refunds.public_id, old.public_id]
    assert "Secret" not in str(older) and "Gone" not in str(older)


@pytest.mark.django_db(transaction=True)
def test_it_shows_an_editing_agent_the_decisions_on_its_own_proposals(
    mcp: MCP, make_page: MakePage, reviewer: User, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.")
    other = make_page("Hours", "Open at 9.")
    editor_agent.give(page, other)
    first = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.",
        changeSummary="Faster.",
        baseVersion=1,
    )
    version_reject(
        actor=reviewer,
        version=Version.objects.get(page=page, number=first["versionNumber"]),
        comment="Say which days.",
    )
    second = mcp.ok(
        editor_agent,
        "append_to_page",
        pageId=other.public_id,
        markdown="Closed on Sundays.",
        changeSummary="Sundays.",
    )
    version_approve(
        actor=reviewer, version=Version.objects.get(page=other, number=second["versionNumber"])
    )
    answer = mcp.ok(editor_agent, "recent_activity")
    decisions = answer["decisions"]
    assert [(d["pageId"], d["status"]) for d in decisions] == [
        (other.public_id, "approved"),
        (page.public_id, "rejected"),
    ]
    assert decisions[1]["comment"] == "Say which days." and decisions[1]["decidedAt"]
    assert set(decisions[1]) == {
        "pageId",
        "title",
        "versionNumber",
        "status",
        "comment",
        "decidedAt",
    }
    assert answer["published"][0]["pageId"] == other.public_id
    assert answer["published"][0]["versionNumber"] == second["versionNumber"]


@pytest.mark.django_db
def test_it_pages_200_versions_at_a_time(
    client: Client, make_page: MakePage, editor: User, reader_agent: AgentKey, settings: Any
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    page = make_page("Log", "v1")
    reader_agent.give(page)
    for n in range(2, 206):
        _publish(editor, page, f"v{n}", f"Entry {n}.")
    first = rpc_tool(client, reader_agent.token, "recent_activity", limit=200)
    first = first["structuredContent"]
    assert len(first["published"]) == 200 and first["published"][0]["versionNumber"] == 205
    assert first["nextCursor"]
    rest = rpc_tool(client, reader_agent.token, "recent_activity", cursor=first["nextCursor"])
    numbers = [p["versionNumber"] for p in rest["structuredContent"]["published"]]
    assert numbers == [5, 4, 3, 2, 1] and rest["structuredContent"]["nextCursor"] is None


@pytest.mark.django_db
def test_it_answers_50_versions_unless_asked_for_fewer_or_more(
    client: Client, make_page: MakePage, editor: User, reader_agent: AgentKey, settings: Any
) -> None:
    """Its first answer after an import listed every page published (14.7k tokens)."""
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    page = make_page("Log", "v1")
    reader_agent.give(page)
    for n in range(2, 61):
        _publish(editor, page, f"v{n}", f"Entry {n}.")

    def numbers(**arguments: Any) -> tuple[list[int], str | None]:
        answer = rpc_tool(client, reader_agent.token, "recent_activity", **arguments)
        found = answer["structuredContent"]
        return [p["versionNumber"] for p in found["published"]], found["nextCursor"]

    first, cursor = numbers()
    assert first == list(range(60, 10, -1)) and cursor
    assert numbers(cursor=cursor) == ([10, 9, 8, 7, 6, 5, 4, 3, 2, 1], None)
    few, cursor = numbers(limit=3)
    assert few == [60, 59, 58]
    assert numbers(cursor=cursor, limit=2)[0] == [57, 56]
    refused = rpc_tool(client, reader_agent.token, "recent_activity", limit=500)
    assert refused["isError"] and "limit" in refused["content"][0]["text"]


@pytest.mark.django_db(transaction=True)
def test_it_lists_a_request_for_changes_on_the_agents_own_proposal(
    mcp: MCP, make_page: MakePage, reviewer: User, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.")
    editor_agent.give(page)
    proposed = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.",
        changeSummary="Faster.",
        baseVersion=1,
    )
    version_request_changes(
        actor=reviewer,
        version=Version.objects.get(page=page, number=proposed["versionNumber"]),
        comment="Say working days.",
    )

    decisions = mcp.ok(editor_agent, "recent_activity")["decisions"]

    assert [(d["pageId"], d["versionNumber"], d["status"], d["comment"]) for d in decisions] == [
        (page.public_id, proposed["versionNumber"], "changes_requested", "Say working days.")
    ]
    assert decisions[0]["title"] == "Refunds" and decisions[0]["decidedAt"]


@pytest.mark.django_db
def test_it_refuses_a_bad_since_or_cursor_with_what_to_do(
    client: Client, reader_agent: AgentKey
) -> None:
    def error(**arguments: Any) -> str:
        result = rpc_tool(client, reader_agent.token, "recent_activity", **arguments)
        assert result["isError"] is True
        text: str = result["content"][0]["text"]
        return text

    assert error(since="last tuesday").startswith(
        "invalid_argument: since must be an ISO 8601 time"
    )
    assert "call recent_activity without a cursor" in error(cursor="nonsense")


@pytest.mark.django_db
def test_it_costs_the_same_queries_for_a_small_and_a_large_history(
    client: Client,
    make_page: MakePage,
    editor: User,
    make_agent: Callable[..., AgentKey],
    settings: Any,
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    small, large = make_agent("small", can_edit=True), make_agent("large", can_edit=True)
    small.give(make_page("Alone", "x"))
    for n in range(60):
        page = make_page(f"Page {n}", "x")
        large.give(page)
        _publish(editor, page, "y", "Again.")
    counts = []
    for key in (small, large):
        rpc_tool(client, key.token, "browse")  # the first call of a minute records last use
        with CaptureQueriesContext(connection) as queries:
            result = rpc_tool(client, key.token, "recent_activity")
        assert result["isError"] is False
        counts.append(len(queries))
    counter = 0 if settings.REDIS_URL else 1
    # The set's entries, the versions, the requests for changes on its own proposals (an
    # editing agent's), the audit row (the token was kept from the browse).
    assert counts == [4 + counter, 4 + counter]
