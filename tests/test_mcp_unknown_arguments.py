"""An argument a tool does not take is refused by name, never dropped without a word."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from core.models import AuditEvent
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]


def calls(page: Page) -> list[tuple[str, dict[str, Any]]]:
    pid = page.public_id
    return [
        ("browse", {"cursr": "x"}),
        ("search_pages", {"query": "refunds", "limit": 3}),
        ("get_page", {"pageId": pid, "maxchars": 5000}),
        ("recent_activity", {"sinse": "2026-01-01T00:00:00Z"}),
        ("get_page_source", {"pageId": pid, "version": 1}),
        ("create_page", {"title": "New", "markdown": "x", "parent": pid}),
        ("update_page", {"pageId": pid, "markdown": "y", "changeSummary": "z", "baseVersoin": 1}),
        (
            "edit_page",
            {
                "pageId": pid,
                "edits": [{"oldText": "a", "newText": "b"}],
                "changeSummary": "z",
                "x": 1,
            },
        ),
        ("append_to_page", {"pageId": pid, "markdown": "y", "changeSummary": "z", "tags": ["a"]}),
    ]


def test_it_refuses_an_unknown_argument_in_every_tool_by_name_and_stores_nothing(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    editor_agent.give(page)
    for tool, arguments in calls(page):
        error = mcp.error(editor_agent, tool, **arguments)
        known = {"pageId", "markdown", "changeSummary", "title", "query", "edits"}
        (unknown,) = [key for key in arguments if key not in known]
        assert error.startswith(f"invalid_argument: {tool} does not take {unknown}"), error
        assert "Nothing was done" in error
    assert Version.objects.filter(page=page).count() == 1
    assert Page.objects.count() == 1
    refused = AuditEvent.objects.filter(outcome="invalid_argument").count()
    assert refused == len(calls(page))


def test_it_suggests_the_argument_a_misspelling_meant(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    editor_agent.give(page)
    error = mcp.error(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.\n",
        changeSummary="Faster.",
        baseVersoin=1,
    )
    assert "baseVersoin (did you mean baseVersion?)" in error
    assert "It takes pageId, changeSummary, markdown, title, tags, baseVersion." in error


def test_it_refuses_an_unknown_key_inside_an_edit(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    editor_agent.give(page)
    error = mcp.error(
        editor_agent,
        "edit_page",
        pageId=page.public_id,
        edits=[{"oldText": "5 days", "newText": "3 days", "count": 2}],
        changeSummary="Faster.",
    )
    assert error.startswith("invalid_argument: ") and "edits.0.count" in error
    assert Version.objects.filter(page=page).count() == 1


def test_it_still_answers_unknown_tool_for_a_write_tool_a_reader_lacks(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    reader_agent.give(page)
    error = mcp.error(reader_agent, "update_page", pageId=page.public_id, nonsense=1)
    assert error == "Unknown tool: update_page"
