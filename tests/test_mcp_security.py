"""MCP security: agents stay in their page set, see live content only, need a valid token."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from mcp.types import TextContent

from agents import services as agent_services
from agents.models import PageSetEntry
from core.actors import SystemActor
from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]
MakeAgent = Callable[..., AgentKey]
ACCEPT = "application/json, text/event-stream"


def raw_post(mcp: MCP, body: Any, token: str | None, **headers: str) -> httpx.Response:
    """One POST to /mcp without the official client, to see the HTTP answer itself."""
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        mcp.url,
        content=content,
        headers={"Accept": ACCEPT, "Content-Type": "application/json", **headers},
        timeout=HTTP_TIMEOUT,
        verify=TLS,
    )


def tools_call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def counts() -> tuple[int, int, int]:
    return Page.objects.count(), Version.objects.count(), PageSetEntry.objects.count()


@pytest.fixture
def inside_and_outside(make_page: MakePage, reader_agent: AgentKey) -> tuple[Page, Page]:
    inside = make_page("Support", "How to help customers with a parcel.")
    outside = make_page("Payroll secrets", "The parcel budget is 1234567 dollars.")
    reader_agent.give(inside)
    return inside, outside


def test_it_refuses_to_read_a_page_outside_the_set(
    mcp: MCP, reader_agent: AgentKey, inside_and_outside: tuple[Page, Page]
) -> None:
    _, outside = inside_and_outside
    error = mcp.error(reader_agent, "get_page", pageId=outside.public_id)
    missing = mcp.error(reader_agent, "get_page", pageId="pg_zzzzzzzz")
    # Word for word what a page that does not exist gets: nothing says this one does.
    assert error == missing.replace("pg_zzzzzzzz", outside.public_id)
    assert error.startswith("not_found: ") and "Call browse" in error
    assert "1234567" not in error


def test_it_never_finds_or_excerpts_pages_outside_the_set(
    mcp: MCP, reader_agent: AgentKey, inside_and_outside: tuple[Page, Page]
) -> None:
    inside, _ = inside_and_outside
    results = mcp.ok(reader_agent, "search_pages", query="parcel")["results"]
    assert [r["pageId"] for r in results] == [inside.public_id]
    assert mcp.ok(reader_agent, "search_pages", query="1234567")["results"] == []
    assert mcp.ok(reader_agent, "search_pages", query="payroll secrets")["results"] == []


def test_it_does_not_browse_pages_outside_the_set(
    mcp: MCP, reader_agent: AgentKey, inside_and_outside: tuple[Page, Page], make_page: MakePage
) -> None:
    inside, _ = inside_and_outside
    # A sibling whose path merely starts with the same letters is not under the entry.
    make_page("Support team", "x")
    assert [p["pageId"] for p in mcp.ok(reader_agent, "browse")["pages"]] == [inside.public_id]


def test_it_lists_references_outside_the_set_as_unavailable_without_their_content(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey, inside_and_outside: tuple[Page, Page]
) -> None:
    _, outside = inside_and_outside
    page = make_page("Index", "x", instructions=f"Read [[{outside.public_id}]].")
    reader_agent.give(page)
    result = mcp.call(reader_agent, "get_page", pageId=page.public_id)
    assert result.structuredContent is not None
    assert result.structuredContent["includes"] == []
    assert result.structuredContent["unavailable"] == [outside.public_id]
    (item,) = result.content
    assert isinstance(item, TextContent)
    assert "1234567" not in item.text


def test_it_refuses_a_parent_outside_the_set_and_writes_nothing(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    inside, outside = make_page("Inside"), make_page("Outside")
    editor_agent.give(inside)
    before = counts()
    error = mcp.error(
        editor_agent, "create_page", title="Sneaky", markdown="x", parentId=outside.public_id
    )
    assert error == (
        f"not_found: there is no page {outside.public_id} that you can read. "
        "Call browse to list the pages you can use."
    )
    assert counts() == before


def test_it_refuses_to_change_or_show_the_source_of_pages_outside_the_set(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    inside, outside = make_page("Inside"), make_page("Outside", "secret words")
    editor_agent.give(inside)
    before = counts()
    for tool, arguments in [
        ("get_page_source", {}),
        ("update_page", {"markdown": "mine now", "changeSummary": "x"}),
        ("append_to_page", {"markdown": "more", "changeSummary": "x"}),
    ]:
        error = mcp.error(editor_agent, tool, pageId=outside.public_id, **arguments)
        missing = mcp.error(editor_agent, tool, pageId="pg_zzzzzzzz", **arguments)
        assert error == missing.replace("pg_zzzzzzzz", outside.public_id), tool
        assert "secret words" not in error
    assert counts() == before


def test_it_treats_write_tools_as_unknown_for_a_reader_agent_and_writes_nothing(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey, editor_agent: AgentKey
) -> None:
    page = make_page("Shared")
    reader_agent.give(page)
    editor_agent.give(page)
    # The library caches the tool list across requests: an editor listing all nine first
    # must not open the write tools to the reader.
    assert len(mcp.tool_names(editor_agent)) == 9
    before = counts()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("create_page", {"title": "New", "markdown": "x"}),
        ("update_page", {"pageId": page.public_id, "markdown": "y", "changeSummary": "x"}),
        ("append_to_page", {"pageId": page.public_id, "markdown": "y", "changeSummary": "x"}),
        ("get_page_source", {"pageId": page.public_id}),
        ("edit_page", {"pageId": page.public_id, "edits": [], "changeSummary": "x"}),
    ]
    for tool, arguments in calls:
        assert mcp.error(reader_agent, tool, **arguments) == f"Unknown tool: {tool}"
    assert counts() == before
    outcomes = AuditEvent.objects.filter(actor_agent=reader_agent.agent)
    assert set(outcomes.values_list("outcome", flat=True)) == {"unknown_tool"}


def test_it_answers_401_with_www_authenticate_without_a_valid_token(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    # QUIRE_BASE_URL's, not the Host the request came to (tests/test_oauth_hardening.py).
    metadata = f'resource_metadata="{settings.QUIRE_BASE_URL}'
    metadata += '/.well-known/oauth-protected-resource/mcp"'
    for token in [None, "qa_not-a-real-token", reader_agent.token + "x", "qo_not-an-oauth-token"]:
        response = raw_post(mcp, tools_call("browse"), token)
        assert response.status_code == 401, token
        # Where an OAuth client starts (RFC 9728); a token that was sent is named invalid.
        error = 'error="invalid_token", ' if token else ""
        assert response.headers["WWW-Authenticate"] == f"Bearer {error}{metadata}"
        assert response.json()["error"].endswith(".")
    basic = raw_post(mcp, tools_call("browse"), None, Authorization="Basic dXNlcjpwYXNz")
    assert basic.status_code == 401


def test_it_refuses_a_rotated_token_on_the_next_call(
    mcp: MCP, reader_agent: AgentKey, make_page: MakePage
) -> None:
    reader_agent.give(make_page("Refunds"))
    assert mcp.ok(reader_agent, "browse")["pages"]
    new_token = agent_services.agent_token_rotate(
        actor=SystemActor("tests"), agent=reader_agent.agent
    )
    response = raw_post(mcp, tools_call("browse"), reader_agent.token)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token", ')
    with pytest.raises(Exception) as failure:
        mcp.call(reader_agent, "browse")
    assert "401" in repr(failure.value) or "Unauthorized" in repr(failure.value)
    assert mcp.ok(new_token, "browse")["pages"]


def test_it_refuses_a_revoked_token_on_the_next_call(
    mcp: MCP, reader_agent: AgentKey, make_page: MakePage
) -> None:
    reader_agent.give(make_page("Refunds"))
    assert mcp.ok(reader_agent, "browse")["pages"]
    agent_services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
    response = raw_post(mcp, tools_call("browse"), reader_agent.token)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith('Bearer error="invalid_token", ')


def test_it_answers_get_with_405(mcp: MCP, reader_agent: AgentKey) -> None:
    response = httpx.get(
        mcp.url,
        headers={"Authorization": f"Bearer {reader_agent.token}", "Accept": ACCEPT},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"


def test_it_refuses_a_foreign_origin_with_403(
    mcp: MCP, reader_agent: AgentKey, settings: Any
) -> None:
    settings.QUIRE_MCP_ALLOWED_ORIGINS = ["https://inspector.example:6274"]
    foreign = raw_post(mcp, tools_call("browse"), reader_agent.token, Origin="https://evil.example")
    assert foreign.status_code == 403
    assert raw_post(mcp, tools_call("browse"), None, Origin="null").status_code == 403
    for allowed in [
        settings.QUIRE_BASE_URL,
        "https://inspector.example:6274",
        mcp.url.removesuffix("/mcp"),
    ]:
        response = raw_post(mcp, tools_call("browse"), reader_agent.token, Origin=allowed)
        assert response.status_code == 200, allowed


def test_it_hides_agent_proposals_from_every_agent_until_a_reviewer_approves(
    mcp: MCP,
    make_page: MakePage,
    make_agent: MakeAgent,
    editor_agent: AgentKey,
    reviewer: User,
) -> None:
    section = make_page("Support", "Section.")
    page = make_page("Refunds", "Refunds take 30 days.", parent=section)
    editor_agent.give(section)
    other = make_agent("other-bot", can_edit=True, pages=(section,))
    mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 5 zanzibar days.",
        changeSummary="Faster.",
        baseVersion=1,
    )
    created = mcp.ok(
        editor_agent,
        "create_page",
        title="Chargebacks",
        markdown="Quokka procedure.",
        parentId=section.public_id,
    )
    for key in (editor_agent, other):
        packed = mcp.ok(key, "get_page", pageId=page.public_id)
        assert packed["content"] == "Refunds take 30 days." and packed["versionNumber"] == 1
        assert mcp.ok(key, "search_pages", query="zanzibar")["results"] == []
        assert mcp.ok(key, "search_pages", query="quokka")["results"] == []
        assert created["pageId"] not in {p["pageId"] for p in mcp.ok(key, "browse")["pages"]}
        assert mcp.error(key, "get_page", pageId=created["pageId"]).startswith("not_found: ")
    # Another agent cannot read the draft through get_page_source either.
    assert mcp.ok(other, "get_page_source", pageId=page.public_id)["markdown"] == (
        "Refunds take 30 days."
    )
    assert mcp.error(other, "get_page_source", pageId=created["pageId"]).startswith("not_found")

    for version in Version.objects.filter(author_agent=editor_agent.agent):
        version_approve(actor=reviewer, version=version)
    for key in (editor_agent, other):
        assert mcp.ok(key, "get_page", pageId=page.public_id)["content"] == (
            "Refunds take 5 zanzibar days."
        )
        assert [r["pageId"] for r in mcp.ok(key, "search_pages", query="quokka")["results"]] == [
            created["pageId"]
        ]
        assert created["pageId"] in {p["pageId"] for p in mcp.ok(key, "browse")["pages"]}


def test_it_never_shows_another_authors_pending_draft_in_get_page_source(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey, reader: User
) -> None:
    page = make_page("Refunds", "Live.")
    editor_agent.give(page)
    version_propose(actor=reader, page=page, body="A human's draft.", change_summary="x")
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["markdown"] == "Live."
    assert source["pending"] == [] and source["inReview"] is False


def test_it_answers_malformed_json_with_a_json_rpc_parse_error(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    response = raw_post(mcp, b'{"jsonrpc": "2.0", "method": ', reader_agent.token)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700
    assert response.json()["jsonrpc"] == "2.0"


@pytest.mark.parametrize(
    "body",
    [
        {"hello": "world"},
        [1, 2, 3],
        "just a string",
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "not an object"},
    ],
)
def test_it_answers_a_body_that_is_not_json_rpc_with_a_protocol_error(
    mcp: MCP, reader_agent: AgentKey, body: Any
) -> None:
    response = raw_post(mcp, body, reader_agent.token)
    assert 400 <= response.status_code < 500
    assert "error" in response.json()


def test_it_answers_an_unknown_method_with_a_json_rpc_error(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    body = {"jsonrpc": "2.0", "id": 3, "method": "pages/steal", "params": {}}
    response = raw_post(mcp, body, reader_agent.token)
    assert response.status_code == 200
    assert response.json()["id"] == 3
    assert response.json()["error"]["code"] in {-32601, -32602}


def test_it_answers_plain_json_rpc_tool_calls_without_a_session(
    mcp: MCP, reader_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("Refunds")
    reader_agent.give(page)
    response = raw_post(mcp, tools_call("get_page", pageId=page.public_id), reader_agent.token)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["pageId"] == page.public_id


def test_it_answers_a_tool_that_does_not_exist_as_unknown_and_audits_it(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    for name in ["delete_page", "x" * 500]:
        assert mcp.error(editor_agent, name) == f"Unknown tool: {name}"
    actions = AuditEvent.objects.filter(outcome="unknown_tool").values_list("action", flat=True)
    assert sorted(actions) == sorted(["mcp.delete_page", "mcp." + "x" * 50])
