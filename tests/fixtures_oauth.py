"""Fixtures for the OAuth tests: a client's side of the protocol, a loopback callback server,
the consent screen driven over HTTP or in Chromium, and an https server for client ID
metadata documents."""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import ipaddress
import json
import queue
import re
import secrets
import ssl
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.fixtures_browser import CHROMIUM
from tests.http_tls import TLS
from tests.prerequisites import BROWSER, require
from tests.waits import HTTP_TIMEOUT

PASSWORD = "correct-horse-battery"


@dataclass(frozen=True)
class Pkce:
    verifier: str
    challenge: str

    @classmethod
    def make(cls) -> Pkce:
        verifier = secrets.token_urlsafe(48)
        digest = hashlib.sha256(verifier.encode()).digest()
        return cls(verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode())


class CallbackServer:
    """A client's loopback redirect URI (RFC 8252): records each request's query."""

    def __init__(self) -> None:
        self.hits: queue.Queue[dict[str, str]] = queue.Queue()
        hits = self.hits

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                query = parse_qs(urlsplit(self.path).query)
                hits.put({key: values[0] for key, values in query.items()})
                body = b"Connected. You can close this window."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}/callback"

    def wait(self, timeout: float = 30) -> dict[str, str]:
        return self.hits.get(timeout=timeout)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def callback() -> Iterator[CallbackServer]:
    server = CallbackServer()
    yield server
    server.close()


@dataclass
class OAuthClient:
    """The protocol as a client speaks it, over plain HTTP against a live Quire."""

    base: str
    redirect_uri: str
    client_id: str = ""
    pkce: Pkce = field(default_factory=Pkce.make)
    state: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    @property
    def resource(self) -> str:
        return self.base + "/mcp"

    def register(self, **metadata: Any) -> httpx.Response:
        body = {"client_name": "Test client", "redirect_uris": [self.redirect_uri], **metadata}
        response = httpx.post(
            self.base + "/oauth/register/", json=body, verify=TLS, timeout=HTTP_TIMEOUT
        )
        if response.status_code == 201:
            self.client_id = response.json()["client_id"]
        return response

    def authorize_url(self, **overrides: str) -> str:
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": self.state,
            "code_challenge": self.pkce.challenge,
            "code_challenge_method": "S256",
            "resource": self.resource,
            "scope": "mcp",
            **overrides,
        }
        return (
            self.base
            + "/oauth/authorize/?"
            + urlencode({key: value for key, value in params.items() if value is not None})
        )

    def exchange(self, code: str, *, verifier: str | None = None, **extra: str) -> httpx.Response:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "client_id": self.client_id,
            "code_verifier": verifier if verifier is not None else self.pkce.verifier,
            "resource": self.resource,
            **extra,
        }
        return httpx.post(self.base + "/oauth/token/", data=data, verify=TLS, timeout=HTTP_TIMEOUT)

    def refresh(self, refresh_token: str) -> httpx.Response:
        data = {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": self.client_id,
            "resource": self.resource,
        }
        return httpx.post(self.base + "/oauth/token/", data=data, verify=TLS, timeout=HTTP_TIMEOUT)


def _hidden_inputs(page: str) -> dict[str, str]:
    found = {}
    for tag in re.findall(r"<input[^>]*>", page):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name and 'type="hidden"' in tag:
            found[html.unescape(name.group(1))] = html.unescape(value.group(1) if value else "")
    return found


class Browserless:
    """A person at the consent screen without a browser: log in, then allow or deny."""

    def __init__(self, base: str, username: str) -> None:
        self.http = httpx.Client(
            base_url=base, follow_redirects=False, timeout=HTTP_TIMEOUT, verify=TLS
        )
        login = self.http.get("/login/")
        token = _hidden_inputs(login.text)["csrfmiddlewaretoken"]
        done = self.http.post(
            "/login/",
            data={"csrfmiddlewaretoken": token, "username": username, "password": PASSWORD},
        )
        assert done.status_code == 302, done.text

    def screen(self, url: str) -> httpx.Response:
        return self.http.get(url)

    def decide(self, url: str, *, agent_id: int | None, allow: bool = True) -> httpx.Response:
        screen = self.http.get(url)
        assert screen.status_code == 200, screen.text
        data = _hidden_inputs(screen.text)
        if agent_id is not None:
            data["agent"] = str(agent_id)
        if allow:
            data["allow"] = "on"
        return self.http.post(url, data=data)

    def close(self) -> None:
        self.http.close()


