"""GET /api/v1/me/: who the request is authenticated as (the benchmark's bare view)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from core.actors import SystemActor
from reviews.api_tokens import api_token_create


def test_it_names_the_tokens_user_in_one_query(reader: User) -> None:
    client = APIClient()
    key = api_token_create(actor=SystemActor("tests"), user=reader)
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    client.get("/api/v1/me/")  # the first call records when the key was last used
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/api/v1/me/")
    assert response.status_code == 200
    assert response.json() == {"username": "reed"}
    assert len(queries) == 1


def test_it_answers_401_without_credentials(db: None) -> None:
    response = APIClient().get("/api/v1/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
