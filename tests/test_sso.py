"""Sign-in through a real OpenID Connect provider (tests/fixtures_oidc.py): people created at
their first sign-in, groups from a claim, and the provider's refusal ending every way in."""

from __future__ import annotations

from io import StringIO
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from connect.models import Connection
from core.actors import SystemActor
from people import services
from people.models import SignInSession, SsoIdentity
from people.sealed import unseal
from reviews.api_tokens import api_token_create
from tests.fixtures_oidc import Provider, path_of
from tests.test_settings_env import start


def sign_in(client: Client, provider: Provider, sub: str, *, deny: bool = False) -> Any:
    """What the person does: the login page's button, the provider's form, back to Quire."""
    login = client.get("/login/").content.decode()
    assert "Sign in with Example SSO" in login
    start = client.get("/oidc/authenticate/")
    assert start.status_code == 302
    back = provider.authorize(start["Location"], sub, deny=deny)
    return client.get(path_of(back))


@pytest.fixture
def legal(db: Any) -> Group:
    return Group.objects.create(name="Legal")


def test_it_creates_a_person_at_their_first_sign_in_with_groups_from_the_claim(
    oidc_provider: Provider, legal: Group
) -> None:
    oidc_provider.person(
        "sub-alice",
        email="alice@example.com",
        email_verified=True,
        preferred_username="alice",
        given_name="Alice",
        family_name="Liddell",
        groups=["Legal", "Marketing"],
    )
    client = Client()
    done = sign_in(client, oidc_provider, "sub-alice")
    assert done.status_code == 302 and done["Location"] == "/"

    alice = User.objects.get(username="alice")
    assert (alice.email, alice.first_name, alice.last_name) == (
        "alice@example.com",
        "Alice",
        "Liddell",
    )
    assert not alice.has_usable_password()
    # Marketing is not a group in Quire: ignored, not created.
    assert list(alice.groups.values_list("name", flat=True)) == ["Legal"]
    identity = SsoIdentity.objects.get(user=alice)
    assert identity.subject == "sub-alice" and identity.issuer == oidc_provider.url
    # The refresh token is kept, sealed: the database holds no usable copy.
    assert identity.refresh_token and unseal(identity.refresh_token) != identity.refresh_token
    assert client.get("/").status_code == 200
    assert SignInSession.objects.filter(user=alice).count() == 1


def test_it_moves_the_groups_with_the_claim_at_the_next_sign_in(
    oidc_provider: Provider, legal: Group
) -> None:
    reviewers = Group.objects.get(name="Reviewers")
    oidc_provider.person("sub-bo", email="bo@example.com", groups=["Legal"])
    sign_in(Client(), oidc_provider, "sub-bo")
    oidc_provider.person("sub-bo", email="bo@example.com", groups=["/Reviewers"])
    sign_in(Client(), oidc_provider, "sub-bo")
    bo = User.objects.get(email="bo@example.com")
    assert list(bo.groups.all()) == [reviewers]
    assert User.objects.filter(email="bo@example.com").count() == 1


def test_it_signs_in_an_invited_person_by_their_verified_address(
    oidc_provider: Provider, admin_user: User, mailoutbox: list[Any]
) -> None:
    invited = services.person_invite(actor=admin_user, email="Carol@Example.com", name="Carol")
    oidc_provider.person("sub-carol", email="carol@example.com", email_verified=True)
    sign_in(Client(), oidc_provider, "sub-carol")
    assert SsoIdentity.objects.get(subject="sub-carol").user == invited


def test_it_does_not_link_an_unverified_address_to_an_existing_person(
    oidc_provider: Provider, reader: User
) -> None:
    oidc_provider.person("sub-mallory", email=reader.email, email_verified=False)
    sign_in(Client(), oidc_provider, "sub-mallory")
    assert not SsoIdentity.objects.filter(user=reader).exists()
    assert SsoIdentity.objects.get(subject="sub-mallory").user != reader


def test_it_refuses_a_person_deactivated_in_quire(
    oidc_provider: Provider, reader: User, admin_user: User
) -> None:
    oidc_provider.person("sub-reed", email=reader.email, email_verified=True)
    sign_in(Client(), oidc_provider, "sub-reed")
    services.person_deactivate(actor=admin_user, person=reader)
    client = Client()
    refused = sign_in(client, oidc_provider, "sub-reed")
    assert refused["Location"] == "/login/?sso=failed"
    page = client.get(refused["Location"]).content.decode()
    assert "Your account in Quire is deactivated" in page
    assert client.get("/").status_code == 302


