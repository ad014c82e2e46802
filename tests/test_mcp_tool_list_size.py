"""The tool list costs less than the work (issue 49, point 1): an agent's tools/list, as the
official client receives it over HTTP, stays within a budget, and still gives clients typed
results and agents the next call to make. (fastmcp 3 and 4 building `.data` from the compact
output schemas: tests/test_mcp_truth.py.)"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from typing import Any

import jsonschema
import pytest
from mcp import ClientSession
from mcp.types import ListToolsResult

from agents.mcp import READ_TOOLS, WRITE_TOOLS
from tests.fixtures_mcp import MCP, AgentKey
from tests.sdk_venvs import python_with
from tests.test_readme import _mcp_2_version
from wiki.models import Page

pytestmark = pytest.mark.django_db(transaction=True)

EDITOR_LIST_MAX = 12_000
READER_LIST_MAX = 5_000


def listed(mcp: MCP, key: AgentKey) -> ListToolsResult:
    async def listing(session: ClientSession) -> ListToolsResult:
        return await session.list_tools()

    return mcp.run(key.token, listing)


def size(result: ListToolsResult) -> int:
    """The tools/list result's length as JSON, as a client hands it to its model."""
    return len(json.dumps(result.model_dump(mode="json", by_alias=True, exclude_none=True)))


def test_an_editing_agents_tool_list_costs_at_most_12000_characters(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    result = listed(mcp, editor_agent)
    assert [tool.name for tool in result.tools] == [*READ_TOOLS, *WRITE_TOOLS]
    assert size(result) <= EDITOR_LIST_MAX  # 28,411 before


def test_a_reading_agents_tool_list_costs_at_most_5000_characters(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    result = listed(mcp, reader_agent)
    assert [tool.name for tool in result.tools] == list(READ_TOOLS)
    assert size(result) <= READER_LIST_MAX  # 12,002 before


def test_every_tool_still_types_its_result_and_names_the_next_call(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    tools = listed(mcp, editor_agent).tools
    names = {tool.name for tool in tools}
    for tool in tools:
        schema = tool.outputSchema
        assert schema is not None and schema["type"] == "object", tool.name
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["required"], tool.name
        for field, field_schema in schema["properties"].items():
            assert "type" in field_schema or "anyOf" in field_schema, (tool.name, field)
        # Said once: no titles echoing property names, no null defaults.
        used = keywords(tool.inputSchema) | keywords(schema)
        assert not used & {"title", "default"}, tool.name
        others = names - {tool.name}
        assert any(other in (tool.description or "") for other in others), tool.name


def keywords(schema: Any) -> set[str]:
    """The keywords a schema uses anywhere (not the names of its properties)."""
    if isinstance(schema, list):
        return set().union(*(keywords(item) for item in schema))
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for key, value in schema.items():
        nested = value.values() if key in ("properties", "$defs") else [value]
        found |= set().union(*(keywords(item) for item in nested))
    return found


MCP_2_CLIENT = """
import asyncio, json, os
import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

async def main():
    page = os.environ["PAGE"]
    async with (
        httpx2.AsyncClient(headers={"Authorization": "Bearer " + os.environ["TOKEN"]}) as http,
        streamable_http_client(os.environ["URL"], http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()  # the client validates each answer by its outputSchema
        seen = {}
        for name, arguments in [
            ("browse", {}),
            ("search_pages", {"query": "refunds"}),
            ("get_page", {"pageId": page}),
            ("recent_activity", {}),
            ("get_page_source", {"pageId": page}),
        ]:
            result = await session.call_tool(name, arguments)
            seen[name] = {"error": result.is_error, "structured": result.structured_content}
    print(json.dumps(seen))

asyncio.run(main())
"""


def test_an_mcp_2_client_validates_every_answer_against_the_compact_schemas(
    live_server: Any,
    editor_agent: AgentKey,
    make_page: Callable[..., Page],
    fresh_rate_limits: None,
) -> None:
    page = make_page("Refunds", "We refund within 30 days.\n")
    editor_agent.give(page)
    result = subprocess.run(
        [str(python_with("mcp", _mcp_2_version())), "-c", MCP_2_CLIENT],
        env={
            **os.environ,
            "URL": f"{live_server.url}/mcp",
            "TOKEN": editor_agent.token,
            "PAGE": page.public_id,
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    for name, answer in seen.items():
        assert not answer["error"], (name, answer)
        assert answer["structured"], name
