"""Fixtures for the web tests: logged-in clients (browser and REST) and a wiki of any size."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from config.cache import counters_clear
from core.actors import SystemActor
from reviews.actions.create import page_create
from reviews.api_tokens import api_token_create
from wiki.models import Page


@pytest.fixture
def throttle_cache(request: pytest.FixtureRequest) -> None:
    """Login failures start from zero (they live in the shared counter store)."""
    transactional = bool({"transactional_db", "live_server"} & set(request.fixturenames))
    request.getfixturevalue("transactional_db" if transactional else "db")
    counters_clear()


@pytest.fixture
def client_as(db: Any) -> Callable[[User], Client]:
    def make(user: User) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


def rest_client(user: User) -> APIClient:
    """A REST client signed in with a new API key of `user`."""
    api = APIClient()
    api.credentials(
        HTTP_AUTHORIZATION=f"Token {api_token_create(actor=SystemActor('tests'), user=user)}"
    )
    return api


@pytest.fixture
def grow_wiki(editor: User) -> Callable[[int], list[Page]]:
    """Add live pages until the wiki has `total` of them: sections of ten, nested two deep.

    Every page mentions "quokka" in its body so that a search finds them all.
    """

    def grow(total: int) -> list[Page]:
        made: list[Page] = []
        count = Page.objects.count()
        section: Page | None = Page.objects.filter(parent=None).order_by("-id").first()
        while count < total:
            if count % 10 == 0 or section is None:
                version = page_create(
                    actor=editor,
                    title=f"Section {count:04d}",
                    body=f"Section {count} about the quokka colony.\n",
                    tags=["section"],
                    publish=True,
                )
                section = version.page
            else:
                version = page_create(
                    actor=editor,
                    title=f"Topic {count:04d}",
                    body=f"Topic {count}: how the quokka finds water.\n",
                    parent=section,
                    publish=True,
                )
            made.append(version.page)
            count += 1
        return made

    return grow


def count_queries(client: Client, url: str) -> int:
    """The number of SQL queries one GET of `url` makes (it must answer 200)."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200, response.status_code
    return len(queries)
