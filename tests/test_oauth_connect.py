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
from django.conf import settings
from django.contrib.auth.models import User
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from oauth2_provider.models import AccessToken, RefreshToken

from agents import services as agent_services
from agents.mcp import READ_TOOLS
from agents.models import Agent
from connect.models import Connection, Grant
from core.actors import SystemActor
from core.models import AuditEvent
from tests.fixtures_mcp import AgentKey
from tests.fixtures_oauth import (
    Browserless,
    CallbackServer,
    Consent,
    OAuthClient,
    callback_query,
    chromium,
    consent_in_chromium,
    mcp_status,
    registered_client,
)
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT
from wiki.models import Page

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")


async def _tools_and_pages(url: str, token: str) -> tuple[list[str], dict[str, str], list[str]]:
    """tools/list (names and titles) and browse, through the official MCP client."""
    async with (
        httpx.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=HTTP_TIMEOUT, verify=TLS
        ) as http,
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


@pytest.fixture
def other_agent(make_agent: Callable[..., AgentKey], make_page: Callable[..., Page]) -> AgentKey:
    return make_agent("payroll-bot", can_edit=True, pages=(make_page("Payroll secrets"),))


# --- the whole flow -------------------------------------------------------------------------


@pytest.mark.browser
def test_it_connects_a_client_from_the_401_to_the_tools(
    oauth_base: str,
    callback: CallbackServer,
    owner: User,
    owned_agent: AgentKey,
    other_agent: AgentKey,
) -> None:
    base = oauth_base

    async def flow() -> dict[str, Any]:
        async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, verify=TLS) as http:
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

        async with chromium() as browser:
            seen = await consent_in_chromium(
                browser, client.authorize_url(), username=owner.username, agent_name="helpdesk-bot"
            )
        query = await asyncio.to_thread(callback.wait)

        # A wrong verifier or a code sent twice: test_a_wrong_verifier_burns_the_code... below.
        tokens = await asyncio.to_thread(client.exchange, query["code"])
        assert tokens.status_code == 200, tokens.text
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
    assert result["names"] == list(READ_TOOLS)
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
    assert mcp_status(oauth_base, pair["access_token"]) == 401
    assert mcp_status(oauth_base, new["access_token"]) == 200
    reused = client.refresh(pair["refresh_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert mcp_status(oauth_base, new["access_token"]) == 401
    assert client.refresh(new["refresh_token"]).status_code == 400
    assert Connection.objects.get().ended_reason == "reused"


# --- what ends a connection -----------------------------------------------------------------


def _revoke(agent: Agent, owner: User) -> None:
    agent_services.agent_revoke(actor=SystemActor("tests"), agent=agent)


def _rotate(agent: Agent, owner: User) -> None:
    agent_services.agent_token_rotate(actor=SystemActor("tests"), agent=agent)


def _deactivate(agent: Agent, owner: User) -> None:
    owner.is_active = False
    owner.save()


def _disconnect(agent: Agent, owner: User) -> None:
    from connect import services

    services.connection_disconnect(actor=owner, connection=Connection.objects.get(agent=agent))


@pytest.mark.parametrize(
    "end", [_revoke, _rotate, _deactivate, _disconnect], ids=lambda end: end.__name__[1:]
)
def test_it_ends_the_tokens_at_once(end: Callable[[Agent, User], None], consent: Consent) -> None:
    client, pair = consent.connect()
    assert consent.mcp_status(pair["access_token"]) == 200
    end(consent.owned_agent.agent, consent.owner)
    assert consent.mcp_status(pair["access_token"]) == 401
    refused = client.refresh(pair["refresh_token"])
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_grant"
    assert Connection.objects.get().ended_at is not None
    assert not AccessToken.objects.exists()


def test_it_keeps_the_agents_static_token_working_beside_oauth(consent: Consent) -> None:
    _, pair = consent.connect()
    assert consent.mcp_status(pair["access_token"]) == 200
    assert consent.mcp_status(consent.owned_agent.token) == 200


def test_it_lists_the_connection_on_the_agent_screen_with_disconnect(
    consent: Consent, admin_user: User, client_as: Callable[[User], Any]
) -> None:
    owner, owned_agent = consent.owner, consent.owned_agent
    _, pair = consent.connect()
    assert consent.mcp_status(pair["access_token"]) == 200
    admin = client_as(admin_user)
    screen = admin.get(f"/agents/{owned_agent.agent.pk}/").content.decode()
    assert "Connected apps" in screen and "Test client" in screen and owner.username in screen
    connection = Connection.objects.get()
    assert connection.last_used_at is not None
    done = admin.post(f"/oauth/connections/{connection.pk}/disconnect/")
    assert done.status_code == 302
    assert consent.mcp_status(pair["access_token"]) == 401
    screen = admin.get(f"/agents/{owned_agent.agent.pk}/").content.decode()
    assert "No app is connected as this agent." in screen


def test_it_lets_only_an_admin_or_the_person_who_allowed_it_disconnect(
    consent: Consent, reader: User, client_as: Callable[[User], Any]
) -> None:
    owner = consent.owner
    _, pair = consent.connect()
    connection = Connection.objects.get()
    refused = client_as(reader).post(f"/oauth/connections/{connection.pk}/disconnect/")
    assert refused.status_code == 403
    assert consent.mcp_status(pair["access_token"]) == 200
    assert "Test client" not in client_as(reader).get("/oauth/connections/").content.decode()
    mine = client_as(owner).get("/oauth/connections/").content.decode()
    assert "Test client" in mine and "helpdesk-bot" in mine
    assert (
        client_as(owner).post(f"/oauth/connections/{connection.pk}/disconnect/").status_code == 302
    )
    assert consent.mcp_status(pair["access_token"]) == 401


# --- who may connect what -------------------------------------------------------------------


def test_it_tells_a_reader_who_owns_no_agent_and_grants_nothing(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    reader: User,
    owned_agent: AgentKey,
    settings: Any,
) -> None:
    # Where admins let people make their own agents (the default), the screen offers that:
    # tests/test_oauth_own_agent.py.
    settings.QUIRE_PEOPLE_MAKE_AGENTS = False
    client = registered_client(oauth_base, callback.uri)
    person = browserless(reader.username)
    screen = person.screen(client.authorize_url()).text
    assert "You have no agent you may connect an app to." in screen
    assert "helpdesk-bot" not in screen and 'name="agent"' not in screen
    # Allowing anyway, with someone else's agent, grants nothing.
    refused = person.decide(client.authorize_url(), agent_id=owned_agent.agent.pk)
    assert refused.status_code == 200
    assert "Pick the agent this client will act as." in refused.text
    assert not Grant.objects.exists() and not Connection.objects.exists()
    # Going back says no to the client, with its state.
    back = person.decide(client.authorize_url(), agent_id=None, allow=False)
    query = callback_query(back, callback.uri)
    assert query["error"] == "access_denied" and query["state"] == client.state
    assert not Grant.objects.exists()


def test_it_lets_an_admin_connect_any_agent_and_an_owner_only_theirs(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: User,
    admin_user: User,
    owned_agent: AgentKey,
    other_agent: AgentKey,
) -> None:
    client = registered_client(oauth_base, callback.uri)
    admin_screen = browserless(admin_user.username).screen(client.authorize_url()).text
    assert "helpdesk-bot" in admin_screen and "payroll-bot" in admin_screen
    assert "proposes edits" in admin_screen
    owner_person = browserless(owner.username)
    refused = owner_person.decide(client.authorize_url(), agent_id=other_agent.agent.pk)
    assert refused.status_code == 200 and not Grant.objects.exists()


def test_it_passes_state_back_unchanged_on_deny(consent: Consent) -> None:
    client = consent.client()
    client.state = "a state/with+odd=chars&more"
    denied = consent.person.decide(
        client.authorize_url(), agent_id=consent.owned_agent.agent.pk, allow=False
    )
    query = callback_query(denied, client.redirect_uri)
    assert query["error"] == "access_denied"
    assert query["state"] == "a state/with+odd=chars&more"
    assert not Grant.objects.exists()
    assert AuditEvent.objects.filter(action="oauth.deny", actor_user=consent.owner).exists()


# --- what is refused ------------------------------------------------------------------------


def test_it_refuses_a_redirect_uri_that_was_not_registered(consent: Consent) -> None:
    client, person, callback = consent.client(), consent.person, consent.callback
    for elsewhere in [
        "https://attacker.example/callback",
        callback.uri + "/other",
        callback.uri + "?extra=1",
        callback.uri.replace("127.0.0.1", "localhost"),
    ]:
        response = person.screen(client.authorize_url(redirect_uri=elsewhere))
        # Never sent anywhere: the person is told on Quire's own page.
        assert response.status_code == 400, elsewhere
        assert "Location" not in response.headers
        assert "cannot go on" in response.text
    # Loopback: any port is the same registered redirect (RFC 8252).
    other_port = re.sub(r":\d+/", ":1/", callback.uri)
    assert person.screen(client.authorize_url(redirect_uri=other_port)).status_code == 200
    assert not Grant.objects.exists()


def test_it_refuses_a_token_for_another_resource(consent: Consent) -> None:
    client = consent.client()
    asked = consent.person.screen(client.authorize_url(resource="https://elsewhere.example/mcp"))
    query = callback_query(asked, client.redirect_uri)
    assert query["error"] == "invalid_target" and query["state"] == client.state
    # A code for /mcp cannot become a token for another resource.
    code = consent.code(client)
    other = client.exchange(code, resource="https://elsewhere.example/mcp")
    assert other.status_code == 400 and other.json()["error"] == "invalid_target"
    # A token whose audience is another resource (say, this server under another name).
    pair = client.exchange(code).json()
    assert consent.mcp_status(pair["access_token"]) == 200
    AccessToken.objects.update(resource=["https://quire.elsewhere.example/mcp"])
    assert consent.mcp_status(pair["access_token"]) == 401


def test_it_binds_the_token_to_mcp_when_the_client_names_no_resource(consent: Consent) -> None:
    client = consent.client()
    code = consent.code(client, url=client.authorize_url(resource=None))  # type: ignore[arg-type]
    pair = client.exchange(code, resource="").json()
    assert AccessToken.objects.get().resource == [consent.base + "/mcp"]
    assert consent.mcp_status(pair["access_token"]) == 200


@pytest.mark.parametrize(
    "overrides",
    [
        {"code_challenge_method": "plain"},
        {"code_challenge": None, "code_challenge_method": None},
        {"response_type": "token"},
    ],
    ids=["plain-pkce", "no-pkce", "implicit"],
)
def test_it_offers_only_the_code_flow_with_pkce_s256(
    overrides: dict[str, Any], consent: Consent
) -> None:
    client = consent.client()
    if overrides.get("code_challenge_method") == "plain":
        overrides = {**overrides, "code_challenge": client.pkce.verifier}
    response = consent.person.screen(client.authorize_url(**overrides))
    if response.status_code == 302:
        assert callback_query(response, client.redirect_uri)["error"] in {
            "invalid_request",
            "unsupported_response_type",
            "unauthorized_client",
        }
    else:
        assert response.status_code == 400
    assert not Grant.objects.exists()


def test_it_refuses_the_password_and_client_credentials_grants(
    oauth_base: str, callback: CallbackServer, owner: User
) -> None:
    client = registered_client(oauth_base, callback.uri)
    for data in [
        {"grant_type": "password", "username": owner.username, "password": "x"},
        {"grant_type": "client_credentials"},
    ]:
        response = httpx.post(
            oauth_base + "/oauth/token/",
            data={**data, "client_id": client.client_id},
            verify=TLS,
            timeout=HTTP_TIMEOUT,
        )
        assert response.status_code in (400, 401), data
        assert response.json()["error"] in {
            "unsupported_grant_type",
            "unauthorized_client",
            "invalid_client",
            "invalid_grant",
        }
    assert not AccessToken.objects.exists()


def test_it_protects_the_consent_screen(consent: Consent) -> None:
    client, person = consent.client(), consent.person
    screen = person.screen(client.authorize_url())
    assert screen.headers["X-Frame-Options"] == "DENY"
    assert "frame-ancestors 'none'" in screen.headers["Content-Security-Policy"]
    # The form may go on to the client's redirect, and nowhere else.
    assert "form-action 'self' http://127.0.0.1:" in screen.headers["Content-Security-Policy"]
    assert "no-store" in screen.headers.get(
        "Cache-Control", ""
    ) or "max-age=0" in screen.headers.get("Cache-Control", "")
    # Without the CSRF token, nothing is decided.
    data = {
        "client_id": client.client_id,
        "redirect_uri": client.redirect_uri,
        "allow": "on",
        "agent": str(consent.owned_agent.agent.pk),
        "response_type": "code",
        "scope": "mcp",
        "state": client.state,
        "code_challenge": client.pkce.challenge,
        "code_challenge_method": "S256",
    }
    forged = person.http.post(client.authorize_url(), data=data)
    assert forged.status_code == 403
    assert not Grant.objects.exists()


def test_it_sends_a_signed_out_person_to_sign_in_first(
    oauth_base: str, callback: CallbackServer, owned_agent: AgentKey
) -> None:
    client = registered_client(oauth_base, callback.uri)
    response = httpx.get(client.authorize_url(), verify=TLS, timeout=HTTP_TIMEOUT)
    assert response.status_code == 302
    assert response.headers["Location"].startswith("/login/?next=/oauth/authorize/")


def test_it_stores_codes_and_tokens_only_hashed(consent: Consent) -> None:
    client = consent.client()
    code = consent.code(client)
    stored = Grant.objects.values_list("code", flat=True).get()
    assert code not in stored and stored.startswith("sha256:")
    pair = client.exchange(code).json()
    assert pair["access_token"].startswith("qo_") and pair["refresh_token"].startswith("qr_")
    for model in (AccessToken, RefreshToken):
        row = model.objects.values("token", "token_checksum").get()
        assert row["token"] == ""
        assert row["token_checksum"] not in (pair["access_token"], pair["refresh_token"])


# --- an OAuth token is the agent ------------------------------------------------------------


def test_an_oauth_call_costs_one_query_more_than_a_static_one(
    db: Any, owner: User, owned_agent: AgentKey
) -> None:
    from django.db import connection as database
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tests.fixtures_mcp import rpc_tool
    from tests.fixtures_oauth import issue_tokens

    oauth = issue_tokens(owned_agent.agent, owner, resource=settings.QUIRE_BASE_URL + "/mcp")
    client = Client()
    counts = {}
    for label, token in [("static", owned_agent.token), ("oauth", oauth)]:
        rpc_tool(client, token, "browse")  # the first call also records when it was used
        with CaptureQueriesContext(database) as queries:
            assert rpc_tool(client, token, "browse")["isError"] is False
        counts[label] = len(queries)
    # One query: the connection with its agent and client, found by the access token.
    assert counts["oauth"] == counts["static"] + 1


def test_an_oauth_token_shares_the_agents_rate_limit_and_names_its_client(
    db: Any,
    owner: User,
    owned_agent: AgentKey,
    settings: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.test import Client

    from tests.fixtures_mcp import rpc_tool
    from tests.fixtures_oauth import issue_tokens

    settings.QUIRE_AGENT_RATE_LIMIT = 2
    # The three calls fall in one window however slowly the machine runs them.
    monkeypatch.setattr("agents.mcp_rate.rate_clock", lambda: 1_800_000_010.0)
    oauth = issue_tokens(
        owned_agent.agent, owner, resource=settings.QUIRE_BASE_URL + "/mcp", client_name="Claude"
    )
    client = Client()
    assert rpc_tool(client, owned_agent.token, "browse")["isError"] is False
    assert rpc_tool(client, oauth, "browse")["isError"] is False
    limited = rpc_tool(client, oauth, "browse")
    assert limited["isError"] is True
    assert limited["content"][0]["text"].startswith("rate_limited:")
    clients = list(
        AuditEvent.objects.filter(action="mcp.browse")
        .order_by("id")
        .values_list("data__client", flat=True)
    )
    assert clients == [None, "Claude", "Claude"]


def test_it_refuses_an_expired_access_token(db: Any, owner: User, owned_agent: AgentKey) -> None:
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    from tests.fixtures_mcp import rpc
    from tests.fixtures_oauth import issue_tokens

    token = issue_tokens(owned_agent.agent, owner, resource=settings.QUIRE_BASE_URL + "/mcp")
    assert rpc(Client(), token, "tools/list").status_code == 200
    AccessToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    refused = rpc(Client(), token, "tools/list")
    assert refused.status_code == 401
    assert refused["WWW-Authenticate"].startswith('Bearer error="invalid_token", ')


def test_it_ends_the_connection_when_the_app_revokes_its_token(consent: Consent) -> None:
    client, pair = consent.connect()
    revoked = httpx.post(
        consent.base + "/oauth/revoke/",
        data={"token": pair["refresh_token"], "client_id": client.client_id},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert revoked.status_code == 200
    assert consent.mcp_status(pair["access_token"]) == 401
    assert Connection.objects.get().ended_reason == "revoked by the app"


def test_the_consent_screen_says_what_an_all_pages_agent_reads(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: User,
    make_page: Callable[..., Page],
) -> None:
    """It said "Its page set is empty: it reads nothing" while the token read every page."""
    make_page("Payroll")
    for name, can_edit in (("wiki-reader", False), ("wiki-editor", True)):
        agent_services.agent_create(
            actor=SystemActor("tests"),
            name=name,
            owner=owner,
            all_pages=True,
            can_edit_pages=can_edit,
        )
    client = registered_client(oauth_base, callback.uri)

    screen = browserless(owner.username).screen(client.authorize_url()).text

    assert "reads nothing" not in screen
    said = re.findall(r'<span class="muted small connect-set">([^<]*)</span>', screen)
    assert said == [  # by name: wiki-editor, wiki-reader
        "Reads every page its owner may read, now and later, pages added after today too, "
        "and may propose edits to any of them.",
        "Reads every page its owner may read, now and later, pages added after today too, "
        "read only.",
    ], said


def test_a_wrong_verifier_burns_the_code_and_a_replayed_code_revokes_its_tokens(
    consent: Consent,
) -> None:
    """oauthlib refused a wrong PKCE verifier and left the code usable for another try; a code
    sent again after its exchange was refused, and the tokens issued from it kept working."""
    client = consent.client()
    code = consent.code(client)
    wrong = client.exchange(code, verifier="x" * 64)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    burnt = client.exchange(code)
    assert burnt.status_code == 400 and burnt.json()["error"] == "invalid_grant"
    assert not Connection.objects.exists()

    code = consent.code(client)
    tokens = client.exchange(code)
    assert tokens.status_code == 200, tokens.text
    pair = tokens.json()
    assert consent.mcp_status(pair["access_token"]) == 200

    replayed = client.exchange(code)

    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert consent.mcp_status(pair["access_token"]) == 401
    assert client.refresh(pair["refresh_token"]).status_code == 400
    assert Connection.objects.get().ended_reason == "code replayed"
