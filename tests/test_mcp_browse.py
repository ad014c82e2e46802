"""browse through large sets: pages of 200, cursors, subtrees, size bound, compact audit."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents import browsing
from core.models import AuditEvent
from reviews.actions.create import page_create
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import MCP, AgentKey, rpc_tool

MakePage = Callable[..., Page]


def tree(editor: User, tops: int, children: int) -> list[Page]:
    """`tops` top-level pages, each followed by its `children` children, in tree order."""
    pages: list[Page] = []
    for n in range(tops):
        top = page_create(actor=editor, title=f"Area {n:03d}", body="About it.", publish=True).page
        pages.append(top)
        for m in range(children):
            pages.append(
                page_create(
                    actor=editor, title=f"Item {n:03d}-{m:03d}", body="x", parent=top, publish=True
                ).page
            )
    return pages


def browse_all(client: Client, token: str, **arguments: Any) -> list[dict[str, Any]]:
    """Every answer of a browse followed cursor by cursor."""
    answers = []
    cursor = None
    while True:
        extra: dict[str, Any] = {"cursor": cursor} if cursor else {}
        result = rpc_tool(client, token, "browse", **arguments, **extra)
        assert result["isError"] is False, result
        answers.append(result["structuredContent"])
        cursor = answers[-1]["nextCursor"]
        if cursor is None:
            return answers


@pytest.mark.django_db
def test_it_answers_a_set_of_200_pages_whole_in_the_old_shape(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 2, 99)
    key = make_agent("mid")
    key.give(pages[0], pages[100])
    answer = rpc_tool(client, key.token, "browse")["structuredContent"]
    assert set(answer) == {"pages"}
    assert [p["pageId"] for p in answer["pages"]] == [p.public_id for p in pages]


@pytest.mark.django_db
def test_it_pages_a_large_set_with_total_and_cursor_always_include_first(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 3, 149)  # 450 pages
    key = make_agent("big")
    key.give(pages[0], pages[150])
    key.give(pages[300], always=True)
    answers = browse_all(client, key.token)
    assert [len(a["pages"]) for a in answers] == [200, 200, 50]
    assert all(a["total"] == 450 for a in answers)
    listed = [p["pageId"] for a in answers for p in a["pages"]]
    # The always-include entry and its subtree first, then the curated order.
    expected = [p.public_id for p in pages[300:] + pages[:300]]
    assert listed == expected
    assert answers[0]["pages"][0]["alwaysInclude"] is True
    assert all(len(json.dumps(a, indent=2, ensure_ascii=False)) < 100_000 for a in answers)


@pytest.mark.django_db
def test_it_narrows_to_a_subtree_by_page_id_or_path(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 3, 149)
    key = make_agent("big")
    key.give(pages[0], pages[150], pages[300])
    by_id = browse_all(client, key.token, under=pages[150].public_id)
    by_path = browse_all(client, key.token, under=pages[150].path)
    assert by_id == by_path
    assert [p["pageId"] for a in by_id for p in a["pages"]] == [p.public_id for p in pages[150:300]]
    assert by_id[0]["total"] == 150 and by_id[0]["nextCursor"] is None
    child = pages[151]
    one = rpc_tool(client, key.token, "browse", under=child.path)["structuredContent"]
    assert [p["pageId"] for p in one["pages"]] == [child.public_id]


@pytest.mark.django_db
def test_it_continues_after_the_last_page_even_if_the_set_changed(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 3, 149)
    key = make_agent("big")
    key.give(pages[0], pages[150], pages[300])
    first = rpc_tool(client, key.token, "browse")["structuredContent"]
    wiki_services.page_archive(actor=editor, page=pages[10])  # a page already shown leaves the set
    second = rpc_tool(client, key.token, "browse", cursor=first["nextCursor"])
    assert second["structuredContent"]["pages"][0]["pageId"] == pages[200].public_id


@pytest.mark.django_db
def test_it_keeps_every_answer_under_100000_characters(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 1, 120)
    key = make_agent("wordy")
    key.give(pages[0], use_when=[f"Use it when {n} " + "x" * 280 for n in range(10)])
    answers = browse_all(client, key.token)
    assert len(answers) > 1
    for answer in answers:
        assert len(json.dumps(answer, indent=2, ensure_ascii=False)) < 100_000
    assert sum(len(a["pages"]) for a in answers) == 121


@pytest.mark.django_db
def test_it_refuses_a_bad_cursor_or_an_unknown_subtree_with_what_to_do(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 1, 3)
    key = make_agent("small")
    key.give(pages[0])
    result = rpc_tool(client, key.token, "browse", cursor="not-a-cursor")
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid_argument: cursor is not one")
    result = rpc_tool(client, key.token, "browse", under="nowhere/at-all")
    assert result["isError"] is True
    assert "call browse without under" in result["content"][0]["text"]


@pytest.mark.django_db
def test_it_audits_a_browse_in_a_few_hundred_bytes(
    client: Client, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 3, 149)
    key = make_agent("big")
    key.give(pages[0], pages[150], pages[300])
    rpc_tool(client, key.token, "browse")
    row = AuditEvent.objects.filter(action="mcp.browse").get()
    assert row.data["returned"] == 200 and row.data["total"] == 450
    assert row.data["first"] == pages[0].public_id and row.data["last"] == pages[199].public_id
    assert len(json.dumps(row.data)) < 400


def test_it_pages_through_the_official_client(
    mcp: MCP, editor: User, make_agent: Callable[..., AgentKey]
) -> None:
    pages = tree(editor, 1, 205)
    key = make_agent("client")
    key.give(pages[0])
    first = mcp.ok(key, "browse")
    second = mcp.ok(key, "browse", cursor=first["nextCursor"])
    assert first["total"] == second["total"] == 206
    assert len(first["pages"]) == 200 and len(second["pages"]) == 6
    assert second["nextCursor"] is None


@pytest.mark.django_db
def test_a_set_past_the_count_cap_says_its_total_is_a_lower_bound_and_pages_on(
    client: Client, editor: User, make_agent: Callable[..., AgentKey], monkeypatch: Any
) -> None:
    """Issue 51: browse counts a large set only so far (10,000 pages; 250 here). Past that,
    `total` is the count so far and `totalIsLowerBound` says so; a later page, counted
    further, is exact again, and the cursors still list every page once."""
    monkeypatch.setattr(browsing, "COUNT_CAP", 250)
    pages = tree(editor, 1, 299)  # one entry of 300 pages
    key = make_agent("big")
    key.give(pages[0])
    answers = browse_all(client, key.token)
    assert [len(a["pages"]) for a in answers] == [200, 100]
    assert answers[0]["total"] == 251 and answers[0]["totalIsLowerBound"] is True
    assert answers[1]["total"] == 300 and "totalIsLowerBound" not in answers[1]
    assert [p["pageId"] for a in answers for p in a["pages"]] == [p.public_id for p in pages]
