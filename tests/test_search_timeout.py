"""A search that runs too long is stopped and answered "try again", never a 500: MCP
`rate_limited` with the next step, REST 503 with Retry-After; the next search works."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents import services as agent_services
from core.actors import SystemActor
from core.errors import TryAgain
from tests.bulk import make_live
from wiki import search
from wiki.models import Page
from wiki.search import search_pages

from .fixtures_mcp import rpc_tool

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