def callback_query(response: httpx.Response, redirect_uri: str) -> dict[str, str]:
    """The query of the redirect back to the client; fails unless it goes there."""
    assert response.status_code == 302, response.text
    location = response.headers["Location"]
    assert location.startswith(redirect_uri + "?"), location
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def serve_oauth_at(settings: Any, url: str) -> None:
    """Point QUIRE_BASE_URL, and the OAuth issuer with it, at a test's server: the metadata
    and a token's audience name QUIRE_BASE_URL, never the Host a request sends."""
    settings.QUIRE_BASE_URL = url
    settings.OAUTH2_PROVIDER = {**settings.OAUTH2_PROVIDER, "OIDC_ISS_ENDPOINT": url}


@pytest.fixture
def oauth_base(live_server: Any, settings: Any) -> str:
    """The live server's URL, which is QUIRE_BASE_URL for the test."""
    serve_oauth_at(settings, live_server.url)
    return str(live_server.url)


@pytest.fixture
def browserless(oauth_base: str) -> Iterator[Callable[[str], Browserless]]:
    opened: list[Browserless] = []

    def open_as(username: str) -> Browserless:
        person = Browserless(oauth_base, username)
        opened.append(person)
        return person

    yield open_as
    for person in opened:
        person.close()


def require_chromium() -> None:
    require(
        BROWSER,
        CHROMIUM.exists(),
        "Debian's Chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
    )


