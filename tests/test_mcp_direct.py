"""Tool calls answered in the request thread say exactly what the library's path says."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from agents import mcp_views
from core.models import AuditEvent
from wiki.models import Page

from .fixtures_mcp import AgentKey, rpc

pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]


def both_paths(
    client: Client, monkeypatch: pytest.MonkeyPatch, token: str, tool: str, arguments: Any
) -> tuple[Any, Any]:
    params = {"name": tool, "arguments": arguments}
    direct = rpc(client, token, "tools/call", params)
    with monkeypatch.context() as patch:
        patch.setattr(mcp_views, "direct_tool_call", lambda request, agent: None)
        library = rpc(client, token, "tools/call", params)
    assert direct.status_code == library.status_code == 200
    assert direct["Content-Type"] == library["Content-Type"] == "application/json"
    return json.loads(direct.content), json.loads(library.content)


def test_it_answers_every_kind_of_call_as_the_library_does(
    client: Client,
    make_page: MakePage,
    editor_agent: AgentKey,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.", tags=["money"])
    outside = make_page("Margins", "Secret.")
    editor_agent.give(page)
    calls: list[tuple[str, Any]] = [
        ("browse", {}),
        ("search_pages", {"query": "refunds"}),
        ("get_page", {"pageId": page.public_id}),
        ("get_page", {"pageId": outside.public_id}),  # not_in_set
        ("get_page", {"pageId": "pg_zzzzzzzz"}),  # not_found
        ("get_page", {}),  # invalid arguments
        ("search_pages", {"query": "x" * 300}),  # invalid_argument from the tool
        ("get_page_source", {"pageId": page.public_id}),
        ("no_such_tool", {}),
    ]
    for tool, arguments in calls:
        direct, library = both_paths(client, monkeypatch, editor_agent.token, tool, arguments)
        assert direct == library, tool
    assert AuditEvent.objects.filter(action="mcp.get_page").count() == 8


def test_it_leaves_anything_but_a_plain_tool_call_to_the_library(
    client: Client, reader_agent: AgentKey
) -> None:
    listing = rpc(client, reader_agent.token, "tools/list")
    assert [t["name"] for t in listing.json()["result"]["tools"]] == [
        "browse",
        "search_pages",
        "get_page",
        "recent_activity",
    ]
    old = client.post(
        "/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}),
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_AUTHORIZATION=f"Bearer {reader_agent.token}",
        HTTP_MCP_PROTOCOL_VERSION="1999-01-01",
    )
    assert old.status_code == 400