def test_it_says_so_when_the_provider_does_not_sign_the_person_in(
    oidc_provider: Provider, db: Any
) -> None:
    client = Client()
    denied = sign_in(client, oidc_provider, "sub-dora", deny=True)
    assert denied["Location"] == "/login/?sso=failed"
    assert "Example SSO did not sign you in" in client.get(denied["Location"]).content.decode()
    assert not User.objects.exists()


def test_it_answers_404_for_single_sign_on_when_it_is_not_set_up(db: Any) -> None:
    client = Client()
    assert client.get("/oidc/authenticate/").status_code == 404
    assert "Sign in with" not in client.get("/login/").content.decode()


def test_it_hides_passwords_when_local_passwords_are_off(
    oidc_provider: Provider, settings: Any, reader: User
) -> None:
    settings.QUIRE_LOCAL_PASSWORDS = False
    settings.AUTHENTICATION_BACKENDS = ["people.sso.QuireOIDCBackend"]
    client = Client()
    page = client.get("/login/").content.decode()
    assert "Sign in with Example SSO" in page and 'name="password"' not in page
    client.post("/login/", {"username": reader.username, "password": "correct-horse-battery"})
    assert client.get("/").status_code == 302


@pytest.mark.django_db(transaction=True)
def test_it_ends_sessions_api_keys_and_connections_when_the_provider_refuses(
    oidc_provider: Provider, consent: Any
) -> None:
    owner = consent.owner
    oidc_provider.person("sub-olga", email=owner.email, email_verified=True)
    browser = Client()
    sign_in(browser, oidc_provider, "sub-olga")
    assert browser.get("/").status_code == 200
    _, pair = consent.connect()
    assert consent.mcp_status(pair["access_token"]) == 200
    key = api_token_create(actor=SystemActor("tests"), user=owner)
    api = httpx.get(f"{consent.base}/api/v1/me/", headers={"Authorization": f"Token {key}"})
    assert api.status_code == 200

    # While the provider vouches for her, the check changes nothing.
    assert services.sso_recheck_all() == {"ok": 1}
    assert browser.get("/").status_code == 200

    oidc_provider.revoke("sub-olga")
    assert services.sso_recheck_all() == {"refused": 1}

    assert browser.get("/").status_code == 302
    assert consent.person.screen("/").status_code == 302  # her password session too
    assert consent.mcp_status(pair["access_token"]) == 401
    assert Connection.objects.get().ended_at is not None
    api = httpx.get(f"{consent.base}/api/v1/me/", headers={"Authorization": f"Token {key}"})
    assert api.status_code == 401
    assert not SignInSession.objects.filter(user=owner).exists()
    # Nothing more to ask the provider until she signs in again.
    out = StringIO()
    call_command("sso_recheck", stdout=out)
    assert out.getvalue().strip() == "checked 0 people (none)"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"OIDC_RP_CLIENT_ID": "quire", "OIDC_RP_CLIENT_SECRET": "s"}, "OIDC_OP_AUTHORIZATION"),
        ({"QUIRE_LOCAL_PASSWORDS": "0"}, "QUIRE_LOCAL_PASSWORDS"),
        ({"OIDC_OP_TOKEN_ENDPOINT": "ftp://sso.example.com/token"}, "OIDC_OP_TOKEN_ENDPOINT"),
        ({"QUIRE_OIDC_RECHECK_SECONDS": "5"}, "QUIRE_OIDC_RECHECK_SECONDS"),
    ],
)
def test_it_stops_start_up_on_an_incomplete_single_sign_on_naming_the_variable(
    env: dict[str, str | None], named: str
) -> None:
    result = start(env)
    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert "ImproperlyConfigured" in last_line and named in last_line


def test_it_starts_with_single_sign_on_set_up_from_the_environment() -> None:
    base = "https://sso.example.com/realms/acme/protocol/openid-connect"
    result = start(
        {
            "OIDC_RP_CLIENT_ID": "quire",
            "OIDC_RP_CLIENT_SECRET": "secret",
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{base}/auth",
            "OIDC_OP_TOKEN_ENDPOINT": f"{base}/token",
            "OIDC_OP_USER_ENDPOINT": f"{base}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{base}/certs",
            "QUIRE_LOCAL_PASSWORDS": "0",
        },
        then="from django.conf import settings; print(settings.AUTHENTICATION_BACKENDS)",
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['people.sso.QuireOIDCBackend']"
