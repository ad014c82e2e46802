"""Fixtures for the MCP tests: agents with tokens, page sets, and the official MCP client."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
from django.test import Client
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, InitializeResult, TextContent

from agents import services as agent_services
from agents.models import Agent
from config.cache import counters_clear
from core.actors import SystemActor
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page

T = TypeVar("T")


@dataclass
class AgentKey:
    """An agent and the token it authenticates with (shown once, so the tests keep it)."""

    agent: Agent
    token: str

    def give(self, *pages: Page, use_when: list[str] | None = None, always: bool = False) -> None:
        for page in pages:
            agent_services.page_set_add(
                actor=SystemActor("tests"),
                agent=self.agent,
                page=page,
                use_when=use_when or [f"Use for {page.title}."],
                always_include=always,
            )


@pytest.fixture
def make_agent(db: Any) -> Callable[..., AgentKey]:
    def make(
        name: str = "helper", *, can_edit: bool = False, pages: tuple[Page, ...] = ()
    ) -> AgentKey:
        agent, token = agent_services.agent_create(
            actor=SystemActor("tests"), name=name, can_edit_pages=can_edit
        )
        key = AgentKey(agent, token)
        key.give(*pages)
        return key

    return make


@pytest.fixture
def reader_agent(make_agent: Callable[..., AgentKey]) -> AgentKey:
    return make_agent("support-bot")


@pytest.fixture
def editor_agent(make_agent: Callable[..., AgentKey]) -> AgentKey:
    return make_agent("docs-bot", can_edit=True)


@pytest.fixture
def fresh_rate_limits() -> Iterator[None]:
    counters_clear()
    yield
    counters_clear()


@asynccontextmanager
async def mcp_session(url: str, token: str, **headers: str) -> AsyncIterator[ClientSession]:
    """An initialized session of the official MCP client over Streamable HTTP."""
    async with (
        httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}", **headers},
            timeout=HTTP_TIMEOUT,
            verify=TLS,
        ) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
    ):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


class MCP:
    """Drives a live Quire server with the official client, one session per call."""

    def __init__(self, base_url: str) -> None:
        self.url = base_url + "/mcp"

    def run(self, token: str, action: Callable[[ClientSession], Awaitable[T]]) -> T:
        async def main() -> T:
            async with mcp_session(self.url, token) as session:
                return await action(session)

        return asyncio.run(main())

    def initialize(self, key: AgentKey) -> InitializeResult:
        async def main() -> InitializeResult:
            async with (
                httpx.AsyncClient(
                    headers={"Authorization": f"Bearer {key.token}"},
                    timeout=HTTP_TIMEOUT,
                    verify=TLS,
                ) as http,
                streamable_http_client(self.url, http_client=http) as (read, write, _),
            ):
                async with ClientSession(read, write) as session:
                    return await session.initialize()

        return asyncio.run(main())

    def call(self, key: AgentKey | str, tool: str, **arguments: Any) -> CallToolResult:
        token = key.token if isinstance(key, AgentKey) else key
        return self.run(token, lambda session: session.call_tool(tool, arguments))

    def ok(self, key: AgentKey | str, tool: str, **arguments: Any) -> dict[str, Any]:
        """Call a tool that must succeed; return its structured result."""
        result = self.call(key, tool, **arguments)
        assert not result.isError, result.content
        assert result.structuredContent is not None
        return result.structuredContent

    def error(self, key: AgentKey | str, tool: str, **arguments: Any) -> str:
        """Call a tool that must fail; return its error text."""
        result = self.call(key, tool, **arguments)
        assert result.isError, result.structuredContent
        assert len(result.content) == 1
        (item,) = result.content
        assert isinstance(item, TextContent), item
        return item.text

    def tool_names(self, key: AgentKey) -> list[str]:
        async def names(session: ClientSession) -> list[str]:
            return [tool.name for tool in (await session.list_tools()).tools]

        return self.run(key.token, names)


@pytest.fixture
def mcp(live_server: Any, transactional_db: Any, fresh_rate_limits: None) -> MCP:
    return MCP(live_server.url)


def rpc(
    client: Client, token: str | None, method: str, params: dict[str, Any] | None = None
) -> Any:
    """POST one JSON-RPC request to /mcp through Django's test client."""
    headers: dict[str, Any] = {"HTTP_ACCEPT": "application/json, text/event-stream"}
    if token is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
    return client.post("/mcp", data=json.dumps(body), content_type="application/json", **headers)


def rpc_tool(client: Client, token: str, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool through the test client; return the JSON-RPC result (a CallToolResult)."""
    response = rpc(client, token, "tools/call", {"name": tool, "arguments": arguments})
    assert response.status_code == 200, response.content
    result: dict[str, Any] = response.json()["result"]
    return result
