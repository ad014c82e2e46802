"""MCP bad input and limits: clear tool errors with every code, nothing stored, never a 500."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents import mcp_rate
from agents.models import PageSetEntry
from core.models import AuditEvent
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]


def counts() -> tuple[int, int, int]:
    return Page.objects.count(), Version.objects.count(), PageSetEntry.objects.count()


@pytest.fixture
def target(make_page: MakePage, editor_agent: AgentKey) -> Page:
    page = make_page("Refunds", "Live text.")
    editor_agent.give(page)
    return page


CREATE_LIMITS = [
    ({"title": "", "markdown": "x"}, "title"),
    ({"title": "   ", "markdown": "x"}, "title"),
    ({"title": "t" * 201, "markdown": "x"}, "title"),
    ({"title": "ok", "markdown": "m" * 200_001}, "markdown"),
    ({"title": "ok", "markdown": "x", "tags": [f"tag{n}" for n in range(21)]}, "tags"),
    ({"title": "ok", "markdown": "x", "tags": ["t" * 51]}, "tag"),
    ({"title": "ok", "markdown": "x", "changeSummary": "s" * 301}, "change summary"),
    ({"title": 42, "markdown": "x"}, "title"),
    ({"markdown": "x"}, "title"),
    ({"title": "ok", "markdown": "x", "tags": "not-a-list"}, "tags"),
]


@pytest.mark.parametrize(("arguments", "names"), CREATE_LIMITS)
def test_it_answers_create_page_limits_with_invalid_argument_and_stores_nothing(
    mcp: MCP, editor_agent: AgentKey, target: Page, arguments: dict[str, Any], names: str
) -> None:
    before = counts()
    error = mcp.error(editor_agent, "create_page", **arguments)
    assert error.startswith("invalid_argument: "), error
    assert names in error
    assert counts() == before


UPDATE_LIMITS = [
    ("update_page", {"title": "t" * 201, "changeSummary": "x"}),
    ("update_page", {"markdown": "m" * 200_001, "changeSummary": "x"}),
    ("update_page", {"tags": [str(n) for n in range(21)], "changeSummary": "x"}),
    ("update_page", {"markdown": "new", "changeSummary": "s" * 301}),
    ("update_page", {"markdown": "new", "changeSummary": ""}),
    ("update_page", {"changeSummary": "nothing given"}),
    ("update_page", {"markdown": "Live text.", "changeSummary": "identical"}),
    ("append_to_page", {"markdown": "m" * 200_001, "changeSummary": "x"}),
    ("append_to_page", {"markdown": "   ", "changeSummary": "x"}),
    ("append_to_page", {"markdown": "more", "changeSummary": "s" * 301}),
]


@pytest.mark.parametrize(("tool", "arguments"), UPDATE_LIMITS)
def test_it_answers_update_and_append_limits_with_invalid_argument_and_stores_nothing(
    mcp: MCP, editor_agent: AgentKey, target: Page, tool: str, arguments: dict[str, Any]
) -> None:
    before = counts()
    error = mcp.error(editor_agent, tool, pageId=target.public_id, **arguments)
    assert error.startswith("invalid_argument: "), error
    assert counts() == before


@pytest.mark.parametrize("query", ["", "   ", "q" * 2001])
def test_it_answers_a_query_out_of_bounds_with_invalid_argument(
    mcp: MCP, editor_agent: AgentKey, target: Page, query: str
) -> None:
    error = mcp.error(editor_agent, "search_pages", query=query)
    assert error.startswith("invalid_argument: query must be 1 to 2000 characters")


def test_it_accepts_the_largest_allowed_values(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    result = mcp.ok(
        editor_agent,
        "create_page",
        title="t" * 200,
        markdown="m" * 200_000,
        tags=[f"{n:02d}" + "t" * 48 for n in range(20)],
        changeSummary="s" * 300,
    )
    version = Version.objects.get(page__public_id=result["pageId"])
    assert len(version.body) == 200_000 and len(version.tags) == 20
    assert mcp.ok(editor_agent, "search_pages", query="q" * 200)["results"] == []


def test_it_answers_an_unknown_page_id_with_not_found(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    for tool, arguments in [
        ("get_page", {}),
        ("get_page_source", {}),
        ("update_page", {"markdown": "x", "changeSummary": "x"}),
        ("append_to_page", {"markdown": "x", "changeSummary": "x"}),
    ]:
        for page_id in ["pg_zzzzzzzz", "not-an-id", ""]:
            error = mcp.error(editor_agent, tool, pageId=page_id, **arguments)
            assert error.startswith("not_found: "), (tool, page_id, error)
            assert error.endswith("Call browse to list the pages you can use.")
    error = mcp.error(editor_agent, "create_page", title="x", markdown="x", parentId="pg_zzzzzzzz")
    assert error.startswith("not_found: ")


def test_it_answers_a_page_not_live_yet_with_not_found_for_get_page(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    created = mcp.ok(editor_agent, "create_page", title="Draft", markdown="x")
    assert mcp.error(editor_agent, "get_page", pageId=created["pageId"]).startswith("not_found: ")


def test_it_answers_an_append_to_a_page_not_live_yet_with_conflict(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    created = mcp.ok(editor_agent, "create_page", title="Draft", markdown="x")
    before = counts()
    error = mcp.error(
        editor_agent, "append_to_page", pageId=created["pageId"], markdown="y", changeSummary="z"
    )
    assert error.startswith("conflict: ") and "update_page" in error
    assert counts() == before
    revised = mcp.ok(
        editor_agent, "update_page", pageId=created["pageId"], markdown="x\n\ny", changeSummary="z"
    )
    assert revised["versionNumber"] == 2


def test_it_rate_limits_each_agent_per_minute(
    mcp: MCP,
    editor_agent: AgentKey,
    reader_agent: AgentKey,
    target: Page,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 3
    # Every call below falls in one window, however slowly the machine runs them (a minute
    # turning between the third call and the fourth used to let the fourth through).
    monkeypatch.setattr(mcp_rate, "rate_clock", lambda: 1_800_000_010.0)
    reader_agent.give(target)
    for _ in range(3):
        mcp.ok(editor_agent, "browse")
    error = mcp.error(editor_agent, "browse")
    assert error.startswith("rate_limited: you made more than 3 calls this minute.")
    assert "try again" in error
    before = counts()
    assert mcp.error(editor_agent, "create_page", title="x", markdown="y").startswith(
        "rate_limited: "
    )
    assert counts() == before
    assert mcp.ok(reader_agent, "browse")["pages"]
    assert (
        AuditEvent.objects.filter(actor_agent=editor_agent.agent, outcome="rate_limited").count()
        == 2
    )


def test_it_keeps_the_audit_row_of_a_failed_write(
    mcp: MCP, editor_agent: AgentKey, target: Page
) -> None:
    mcp.error(editor_agent, "create_page", title="t" * 201, markdown="x")
    row = AuditEvent.objects.get(action="mcp.create_page")
    assert row.outcome == "invalid_argument"
    assert row.actor_agent == editor_agent.agent
    assert "title" in row.data["error"]
    assert not AuditEvent.objects.filter(
        action="page.create", actor_agent=editor_agent.agent
    ).exists()
