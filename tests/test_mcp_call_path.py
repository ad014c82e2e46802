"""One path to a tool: a tools/call answered by the view and one that reaches the library
run the same `call_tool_for` and say exactly the same thing."""

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


def both_ways(
    client: Client, monkeypatch: pytest.MonkeyPatch, token: str, tool: str, arguments: Any
) -> tuple[Any, Any]:
    params = {"name": tool, "arguments": arguments}
    by_view = rpc(client, token, "tools/call", params)
    with monkeypatch.context() as patch:
        patch.setattr(mcp_views, "is_tool_call", lambda request: False)
        by_library = rpc(client, token, "tools/call", params)
    assert by_view.status_code == by_library.status_code == 200
    assert by_view["Content-Type"] == by_library["Content-Type"] == "application/json"
    return json.loads(by_view.content), json.loads(by_library.content)


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
        ("get_page", {"pageId": outside.public_id}),  # outside the set: not_found too
        ("get_page", {"pageId": "pg_zzzzzzzz"}),  # not_found
        ("get_page", {}),  # invalid arguments
        ("get_page", {"pageId": page.public_id, "maxChars": 10}),  # out of range
        ("search_pages", {"query": "x" * 300}),  # invalid_argument from the tool
        ("get_page_source", {"pageId": page.public_id}),
        ("edit_page", {"pageId": page.public_id, "edits": "no", "changeSummary": "x"}),
        ("no_such_tool", {}),
    ]
    for tool, arguments in calls:
        by_view, by_library = both_ways(client, monkeypatch, editor_agent.token, tool, arguments)
        assert by_view == by_library, tool
    assert AuditEvent.objects.filter(action="mcp.get_page").count() == 10


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


def test_it_runs_a_tool_call_of_an_odd_shape_through_the_same_checks(
    client: Client, make_page: MakePage, reader_agent: AgentKey
) -> None:
    # `arguments: null` is not the view's to answer; the library's call still goes through
    # call_tool_for: the rights check, the audit row.
    answer = rpc(client, reader_agent.token, "tools/call", {"name": "get_page_source"})
    by_library = client.post(
        "/mcp",
        data=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "get_page_source", "arguments": None},
            }
        ),
        content_type="application/json",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_AUTHORIZATION=f"Bearer {reader_agent.token}",
    )
    assert answer.json()["result"]["content"][0]["text"] == "Unknown tool: get_page_source"
    assert by_library.json()["result"] == answer.json()["result"]
    refused = AuditEvent.objects.filter(action="mcp.get_page_source", outcome="unknown_tool")
    assert refused.count() == 2
