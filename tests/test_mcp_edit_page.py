"""edit_page: partial edits that become ordinary replace proposals, or clear refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews import merge
from reviews.actions.propose import version_propose
from reviews.diff import unified_diff
from wiki.models import Page, Version, VersionKind, VersionStatus

from .fixtures_mcp import MCP, AgentKey, rpc_tool

MakePage = Callable[..., Page]

LONG = "".join(f"Line {n}: the office opens at {n % 12 + 1}.\n" for n in range(1, 400))


def edits(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"oldText": old, "newText": new} for old, new in pairs]


def error_text(result: dict[str, Any]) -> str:
    assert result["isError"] is True, result
    text: str = result["content"][0]["text"]
    return text


@pytest.mark.django_db
def test_it_proposes_a_one_line_fix_as_a_replace_of_the_whole_page(
    client: Client, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Hours", LONG)
    editor_agent.give(page)
    result = rpc_tool(
        client,
        editor_agent.token,
        "edit_page",
        pageId=page.public_id,
        edits=edits(("Line 200: the office opens at 9.", "Line 200: the office opens at 10.")),
        changeSummary="Fix the hour.",
    )
    assert result["isError"] is False, result
    written = result["structuredContent"]
    assert written["status"] == "in_review" and written["versionNumber"] == 2
    version = Version.objects.get(page=page, number=2)
    assert version.kind == VersionKind.REPLACE and version.status == VersionStatus.IN_REVIEW
    assert version.body == LONG.replace("opens at 9.\nLine 201", "opens at 10.\nLine 201")
    assert version.base_version is not None and version.base_version.number == 1
    diff = unified_diff(LONG, version.body, old_name="v1", new_name="v2")
    assert "-Line 200: the office opens at 9." in diff
    assert "+Line 200: the office opens at 10." in diff


@pytest.mark.django_db
def test_it_applies_edits_in_order_on_the_agents_own_draft(
    client: Client, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    editor_agent.give(page)
    rpc_tool(
        client,
        editor_agent.token,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.\nAsk first.\n",
        changeSummary="Faster.",
        baseVersion=1,
    )
    result = rpc_tool(
        client,
        editor_agent.token,
        "edit_page",
        pageId=page.public_id,
        edits=edits(("3 days", "2 days"), ("2 days.\nAsk", "2 days.\nAlways ask")),
        changeSummary="Even faster.",
    )
    assert result["isError"] is False, result
    assert "replaces your earlier proposal v2" in result["structuredContent"]["message"]
    version = Version.objects.get(page=page, number=3)
    assert version.body == "Refunds take 2 days.\nAlways ask first.\n"
    assert Version.objects.get(page=page, number=2).status == VersionStatus.WITHDRAWN


@pytest.mark.django_db
def test_it_refuses_an_old_text_found_zero_times_showing_the_nearest_line(
    client: Client, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Hours", LONG)
    editor_agent.give(page)
    text = error_text(
        rpc_tool(
            client,
            editor_agent.token,
            "edit_page",
            pageId=page.public_id,
            edits=edits(("Line 250: the ofice opens at 11.", "x")),
            changeSummary="Fix.",
        )
    )
    assert text.startswith("invalid_argument: the oldText of the edit occurs 0 times")
    assert "nearest line 250: 'Line 250: the office opens at 11.'" in text
    assert Version.objects.filter(page=page).count() == 1


@pytest.mark.django_db
def test_it_refuses_an_old_text_found_several_times_and_stores_nothing(
    client: Client, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Hours", "Open at 9.\nClose at 5.\nOpen at 9.\n")
    editor_agent.give(page)
    text = error_text(
        rpc_tool(
            client,
            editor_agent.token,
            "edit_page",
            pageId=page.public_id,
            edits=edits(("Close at 5.", "Close at 6."), ("Open at 9.", "Open at 8.")),
            changeSummary="Fix.",
        )
    )
    assert "edit 2 of 2 occurs 2 times" in text
    assert "at lines 1, 3" in text and "nearest line 1: 'Open at 9.'" in text
    assert Version.objects.filter(page=page).count() == 1


@pytest.mark.django_db
def test_it_marks_a_proposal_against_an_older_base_version_as_stale(
    client: Client, make_page: MakePage, editor_agent: AgentKey, editor: User
) -> None:
    page = make_page("Hours", "Open at 9.\nClose at 5.\n")
    editor_agent.give(page)
    version_propose(
        actor=editor, page=page, body="Open at 9.\nClose at 5.\nShut on Sundays.\n", publish=True
    )
    result = rpc_tool(
        client,
        editor_agent.token,
        "edit_page",
        pageId=page.public_id,
        edits=edits(("Open at 9.", "Open at 8.")),
        changeSummary="Earlier.",
        baseVersion=1,
    )
    assert result["isError"] is False, result
    version = Version.objects.get(page=page, number=3)
    assert merge.is_stale(version)
    merged = merge.merge_proposal(version)
    assert merged["conflicts"] == []
    assert merged["fields"]["body"] == "Open at 8.\nClose at 5.\nShut on Sundays.\n"


def test_it_is_listed_and_called_through_the_official_client(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey, reader_agent: AgentKey
) -> None:
    page = make_page("Hours", "Open at 9.\n")
    editor_agent.give(page)
    reader_agent.give(page)
    written = mcp.ok(
        editor_agent,
        "edit_page",
        pageId=page.public_id,
        edits=edits(("9", "8")),
        changeSummary="Earlier.",
    )
    assert set(written) == {"pageId", "title", "versionNumber", "status", "message", "changed"}
    assert written["changed"] == [{"line": 1, "before": "Open at 9.", "after": "Open at 8."}]
    assert mcp.error(reader_agent, "edit_page", pageId=page.public_id) == "Unknown tool: edit_page"
