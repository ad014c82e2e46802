"""Shared fixtures: a reviewer, an editor, a reader, an outsider, and helpers to build pages."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from reviews import services
from wiki.models import Page, Version
from wiki.roles import EDITORS, REVIEWERS

# Area fixtures live in their own modules so that each feature's helpers stay together.
pytest_plugins = [
    "tests.fixtures_mcp",
    "tests.fixtures_web",
    "tests.fixtures_mail",
    "tests.fixtures_browser",
]

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("QUIRE_CORPUS", PROJECT_ROOT.parent / "shared" / "corpus"))
HANDBOOK = CORPUS / "18f-handbook" / "pages"


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


@pytest.fixture
def make_user(db: Any) -> Callable[..., User]:
    def make(username: str, *groups: str, superuser: bool = False, **extra: Any) -> User:
        user = User.objects.create_user(
            username=username,
            password="correct-horse-battery",
            email=f"{username}@example.com",
            is_superuser=superuser,
            is_staff=superuser,
            **extra,
        )
        for name in groups:
            user.groups.add(Group.objects.get_or_create(name=name)[0])
        return user

    return make


@pytest.fixture
def editor(make_user: Callable[..., User]) -> User:
    return make_user("edna", EDITORS)


@pytest.fixture
def reviewer(make_user: Callable[..., User]) -> User:
    return make_user("rita", REVIEWERS)


@pytest.fixture
def second_reviewer(make_user: Callable[..., User]) -> User:
    return make_user("rob", REVIEWERS)


@pytest.fixture
def reader(make_user: Callable[..., User]) -> User:
    return make_user("reed")


@pytest.fixture
def outsider(make_user: Callable[..., User]) -> User:
    return make_user("otto", is_active=True)


@pytest.fixture
def admin_user(make_user: Callable[..., User]) -> User:
    return make_user("ada", superuser=True)


@pytest.fixture
def make_page(editor: User) -> Callable[..., Page]:
    """A live page published by the editor."""

    def make(
        title: str = "A page",
        body: str = "Some text.\n",
        *,
        parent: Page | None = None,
        tags: list[str] | None = None,
        instructions: str = "",
    ) -> Page:
        version = services.page_create(
            actor=editor,
            title=title,
            body=body,
            parent=parent,
            tags=tags or [],
            instructions=instructions,
            publish=True,
        )
        return Page.objects.get(pk=version.page_id)

    return make


def live(page: Page) -> Version:
    page.refresh_from_db()
    assert page.live_version is not None
    return page.live_version


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    """Rate-limit and login-throttle counters live in the cache; no test inherits another's."""
    from django.core.cache import cache

    cache.clear()
