"""A real OpenID Connect provider for the sign-in tests: oidc-provider-mock (Authlib's
provider code behind a small Flask app) on a localhost port, in a thread of the test process.

It signs ID tokens with its own RSA key (published at /jwks), issues and rotates refresh
tokens, and asks for the subject on its own authorization form; a test says who a subject is
with `provider.person(sub, claims)` and takes the provider's trust away with `revoke(sub)`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

SSO_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "people.sso.QuireOIDCBackend",
]


@dataclass
class Provider:
    url: str

    def person(self, sub: str, **claims: Any) -> None:
        response = httpx.put(f"{self.url}/users/{quote(sub, safe='')}", json=claims)
        assert response.status_code == 204, response.text

    def revoke(self, sub: str) -> None:
        """The company disabled `sub`: every token the provider gave for them stops working."""
        response = httpx.post(f"{self.url}/users/{quote(sub, safe='')}/revoke-tokens")
        assert response.status_code == 204, response.text

    def authorize(self, authorize_url: str, sub: str, *, deny: bool = False) -> str:
        """Fill in the provider's own form as the person would; returns where it sends them."""
        form = httpx.get(authorize_url)
        assert form.status_code == 200 and 'name="sub"' in form.text
        data = {"action": "deny"} if deny else {"sub": sub}
        answer = httpx.post(authorize_url, data=data)
        assert answer.status_code == 302, answer.text
        return answer.headers["location"]


@pytest.fixture(scope="module")
def _provider_server() -> Iterator[str]:
    import oidc_provider_mock

    with oidc_provider_mock.run_server_in_thread() as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture
def oidc_provider(_provider_server: str, settings: Any) -> Provider:
    """Quire set up to sign in through the provider, groups taken from its `groups` claim."""
    config = httpx.get(f"{_provider_server}/.well-known/openid-configuration").json()
    settings.OIDC_RP_CLIENT_ID = "quire"
    settings.OIDC_RP_CLIENT_SECRET = "quire-client-secret"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = config["authorization_endpoint"]
    settings.OIDC_OP_TOKEN_ENDPOINT = config["token_endpoint"]
    settings.OIDC_OP_USER_ENDPOINT = config["userinfo_endpoint"]
    settings.OIDC_OP_JWKS_ENDPOINT = config["jwks_uri"]
    settings.OIDC_RP_SIGN_ALGO = "RS256"
    settings.QUIRE_OIDC_PROVIDER_NAME = "Example SSO"
    settings.QUIRE_OIDC_GROUPS_CLAIM = "groups"
    settings.AUTHENTICATION_BACKENDS = SSO_BACKENDS
    return Provider(url=_provider_server)


def path_of(url: str) -> str:
    """`url` without its scheme and host, for Django's test client."""
    return re.sub(r"^https?://[^/]+", "", url)