async def consent_in_chromium(
    browser: Any, url: str, *, username: str, agent_name: str | None, allow: bool = True
) -> str:
    """Open the authorize URL in a fresh browser context, sign in, pick the agent, decide.
    Returns the text of the consent screen as the person saw it."""
    context = await browser.new_context()
    page = await context.new_page()
    page.set_default_timeout(20_000)
    try:
        await page.goto(url)
        await page.fill("#id_username", username)
        await page.fill("#id_password", PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_selector("h1")
        seen: str = await page.inner_text("main")
        # The consent screen holds to the same accessibility bar as every other screen.
        from axe_playwright_python.async_playwright import Axe

        results = await Axe().run(page)
        blocking = [
            (violation["id"], [node["target"] for node in violation["nodes"]][:3])
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        assert blocking == [], blocking
        if agent_name is not None:
            await page.get_by_label(agent_name).check()
        await page.get_by_role("button", name="Allow" if allow else "Deny").click()
        await page.wait_for_load_state()
        return seen
    finally:
        await context.close()


@dataclass
class DocumentServer:
    """https on 127.0.0.1 with its own CA, serving client ID metadata documents by path."""

    server: ThreadingHTTPServer
    ca_file: Path
    documents: dict[str, bytes]
    # Seconds a path waits before it answers, to try the fetch's timeout.
    delays: dict[str, float]
    # Seconds between the bytes of a path's body: a document that drips.
    drips: dict[str, float]
    # Paths answered with a redirect to another URL.
    redirects: dict[str, str] = field(default_factory=dict)
    # Every path asked for, in order.
    fetched: list[str] = field(default_factory=list)
    # How many bytes of each dripped body went out before the fetch gave up (or all of them).
    dripped: dict[str, int] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.server.server_port}{path}"

    def publish(self, path: str, document: dict[str, Any] | bytes) -> str:
        body = document if isinstance(document, bytes) else json.dumps(document).encode()
        self.documents[path] = body
        return self.url(path)


def _self_signed(directory: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


@pytest.fixture
def document_server(tmp_path: Path, settings: Any) -> Iterator[DocumentServer]:
    """The server, and Quire told (as in tests only) to fetch documents from loopback."""
    cert_file, key_file = _self_signed(tmp_path)
    documents: dict[str, bytes] = {}
    delays: dict[str, float] = {}
    drips: dict[str, float] = {}
    redirects: dict[str, str] = {}
    fetched: list[str] = []
    dripped: dict[str, int] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            fetched.append(self.path)
            if self.path in redirects:
                self.send_response(302)
                self.send_header("Location", redirects[self.path])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            time.sleep(delays.get(self.path, 0))
            body = documents.get(self.path)
            if body is None:
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            pause = drips.get(self.path)
            if pause is None:
                self.wfile.write(body)
                return
            dripped[self.path] = 0
            for byte in body:
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return  # the fetch gave up
                dripped[self.path] += 1
                time.sleep(pause)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS = True
    settings.QUIRE_OAUTH_CLIENT_DOCUMENT_CA_FILE = str(cert_file)
    try:
        yield DocumentServer(
            server, cert_file, documents, delays, drips, redirects, fetched, dripped
        )
    finally:
        server.shutdown()
        server.server_close()


def issue_tokens(agent: Any, person: Any, *, resource: str, client_name: str = "Direct") -> str:
    """An access token of a live connection, made in the database without the HTTP flow
    (for tests that count queries or limits through Django's test client)."""
    import uuid
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import AccessToken, Application, RefreshToken, set_token_value

    from connect.models import Connection
    from connect.tokens import new_access_token, new_refresh_token

    application = Application.objects.create(
        name=client_name,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris="http://127.0.0.1/callback",
        client_secret="",
        hash_client_secret=False,
    )
    connection = Connection.objects.create(
        application=application, agent=agent, allowed_by=person, family=uuid.uuid4()
    )
    raw = new_access_token()
    access = AccessToken(
        user=person,
        application=application,
        scope="mcp",
        expires=timezone.now() + timedelta(hours=1),
        resource=[resource],
    )
    set_token_value(access, raw)
    access.save()
    refresh = RefreshToken(
        user=person,
        application=application,
        access_token=access,
        token_family=connection.family,
        resource=[resource],
    )
    set_token_value(refresh, new_refresh_token())
    refresh.save()
    return raw


def registered_client(base: str, redirect_uri: str) -> OAuthClient:
    """A client that registered itself (RFC 7591) with one redirect URI."""
    client = OAuthClient(base, redirect_uri)
    response = client.register()
    assert response.status_code == 201, response.text
    return client


def allowed_code(
    person: Browserless, client: OAuthClient, agent: Any, *, url: str | None = None
) -> str:
    """The code the client receives once the person allowed it to act as `agent` (at
    `url`, the client's own authorize URL unless given)."""
    response = person.decide(url or client.authorize_url(), agent_id=agent.pk)
    return callback_query(response, client.redirect_uri)["code"]


def mcp_status(base: str, token: str) -> int:
    """What /mcp answers a tools/list with this bearer token: 200, or 401 once it ended."""
    response = httpx.post(
        base + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
        },
        verify=TLS,
        timeout=HTTP_TIMEOUT,
    )
    return response.status_code


@dataclass
class Consent:
    """Where most OAuth tests start: a live Quire, a client's loopback callback, and `owner`
    signed in (without a browser) with their agent `owned_agent`."""

    base: str
    callback: CallbackServer
    owner: Any
    owned_agent: Any
    person: Browserless

    def client(self) -> OAuthClient:
        """A client registered (RFC 7591) with the callback as its one redirect URI."""
        return registered_client(self.base, self.callback.uri)

    def code(self, client: OAuthClient, *, url: str | None = None) -> str:
        """The code `client` receives once the owner allowed it to act as their agent."""
        return allowed_code(self.person, client, self.owned_agent.agent, url=url)

    def connect(self) -> tuple[OAuthClient, dict[str, Any]]:
        """Register, allow, exchange: a client holding its first pair of tokens."""
        client = self.client()
        tokens = client.exchange(self.code(client))
        assert tokens.status_code == 200, tokens.text
        return client, tokens.json()

    def mcp_status(self, token: str) -> int:
        return mcp_status(self.base, token)


@pytest.fixture
def consent(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    owner: Any,
    owned_agent: Any,
) -> Consent:
    return Consent(oauth_base, callback, owner, owned_agent, browserless(owner.username))


@asynccontextmanager
async def chromium() -> AsyncIterator[Any]:
    """Debian's Chromium, headless, for the consent screen; closed on the way out."""
    from playwright.async_api import async_playwright

    require_chromium()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"]
        )
        try:
            yield browser
        finally:
            await browser.close()


@pytest.fixture
def owner(make_user: Callable[..., Any]) -> Any:
    """A person who owns an agent (not an admin)."""
    return make_user("olga")


@pytest.fixture
def owned_agent(make_agent: Callable[..., Any], owner: Any, make_page: Callable[..., Any]) -> Any:
    """`helpdesk-bot`, read only, owned by `owner`, reading two pages."""
    from agents import services as agent_services
    from core.actors import SystemActor

    key = make_agent("helpdesk-bot", pages=(make_page("Refund policy"), make_page("Returns")))
    agent_services.agent_update(actor=SystemActor("tests"), agent=key.agent, owner=owner)
    key.agent.refresh_from_db()
    return key
