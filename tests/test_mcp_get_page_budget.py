"""get_page stays within its budget: includes packed up to maxChars, the rest in notIncluded."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from wiki.models import Page

from .fixtures_mcp import AgentKey, rpc_tool

MakePage = Callable[..., Page]

pytestmark = pytest.mark.django_db


def hub(make_page: MakePage, key: AgentKey, sizes: list[int]) -> tuple[Page, list[Page]]:
    referenced = [make_page(f"Part {n}", "w" * size) for n, size in enumerate(sizes)]
    page = make_page(
        "Hub", "Start here.", instructions=" ".join(f"[[{p.public_id}]]" for p in referenced)
    )
    key.give(page, *referenced)
    return page, referenced


def text_of(result: dict[str, Any]) -> str:
    assert result["isError"] is False, result
    text: str = result["content"][0]["text"]
    return text


def test_it_packs_includes_under_24000_characters_by_default(
    client: Client, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page, parts = hub(make_page, reader_agent, [9_000, 9_000, 9_000, 100])
    result = rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)
    text = text_of(result)
    packed = json.loads(text)
    assert len(text) < 24_000
    # In reference order, skipping one that does not fit but taking a later one that does.
    assert [i["pageId"] for i in packed["includes"]] == [
        parts[0].public_id,
        parts[1].public_id,
        parts[3].public_id,
    ]
    assert packed["notIncluded"] == [{"pageId": parts[2].public_id, "title": "Part 2"}]
    assert "call get_page" in packed["hint"]


def test_it_takes_a_smaller_or_larger_budget_from_max_chars(
    client: Client, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page, parts = hub(make_page, reader_agent, [9_000, 9_000, 9_000])
    small = json.loads(
        text_of(
            rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id, maxChars=5_000)
        )
    )
    assert small["includes"] == []
    assert [p["pageId"] for p in small["notIncluded"]] == [p.public_id for p in parts]
    large_text = text_of(
        rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id, maxChars=50_000)
    )
    large = json.loads(large_text)
    assert len(large["includes"]) == 3 and large["notIncluded"] == [] and "hint" not in large
    assert len(large_text) < 50_000


def test_it_refuses_a_max_chars_out_of_range(
    client: Client, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page, _ = hub(make_page, reader_agent, [10])
    result = rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id, maxChars=10)
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid_argument: ")
    assert "maxChars" in result["content"][0]["text"]
