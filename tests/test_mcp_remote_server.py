"""What a directory of remote MCP servers checks: a human title on every tool, no capability
advertised that Quire does not serve, and -32600 for a batch or a body that is no request."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from mcp import ClientSession
from mcp.types import Tool

from agents.mcp import QUIRE_VERSION, PageTools, quire_mcp
from tests.conftest import PROJECT_ROOT
from tests.fixtures_mcp import MCP, AgentKey
from tests.test_mcp_security import raw_post


def test_it_gives_every_tool_a_title_besides_its_annotations(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    async def listing(session: ClientSession) -> list[Tool]:
        return (await session.list_tools()).tools

    tools = mcp.run(editor_agent.token, listing)
    assert tools
    for tool in tools:
        assert tool.title and tool.title[0].isupper(), tool.name
        assert tool.annotations is not None and tool.annotations.title == tool.title, tool.name
        assert tool.annotations.readOnlyHint is not None, tool.name


def test_it_declares_each_tools_title_where_the_tool_is_declared() -> None:
    # Every public method of the toolset is a tool; each carries its title and hints.
    names = [
        name
        for name, member in inspect.getmembers(PageTools, inspect.isfunction)
        if not name.startswith("_")
    ]
    assert len(names) == 11  # the nine, and search and fetch for ChatGPT's connectors
    for name in names:
        annotations = getattr(getattr(PageTools, name), "tool_annotations", None)
        assert annotations is not None and annotations.title, f"{name} has no title"


def test_it_advertises_only_the_tools_capability(mcp: MCP, reader_agent: AgentKey) -> None:
    capabilities = mcp.initialize(reader_agent).capabilities
    assert capabilities.tools is not None
    assert capabilities.resources is None and capabilities.prompts is None


def test_it_speaks_the_protocol_through_the_sdks_public_server_api_only() -> None:
    """Issue 50, point 4: no private attribute of the SDK or of FastMCP in agents/ (the
    version written into FastMCP's `_mcp_server`, its handlers popped), and the protocol
    server has exactly the two handlers Quire serves."""
    private = re.compile(r"\._(mcp_server|tool_manager|setup_handlers|tool_cache)\b")
    for source in (PROJECT_ROOT / "agents").glob("*.py"):
        assert not private.findall(source.read_text()), source.name
    handled = {kind.__name__ for kind in quire_mcp.protocol.request_handlers}
    assert handled == {"PingRequest", "ListToolsRequest", "CallToolRequest"}
    assert quire_mcp.protocol.version == QUIRE_VERSION


def test_it_answers_resources_and_prompts_as_methods_it_does_not_have(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    for method in ("resources/list", "prompts/list"):
        body = {"jsonrpc": "2.0", "id": 4, "method": method, "params": {}}
        response = raw_post(mcp, body, reader_agent.token)
        assert response.json()["id"] == 4, method
        assert response.json()["error"]["code"] == -32601, method


@pytest.mark.parametrize(
    ("body", "request_id"),
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}], None),
        ([], None),
        ("tools/list", None),
        (5, None),
        ({"jsonrpc": "2.0", "id": 12, "params": {}}, 12),
        ({"jsonrpc": "1.0", "id": "abc", "method": "tools/list"}, "abc"),
    ],
    ids=["batch", "empty-batch", "string", "number", "no-method", "wrong-version"],
)
def test_it_answers_a_batch_or_a_non_request_with_invalid_request(
    mcp: MCP, reader_agent: AgentKey, body: Any, request_id: Any
) -> None:
    response = raw_post(mcp, body, reader_agent.token)
    assert response.status_code == 400
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["id"] == request_id
    assert answer["error"]["code"] == -32600
    assert answer["error"]["message"].endswith(".")
