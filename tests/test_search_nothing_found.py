"""A question the wiki cannot answer finds nothing (issue 49, point 3): on the tldr pages,
nonsense and unrelated questions, however short, meet the model's similarity floor over MCP
and in the web search, which then shows its empty state; real questions still find their page.

The language identifier takes a short question for a language nobody writes it in
("purple elephant" is Xhosa, "zzzxqy" no language at all), which used to drop the floor.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent

from .fixtures_mcp import rpc_tool
from .test_search_question_sets import sources, tldr  # noqa: F401 - the fixture

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

NONSENSE = ["zzzxqy", "purple elephant", "recipe for banana bread"]


def results(client: Client, token: str, query: str) -> list[dict[str, Any]]:
    answer = rpc_tool(client, token, "search_pages", query=query)
    assert answer["isError"] is False, answer
    found: list[dict[str, Any]] = answer["structuredContent"]["results"]
    return found


def test_it_finds_nothing_for_nonsense_over_mcp(
    client: Client,
    tldr: tuple[Agent, str],  # noqa: F811 - the fixture
) -> None:
    _, token = tldr
    for query in NONSENSE:
        assert results(client, token, query) == [], query


def test_it_still_finds_the_page_a_short_question_asks_for(
    client: Client,
    tldr: tuple[Agent, str],  # noqa: F811 - the fixture
) -> None:
    _, token = tldr
    for query, expected in [
        ("unpack a zip archive", "pages/common/unzip.md"),
        ("tar", "pages/common/tar.md"),
        ("list running containers", "pages/common/docker-ps.md"),
    ]:
        found = sources([hit["pageId"] for hit in results(client, token, query)])
        assert any(path.endswith(expected) for path in found[:3]), (query, found)


def test_the_web_search_shows_its_empty_state_for_nonsense(
    client: Client,
    admin_user: User,
    tldr: tuple[Agent, str],  # noqa: F811 - the fixture
) -> None:
    client.force_login(admin_user)
    for query in NONSENSE:
        page = client.get("/search/", {"q": query}).content.decode()
        assert "No pages match" in page, query
        assert 'class="result"' not in page, query
