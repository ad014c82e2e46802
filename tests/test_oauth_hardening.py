"""OAuth seen from outside (issue 37, point 3): the metadata names QUIRE_BASE_URL whatever Host
a request sends, client rows are bounded per address and in total, and a refused client ID
metadata document says why."""

from __future__ import annotations

import html
import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client
from oauth2_provider.models import Application

from tests.fixtures_mcp import rpc
from tests.fixtures_oauth import (
    Browserless,
    Consent,
    DocumentServer,
    OAuthClient,
    callback_query,
    registered_client,
)
from tests.test_oauth_clients import document

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")

# Allowed by ALLOWED_HOSTS (localhost), yet not the server the operator configured.
FORGED_HOST = "localhost:6666"


def _urls(value: Any) -> list[str]:
    """Every URL in a JSON document, however deep."""
    if isinstance(value, str):
        return [value] if value.startswith(("http://", "https://")) else []
    if isinstance(value, dict):
        return [url for item in value.values() for url in _urls(item)]
    if isinstance(value, list):
        return [url for item in value for url in _urls(item)]
    return []


@pytest.mark.django_db
def test_it_names_quire_base_url_in_the_metadata_and_the_401_whatever_the_host() -> None:
    base = settings.QUIRE_BASE_URL
    assert "localhost:6666" not in base
    forged = Client(HTTP_HOST=FORGED_HOST)
    urls: list[str] = []
    for path in [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ]:
        response = forged.get(path)
        assert response.status_code == 200, path
        urls += _urls(json.loads(response.content))
    server = forged.get("/.well-known/oauth-authorization-server").json()
    assert server["issuer"] == base
    for key in ["authorization_endpoint", "token_endpoint", "registration_endpoint"]:
        assert server[key].startswith(base + "/oauth/"), key
    resource = forged.get("/.well-known/oauth-protected-resource/mcp").json()
    assert resource["resource"] == base + "/mcp"
    assert resource["authorization_servers"] == [base]

    refused = rpc(forged, None, "tools/list")
    assert refused.status_code == 401
    challenge = refused["WWW-Authenticate"]
    metadata_url = f"{base}/.well-known/oauth-protected-resource/mcp"
    assert challenge == f'Bearer resource_metadata="{metadata_url}"'
    urls.append(challenge.split('"')[1])

    assert len(urls) >= 8
    assert [url for url in urls if not url.startswith(base + "/") and url != base] == []


def test_the_redirect_back_names_quire_base_url_as_its_issuer_whatever_the_host(
    consent: Consent,
) -> None:
    """A person who reaches Quire under another allowed name still connects a client to
    QUIRE_BASE_URL's /mcp (the resource it discovered, the token's audience), and the
    redirect's `iss` is the metadata's issuer (RFC 9207), which a client compares."""
    base = consent.base
    if "localhost" in base:
        other = base.replace("localhost", "127.0.0.1")
    else:
        other = base.replace("127.0.0.1", "localhost")
    assert other != base  # the same server under another name ALLOWED_HOSTS lets in
    client = registered_client(other, consent.callback.uri)
    person = Browserless(other, consent.owner.username)
    try:
        url = client.authorize_url(resource=base + "/mcp")
        query = callback_query(
            person.decide(url, agent_id=consent.owned_agent.agent.pk), client.redirect_uri
        )
    finally:
        person.close()
    assert query["iss"] == base
    assert client.exchange(query["code"], resource=base + "/mcp").status_code == 200


# --- client ID metadata documents: every refusal says why -------------------------------------


