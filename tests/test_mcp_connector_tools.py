"""ChatGPT's connectors (issue 49, point 9): deep research and company knowledge call tools
named `search` and `fetch` with one string each; an agent set to offer them lists them,
mapped to search_pages and get_page over the same page set, shaped as OpenAI's spec says."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from agents import services as agent_services
from agents.models import Agent
from core.actors import SystemActor
from core.models import AuditEvent
from tests.fixtures_mcp import MCP, AgentKey
from tests.test_mcp_long_pages import long_page_text, text_of
from wiki.models import Page

pytestmark = pytest.mark.django_db(transaction=True)


def offering(key: AgentKey) -> AgentKey:
    agent_services.agent_update(actor=SystemActor("tests"), agent=key.agent, connector_tools=True)
    return key


def listed(mcp: MCP, key: AgentKey) -> dict[str, Any]:
    async def listing(session: Any) -> dict[str, Any]:
        return {tool.name: tool for tool in (await session.list_tools()).tools}

    return mcp.run(key.token, listing)


def page_address(page: Page) -> str:
    return settings.QUIRE_BASE_URL.rstrip("/") + f"/p/{page.public_id}/"


def test_an_agent_offers_search_and_fetch_only_when_set_to(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    assert not {"search", "fetch"} & set(listed(mcp, reader_agent))
    assert mcp.error(reader_agent, "search", query="refunds") == "Unknown tool: search"

    tools = listed(mcp, offering(reader_agent))

    assert list(tools)[-2:] == ["search", "fetch"]
    for name, argument in (("search", "query"), ("fetch", "id")):
        schema = tools[name].inputSchema
        assert schema["properties"][argument]["type"] == "string"
        assert list(schema["properties"]) == [argument] and schema["required"] == [argument]
        assert tools[name].annotations.readOnlyHint is True


def test_search_answers_as_the_connector_spec_says_within_the_set(
    mcp: MCP, make_page: Callable[..., Page], make_agent: Callable[..., AgentKey]
) -> None:
    inside = make_page("Refund policy", "Refunds take five days.\n")
    outside = make_page("Refund secrets", "Refunds for friends.\n")
    key = offering(make_agent("support-bot", pages=(inside,)))

    result = mcp.call(key, "search", query="refunds")

    assert not result.isError
    expected = {
        "results": [{"id": inside.public_id, "title": "Refund policy", "url": page_address(inside)}]
    }
    assert json.loads(text_of(result)) == expected == result.structuredContent
    assert outside.public_id not in text_of(result)
    row = AuditEvent.objects.filter(actor_agent=key.agent).latest("pk")
    assert (row.action, row.outcome) == ("mcp.search", "ok")


def test_fetch_answers_as_the_connector_spec_says_and_hides_what_is_outside(
    mcp: MCP, make_page: Callable[..., Page], make_agent: Callable[..., AgentKey]
) -> None:
    page = make_page("Refund policy", "Refunds take five days.\n", tags=["money"])
    outside = make_page("Salaries", "Secret.\n")
    key = offering(make_agent("support-bot", pages=(page,)))

    document = mcp.ok(key, "fetch", id=page.public_id)

    assert document == {
        "id": page.public_id,
        "title": "Refund policy",
        "text": "Refunds take five days.\n",
        "url": page_address(page),
        "metadata": {
            "path": document["metadata"]["path"],
            "versionNumber": 1,
            "updated": document["metadata"]["updated"],
            "tags": ["money"],
        },
    }
    hidden = mcp.error(key, "fetch", id=outside.public_id)
    assert hidden == mcp.error(key, "fetch", id="pg_zzzzzzzz").replace(
        "pg_zzzzzzzz", outside.public_id
    )
    assert hidden.startswith("not_found: ")


def test_fetch_gives_a_long_page_as_its_lead_and_the_ids_of_its_sections(
    mcp: MCP, make_page: Callable[..., Page], make_agent: Callable[..., AgentKey]
) -> None:
    page = make_page("Handbook", long_page_text())
    key = offering(make_agent("support-bot", pages=(page,)))

    outline = mcp.ok(key, "fetch", id=page.public_id)

    assert outline["text"].startswith("Welcome to the handbook.")
    assert f"- Rules 2: {page.public_id}#" in outline["text"]
    rules_2 = outline["text"].split("- Rules 2: ", 1)[1].split("\n", 1)[0]
    part = mcp.ok(key, "fetch", id=rules_2)
    assert part["id"] == rules_2 and part["text"].startswith("## Rules 2\n")
    assert part["url"] == page_address(page)


def test_an_admin_sets_the_flag_on_the_agents_screen(
    client_as: Callable[..., Client], admin_user: Any, make_agent: Callable[..., AgentKey]
) -> None:
    key = make_agent("support-bot")
    admin = client_as(admin_user)
    detail = admin.get(reverse("agents:detail", args=[key.agent.pk])).content.decode()
    assert "Offer search and fetch (ChatGPT connectors)" in detail

    response = admin.post(
        reverse("agents:edit", args=[key.agent.pk]),
        {"name": "support-bot", "connector_tools": "on"},
    )

    assert response.status_code == 302
    assert Agent.objects.get(pk=key.agent.pk).connector_tools is True
    row = AuditEvent.objects.filter(action="agent.update").latest("pk")
    assert row.data["connectorTools"] is True


def test_the_create_agent_command_sets_the_flag() -> None:
    out = StringIO()
    call_command("create_agent", "chatgpt-bot", "--connector-tools", stdout=out)
    assert Agent.objects.get(name="chatgpt-bot").connector_tools is True
