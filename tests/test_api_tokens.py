"""REST API keys are stored hashed, shown once by `create_api_token`, and revocable."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from core.models import AuditEvent
from reviews.models import ApiToken

pytestmark = pytest.mark.django_db


def create_api_token(username: str) -> str:
    out = StringIO()
    call_command("create_api_token", username, stdout=out)
    return out.getvalue().strip().splitlines()[-1]


def test_it_prints_a_key_on_the_last_line_and_stores_only_its_hash(reader: User) -> None:
    key = create_api_token("reed")

    [token] = ApiToken.objects.all()
    assert key.startswith("qk_") and len(key) > 40
    assert token.key_hash == hashlib.sha256(key.encode()).hexdigest()
    assert token.prefix == key[:10]
    assert key not in str(list(ApiToken.objects.values()))
    assert AuditEvent.objects.filter(action="api_token.create").count() == 1


def test_it_authenticates_the_key_and_records_when_it_was_used(reader: User) -> None:
    key = create_api_token("reed")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.get("/api/v1/pages/")

    assert response.status_code == 200
    assert ApiToken.objects.get().last_used_at is not None


def test_it_refuses_a_revoked_or_unknown_key_with_a_next_step(reader: User) -> None:
    key = create_api_token("reed")
    ApiToken.objects.all().delete()  # revoked in the admin
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.get("/api/v1/reviews/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    assert "create_api_token USERNAME" in response.json()["error"]["message"]


def test_it_refuses_the_key_of_an_inactive_user(reader: User) -> None:
    key = create_api_token("reed")
    User.objects.filter(pk=reader.pk).update(is_active=False)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.get("/api/v1/reviews/").status_code == 401


def test_it_says_what_to_do_for_an_unknown_username() -> None:
    with pytest.raises(CommandError, match="there is no user named 'nobody'"):
        create_api_token("nobody")
