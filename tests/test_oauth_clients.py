"""How clients register: client ID metadata documents fetched from a local https server,
dynamic registration's rules and rate limit, the clean-up of clients never used, and the
official MCP SDK's own OAuth client provider driving the consent screen in Chromium."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from oauth2_provider.models import Application

from agents.mcp import READ_TOOLS
from connect.models import Connection
from core.models import AuditEvent
from tests.fixtures_mcp import AgentKey
from tests.fixtures_oauth import (
    Browserless,
    CallbackServer,
    Consent,
    DocumentServer,
    OAuthClient,
    chromium,
    consent_in_chromium,
    registered_client,
)
from tests.http_tls import TLS
from tests.waits import HTTP_TIMEOUT

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")


def document(url: str, redirect_uri: str, **fields: Any) -> dict[str, Any]:
    return {
        "client_id": url,
        "client_name": "Docs Desk",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **fields,
    }


# --- client ID metadata documents -------------------------------------------------------------


def test_it_fetches_a_client_id_metadata_document_and_connects_with_it(
    consent: Consent, document_server: DocumentServer
) -> None:
    url = document_server.url("/oauth/client.json")
    document_server.publish("/oauth/client.json", document(url, consent.callback.uri))
    client = OAuthClient(consent.base, consent.callback.uri, client_id=url)
    screen = consent.person.screen(client.authorize_url())
    assert screen.status_code == 200, screen.text
    assert "Docs Desk" in screen.text and "published by 127.0.0.1" in screen.text
    tokens = client.exchange(consent.code(client))
    assert tokens.status_code == 200, tokens.text
    application = Application.objects.get(client_id=url)
    assert application.registration_source == "cimd" and application.client_type == "public"


@pytest.mark.parametrize(
    "problem",
    ["http-redirect", "other-client-id", "too-large", "not-found", "too-slow"],
)
def test_it_refuses_a_document_that_breaks_the_rules(
    problem: str,
    oauth_base: str,
    settings: Any,
    document_server: DocumentServer,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: User,
) -> None:
    url = document_server.url("/client.json")
    if problem == "http-redirect":
        document_server.publish("/client.json", document(url, "http://evil.example/cb"))
    elif problem == "other-client-id":
        document_server.publish("/client.json", document("https://claude.ai/x", callback.uri))
    elif problem == "too-slow":
        document_server.publish("/client.json", document(url, callback.uri))
        # Valid, but later than the timeout: it must not be waited for.
        document_server.delays["/client.json"] = 3
        settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_FETCH_TIMEOUT_SECONDS": 1}
    elif problem == "too-large":
        padded = document(url, callback.uri, client_uri="https://a.example/" + "x" * 20_000)
        document_server.publish("/client.json", padded)
    client = OAuthClient(oauth_base, callback.uri, client_id=url)
    screen = browserless(owner.username).screen(client.authorize_url())
    # An unknown client: Quire's own error page, no redirect anywhere.
    assert screen.status_code in (400, 401), screen.status_code
    assert "Location" not in screen.headers and "cannot go on" in screen.text
    assert not Application.objects.exists()


def test_a_document_that_drips_is_given_up_at_the_deadline_and_says_why(
    oauth_base: str,
    settings: Any,
    document_server: DocumentServer,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: User,
) -> None:
    """A document sent a byte a second held a worker for a minute through a 5-second
    timeout: urllib3 restarts the read timeout at every byte."""
    url = document_server.url("/client.json")
    document_server.publish("/client.json", document(url, callback.uri))
    document_server.drips["/client.json"] = 0.25  # about a minute for the whole document
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "CIMD_FETCH_TIMEOUT_SECONDS": 2}
    client = OAuthClient(oauth_base, callback.uri, client_id=url)
    person = browserless(owner.username)

    screen = person.screen(client.authorize_url())

    assert screen.status_code in (400, 401), screen.status_code
    assert "cannot go on" in screen.text and "took longer than 2 seconds" in screen.text
    # Given up with most of the body still unsent (about 8 of its bytes go out in 2 s),
    # where the library alone reads on to the last byte.
    sent, size = (
        document_server.dripped["/client.json"],
        len(document_server.documents["/client.json"]),
    )
    assert sent < size // 2, f"{sent} of {size} bytes read before giving up"
    assert not Application.objects.exists()


def test_it_fetches_no_document_from_a_loopback_address_outside_tests(
    oauth_base: str,
    document_server: DocumentServer,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: User,
    settings: Any,
) -> None:
    settings.QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS = False
    url = document_server.publish("/client.json", {})
    document_server.publish("/client.json", document(url, callback.uri))
    client = OAuthClient(oauth_base, callback.uri, client_id=url)
    screen = browserless(owner.username).screen(client.authorize_url())
    assert screen.status_code in (400, 401) and "cannot go on" in screen.text
    assert not Application.objects.exists()


# --- dynamic registration -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("metadata", "error"),
    [
        ({"redirect_uris": ["http://app.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.example/cb#frag"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": []}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://a.example/cb"], "grant_types": ["implicit"]},
            "invalid_client_metadata",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "grant_types": ["client_credentials"]},
            "invalid_client_metadata",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "response_types": ["token"]},
            "invalid_client_metadata",
        ),
        (
            {"redirect_uris": ["https://a.example/cb"], "client_name": "Bad\u202ename"},
            "invalid_client_metadata",
        ),
        (["not", "an", "object"], "invalid_client_metadata"),
        (
            {"redirect_uris": ["https://a.example/cb https://evil.example/cb"]},
            "invalid_redirect_uri",
        ),
        ({"redirect_uris": ["https://a.example/c\x00b"]}, "invalid_redirect_uri"),
        (
            {"redirect_uris": ["https://a.example/cb"], "client_name": "A\x00B"},
            "invalid_client_metadata",
        ),
    ],
)
def test_it_refuses_a_registration_it_cannot_honour(
    metadata: Any, error: str, oauth_base: str
) -> None:
    response = httpx.post(
        oauth_base + "/oauth/register/", json=metadata, verify=TLS, timeout=HTTP_TIMEOUT
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == error
    assert response.json()["error_description"].endswith(".")
    assert not Application.objects.exists()


def test_it_registers_a_public_client_with_https_or_loopback_redirects(oauth_base: str) -> None:
    response = httpx.post(
        oauth_base + "/oauth/register/",
        json={
            "client_name": "Claude",
            "redirect_uris": [
                "https://claude.ai/api/mcp/auth_callback",
                "http://localhost:6274/oauth/callback",
                "http://127.0.0.1/cb",
            ],
            "token_endpoint_auth_method": "client_secret_post",
        },
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["token_endpoint_auth_method"] == "none" and "client_secret" not in body
    application = Application.objects.get(client_id=body["client_id"])
    assert application.client_type == "public" and application.registration_source == "dcr"
    assert AuditEvent.objects.filter(action="oauth.client_register").count() == 1


def test_it_rate_limits_registration(oauth_base: str, settings: Any) -> None:
    settings.QUIRE_OAUTH_REGISTRATIONS_PER_HOUR = 3
    statuses = [
        httpx.post(
            oauth_base + "/oauth/register/",
            json={"redirect_uris": ["https://a.example/cb"]},
            verify=TLS,
            timeout=HTTP_TIMEOUT,
        ).status_code
        for _ in range(5)
    ]
    assert statuses == [201, 201, 201, 429, 429]
    assert Application.objects.count() == 3


def test_it_deletes_clients_that_never_connected(consent: Consent) -> None:
    used, _ = consent.connect()
    consent.client()  # never used: junk
    fresh = consent.client()
    Application.objects.exclude(client_id=fresh.client_id).update(
        created=timezone.now() - timedelta(days=2)
    )
    call_command("delete_unused_oauth_clients", "--hours", "24")
    remaining = set(Application.objects.values_list("client_id", flat=True))
    assert remaining == {used.client_id, fresh.client_id}
    assert Connection.objects.count() == 1


# --- the official SDK's OAuth client --------------------------------------------------------


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.mark.browser
@pytest.mark.parametrize("registration", ["dynamic", "metadata-document"])
def test_the_sdks_oauth_client_provider_connects_through_the_consent_screen(
    registration: str,
    oauth_base: str,
    document_server: DocumentServer,
    callback: CallbackServer,
    owner: User,
    owned_agent: AgentKey,
) -> None:
    base = oauth_base
    document_url = None
    if registration == "metadata-document":
        document_url = document_server.url("/sdk-client.json")
        document_server.publish(
            "/sdk-client.json",
            document(document_url, callback.uri, client_name="SDK Desk"),
        )
    storage = MemoryStorage()

    async def main() -> tuple[list[str], list[str], str]:
        seen: list[str] = []
        async with chromium() as browser:

            async def redirect_handler(url: str) -> None:
                seen.append(
                    await consent_in_chromium(
                        browser, url, username=owner.username, agent_name="helpdesk-bot"
                    )
                )

            async def callback_handler() -> tuple[str, str | None]:
                query = await asyncio.to_thread(callback.wait)
                return query["code"], query.get("state")

            provider = OAuthClientProvider(
                server_url=base + "/mcp",
                client_metadata=OAuthClientMetadata(
                    client_name="SDK Desk",
                    redirect_uris=[callback.uri],  # type: ignore[list-item]
                    grant_types=["authorization_code", "refresh_token"],
                    response_types=["code"],
                    token_endpoint_auth_method="none",
                ),
                storage=storage,
                redirect_handler=redirect_handler,
                callback_handler=callback_handler,
                client_metadata_url=document_url,
            )
            async with (
                httpx.AsyncClient(auth=provider, timeout=60, verify=TLS) as http,
                streamable_http_client(base + "/mcp", http_client=http) as (read, write, _),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                tools = [tool.name for tool in (await session.list_tools()).tools]
                browse = await session.call_tool("browse", {})
                assert browse.structuredContent is not None
                pages = [page["title"] for page in browse.structuredContent["pages"]]
        return tools, pages, seen[0]

    tools, pages, seen = asyncio.run(main())
    assert tools == list(READ_TOOLS)
    assert sorted(pages) == ["Refund policy", "Returns"]
    assert "SDK Desk" in seen and "helpdesk-bot" in seen
    assert storage.tokens is not None and storage.tokens.access_token.startswith("qo_")
    source = "cimd" if registration == "metadata-document" else "dcr"
    assert Connection.objects.get().application.registration_source == source


def test_it_accepts_a_native_apps_scheme_only_when_the_operator_allows_it(
    oauth_base: str, settings: Any
) -> None:
    body = {"client_name": "Cursor", "redirect_uris": ["cursor://anysphere.cursor-mcp/oauth/cb"]}
    refused = httpx.post(
        oauth_base + "/oauth/register/", json=body, verify=TLS, timeout=HTTP_TIMEOUT
    )
    assert refused.status_code == 400 and refused.json()["error"] == "invalid_redirect_uri"
    settings.QUIRE_OAUTH_EXTRA_REDIRECT_SCHEMES = ["cursor"]
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "ALLOWED_REDIRECT_URI_SCHEMES": ["http", "https", "cursor"],
    }
    accepted = httpx.post(
        oauth_base + "/oauth/register/", json=body, verify=TLS, timeout=HTTP_TIMEOUT
    )
    assert accepted.status_code == 201, accepted.text


def test_the_hourly_task_deletes_the_same_unused_clients(oauth_base: str) -> None:
    from connect.tasks import delete_unused_clients

    old = registered_client(oauth_base, "https://app.example/cb")
    Application.objects.filter(client_id=old.client_id).update(
        created=timezone.now() - timedelta(days=2)
    )
    registered_client(oauth_base, "https://app.example/cb")
    assert delete_unused_clients() == 1  # what the worker runs, called in this process
    assert Application.objects.count() == 1
    assert AuditEvent.objects.filter(action="oauth.clients_delete_unused").exists()


@pytest.mark.parametrize(
    "body", [b"[" * 5000 + b"]" * 5000, b"{not json", b"null", b"\x00"], ids=str
)
def test_it_answers_a_registration_that_is_no_json_object_with_400(
    body: bytes, oauth_base: str
) -> None:
    response = httpx.post(
        oauth_base + "/oauth/register/",
        content=body,
        headers={"Content-Type": "application/json"},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "invalid_client_metadata"
    assert not Application.objects.exists()


def test_it_lets_a_client_in_a_browser_register_and_fetch_tokens(oauth_base: str) -> None:
    # An MCP inspector runs the flow from a web page: the preflight and the answers say so.
    for path in ("/oauth/register/", "/oauth/token/", "/oauth/revoke/"):
        preflight = httpx.request(
            "OPTIONS",
            oauth_base + path,
            headers={
                "Origin": "http://localhost:6274",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
            verify=TLS,
        )
        assert preflight.status_code == 204, path
        assert preflight.headers["Access-Control-Allow-Origin"] == "*"
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        assert "Access-Control-Allow-Credentials" not in preflight.headers
    registered = httpx.post(
        oauth_base + "/oauth/register/",
        json={"redirect_uris": ["http://localhost:6274/oauth/callback"]},
        headers={"Origin": "http://localhost:6274"},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert registered.status_code == 201
    assert registered.headers["Access-Control-Allow-Origin"] == "*"
    refused = httpx.post(
        oauth_base + "/oauth/token/",
        data={"grant_type": "authorization_code", "code": "nope", "client_id": "x"},
        headers={"Origin": "http://localhost:6274"},
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    assert refused.status_code in (400, 401)
    assert refused.headers["Access-Control-Allow-Origin"] == "*"