@pytest.mark.parametrize(
    ("problem", "said"),
    [
        ("http", "is an http URL: a client ID metadata document is fetched only over https"),
        ("not-public", "not at a public address"),
        ("too-large", "it is larger than 16,384 bytes"),
        ("redirected", "answered with a redirect (HTTP 302), and Quire follows none"),
        ("redirect-uri", "a redirect URI is refused"),
        ("other-client-id", "is not the URL it was fetched from"),
        ("with-secret", "Quire takes public clients only"),
    ],
)
def test_it_says_why_it_refuses_a_client_id_metadatadocument(
    problem: str, said: str, consent: Consent, document_server: DocumentServer, settings: Any
) -> None:
    url = document_server.url("/client.json")
    good = document(url, consent.callback.uri)
    if problem == "http":
        url = url.replace("https://", "http://")
    elif problem == "not-public":
        settings.QUIRE_OAUTH_LOOPBACK_CLIENT_DOCUMENTS = False
    elif problem == "too-large":
        good["client_uri"] = "https://a.example/" + "x" * 20_000
    elif problem == "redirected":
        document_server.redirects["/client.json"] = document_server.url("/elsewhere.json")
        document_server.publish("/elsewhere.json", good)
    elif problem == "redirect-uri":
        good["redirect_uris"] = ["http://evil.example/cb"]
    elif problem == "other-client-id":
        good["client_id"] = "https://claude.ai/x"
    elif problem == "with-secret":
        good["client_secret"] = "s3cret"
    document_server.publish("/client.json", good)
    client = OAuthClient(consent.base, consent.callback.uri, client_id=url)

    # Said the first time, and again while Quire waits before fetching it again.
    for _ in range(2):
        screen = consent.person.screen(client.authorize_url())
        assert screen.status_code == 400, screen.status_code
        assert "Location" not in screen.headers and "cannot go on" in screen.text
        text = html.unescape(screen.text)
        assert said in text, text
    assert not Application.objects.exists()


def test_it_refuses_clients_past_the_limit_per_address_and_says_which(
    consent: Consent, document_server: DocumentServer, settings: Any
) -> None:
    settings.QUIRE_OAUTH_REGISTRATIONS_PER_HOUR = 2
    consent.client()
    consent.client()
    url = document_server.publish("/client.json", {})
    document_server.publish("/client.json", document(url, consent.callback.uri))
    client = OAuthClient(consent.base, consent.callback.uri, client_id=url)

    screen = consent.person.screen(client.authorize_url())

    assert screen.status_code == 400
    assert "made more than 2 clients this hour" in html.unescape(screen.text)
    assert document_server.fetched == []  # nothing fetched, no row made
    assert not Application.objects.filter(client_id=url).exists()
    registered = OAuthClient(consent.base, consent.callback.uri).register()
    assert registered.status_code == 429
    assert "QUIRE_OAUTH_REGISTRATIONS_PER_HOUR" in registered.json()["error_description"]


def test_it_refuses_clients_past_the_limit_in_total_and_says_what_to_do(
    consent: Consent, document_server: DocumentServer, settings: Any
) -> None:
    settings.QUIRE_OAUTH_CLIENTS_MAX = 2
    consent.client()
    consent.client()
    refused = OAuthClient(consent.base, consent.callback.uri).register()
    assert refused.status_code == 429
    description = refused.json()["error_description"]
    assert "2 clients that never finished connecting" in description
    assert "QUIRE_OAUTH_CLIENTS_MAX" in description and "delete_unused_oauth_clients" in description

    url = document_server.publish("/client.json", {})
    document_server.publish("/client.json", document(url, consent.callback.uri))
    client = OAuthClient(consent.base, consent.callback.uri, client_id=url)
    screen = consent.person.screen(client.authorize_url())
    assert screen.status_code == 400 and "QUIRE_OAUTH_CLIENTS_MAX" in screen.text
    assert document_server.fetched == []
    assert Application.objects.count() == 2


def test_the_token_endpoint_fetches_no_document_of_a_client_never_authorized(
    oauth_base: str, document_server: DocumentServer
) -> None:
    url = document_server.publish("/client.json", {})
    document_server.publish("/client.json", document(url, "http://127.0.0.1:9/cb"))
    client = OAuthClient(oauth_base, "http://127.0.0.1:9/cb", client_id=url)

    refused = client.exchange("not-a-code")

    assert refused.status_code == 401, refused.text
    assert refused.json()["error"] == "invalid_client"
    assert "first seen at the authorize step" in refused.json()["error_description"]
    assert document_server.fetched == []
    assert not Application.objects.exists()
