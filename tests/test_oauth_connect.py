"""Connecting an MCP client by OAuth, end to end against a live server: discovery from the
401, registration, the consent screen in Chromium, the code exchange, the official MCP client
with the access token, refresh and its rotation, and everything that must be refused."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from oauth2_provider.models import AccessToken, RefreshToken

from agents import services as agent_services
from agents.models import Agent
from connect.models import Connection
from core.actors import SystemActor
from core.models import AuditEvent
from tests.fixtures_mcp import AgentKey
from tests.fixtures_oauth import (
    Browserless,
    CallbackServer,
    OAuthClient,
    callback_query,
    consent_in_chromium,
    require_chromium,
)
from wiki.models import Page

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")


async def _tools_and_pages(url: str, token: str) -> tuple[list[str], dict[str, str], list[str]]:
    """tools/list (names and titles) and browse, through the official MCP client."""
    async with (
        httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = (await session.list_tools()).tools
        browse = await session.call_tool("browse", {})
        assert not browse.isError, browse.content
        assert browse.structuredContent is not None
        titles = [page["title"] for page in browse.structuredContent["pages"]]
        return [tool.name for tool in tools], {t.name: t.title or "" for t in tools}, titles


def mcp_status(base: str, token: str) -> int:
    response = httpx.post(
        base + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
    )
    return response.status_code


@pytest.fixture
def owner(make_user: Callable[..., User]) -> User:
    return make_user("olga")


@pytest.fixture
def owned_agent(
    make_agent: Callable[..., AgentKey], owner: User, make_page: Callable[..., Page]
) -> AgentKey:
    key = make_agent("helpdesk-bot", pages=(make_page("Refund policy"), make_page("Returns")))
    agent_services.agent_update(actor=SystemActor("tests"), agent=key.agent, owner=owner)
    key.agent.refresh_from_db()
    return key


@pytest.fixture
def other_agent(make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]) -> AgentKey:
    return make_agent("payroll-bot", can_edit=True, pages=(make_page("Payroll secrets"),))


def connect_over_http(
    live_url: str, person: Browserless, callback: CallbackServer, agent: Agent
) -> tuple[OAuthClient, dict[str, Any]]:
    """Register, consent without a browser, exchange: a client holding its first tokens."""
    client = OAuthClient(live_url, callback.uri)
    assert client.register().status_code == 201
    query = callback_query(person.decide(client.authorize_url(), agent_id=agent.pk), callback.uri)
    tokens = client.exchange(query["code"])
    assert tokens.status_code == 200, tokens.text
    return client, tokens.json()


# --- the whole flow -------------------------------------------------------------------------


def test_it_connects_a_client_from_the_401_to_the_tools(
    live_server: Any,
    callback: CallbackServer,
    owner: User,
    owned_agent: AgentKey,
    other_agent: AgentKey,
) -> None:
    require_chromium()
    base = live_server.url

    async def flow() -> dict[str, Any]:
        from playwright.async_api import async_playwright

        async with httpx.AsyncClient(timeout=30) as http:
            # Discovery starts from the 401.
            refused = await http.post(
                base + "/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
                headers={"Accept": "application/json, text/event-stream"},
            )
            assert refused.status_code == 401
            challenge = refused.headers["WWW-Authenticate"]
            metadata_url = re.fullmatch(r'Bearer resource_metadata="([^"]+)"', challenge)
            assert metadata_url is not None, challenge
            assert metadata_url.group(1) == base + "/.well-known/oauth-protected-resource/mcp"
            resource = (await http.get(metadata_url.group(1))).json()
            assert resource["resource"] == base + "/mcp"
            (issuer,) = resource["authorization_servers"]
            server = (await http.get(issuer + "/.well-known/oauth-authorization-server")).json()
            assert server["issuer"] == issuer
            assert server["client_id_metadata_document_supported"] is True
            assert server["code_challenge_methods_supported"] == ["S256"]
            assert server["response_types_supported"] == ["code"]
            assert set(server["grant_types_supported"]) == {"authorization_code", "refresh_token"}
            # Dynamic registration, as an older client does it.
            registered = await http.post(
                server["registration_endpoint"],
                json={"client_name": "Playwright Desk", "redirect_uris": [callback.uri]},
            )
            assert registered.status_code == 201, registered.text
            client = OAuthClient(base, callback.uri, client_id=registered.json()["client_id"])
            assert registered.json()["token_endpoint_auth_method"] == "none"

        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )
            try:
                seen = await consent_in_chromium(
                    browser,
                    client.authorize_url(),
                    username=owner.username,
                    agent_name="helpdesk-bot",
                )
            finally:
                await browser.close()
        query = await asyncio.to_thread(callback.wait)

        async with httpx.AsyncClient(timeout=30) as http:
            # A wrong verifier gets nothing; the right one, once.
            wrong = await http.post(
                base + "/oauth/token/",
                data={
                    "grant_type": "authorization_code",
                    "code": query["code"],
                    "redirect_uri": callback.uri,
                    "client_id": client.client_id,
                    "code_verifier": "x" * 64,
                    "resource": base + "/mcp",
                },
            )
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
        tokens = await asyncio.to_thread(client.exchange, query["code"])
        assert tokens.status_code == 200, tokens.text
        again = await asyncio.to_thread(client.exchange, query["code"])
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
        pair = tokens.json()
        names, titles, pages = await _tools_and_pages(base + "/mcp", pair["access_token"])
        return {
            "seen": seen,
            "query": query,
            "client": client,
            "pair": pair,
            "names": names,
            "titles": titles,
            "pages": pages,
        }

    result = asyncio.run(flow())
    # The screen said who asks, where it goes back to, and what each agent would read.
    assert "Playwright Desk" in result["seen"]
    assert "127.0.0.1:" in result["seen"]
    assert "helpdesk-bot" in result["seen"] and "payroll-bot" not in result["seen"]
    assert "Refund policy" in result["seen"] and "read only" in result["seen"]
    assert result["query"]["state"] == result["client"].state
    pair = result["pair"]
    assert pair["token_type"] == "Bearer" and pair["expires_in"] == 3600
    assert pair["scope"] == "mcp"
    assert result["names"] == ["browse", "search_pages", "get_page"]
    assert all(result["titles"].values())
    assert sorted(result["pages"]) == ["Refund policy", "Returns"]
    # Audited: the person's decision, the connection, and tool calls naming the client.
    assert AuditEvent.objects.filter(action="oauth.allow", actor_user=owner).exists()
    browse = AuditEvent.objects.filter(action="mcp.browse", actor_agent=owned_agent.agent).get()
    assert browse.data["client"] == "Playwright Desk"
    # Stored hashed: no token or code in the clear.
    assert not AccessToken.objects.exclude(token="").exists()
    assert not RefreshToken.objects.exclude(token="").exists()

    # Refresh: a new pair; the old refresh token is refused and ends the connection.
    client: OAuthClient = result["client"]
    refreshed = client.refresh(pair["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["refresh_token"] != pair["refresh_token"]
    assert mcp_status(live_server.url, pair["access_token"]) == 401
    assert mcp_status(live_server.url, new["access_token"]) == 200
    reused = client.refresh(pair["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert mcp_status(live_server.url, new["access_token"]) == 401
    assert client.refresh(new["refresh_token"]).status_code == 400
    assert Connection.objects.get().ended_reason == "reused"
