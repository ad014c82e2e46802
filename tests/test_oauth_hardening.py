"""OAuth seen from outside (issue 37, point 3): the metadata names QUIRE_BASE_URL whatever Host
a request sends, client rows are bounded per address and in total, and a refused client ID
metadata document says why."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from tests.fixtures_mcp import rpc

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
