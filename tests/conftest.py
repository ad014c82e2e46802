"""Shared fixtures: a reviewer, an editor, a reader, an outsider, and helpers to build pages."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.hashers import reset_hashers
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test.signals import clear_cache_handlers
from django.test.testcases import LiveServerThread

from config import cache as config_cache
from core.devserver import PromptThreadedWSGIServer
from reviews.actions.create import page_create
from reviews.models import WorkflowAssignment
from tests.prerequisites import POSTGRES, require
from wiki import language
from wiki.models import Page, Version
from wiki.permissions import ancestor_paths
from wiki.roles import EDITORS, REVIEWERS
from wiki.semantic import DEFAULT_MODEL

# Area fixtures live in their own modules so that each feature's helpers stay together.
pytest_plugins = [
    "tests.fixtures_mcp",
    "tests.fixtures_web",
    "tests.fixtures_mail",
    "tests.fixtures_browser",
    "pytester",
    "tests.fixtures_redis",
    "tests.fixtures_servers",
    "tests.fixtures_oauth",
    "tests.fixtures_oidc",
    "tests.fixtures_credentials",
]

# Servers the tests start inherit this: only tests marked `semantic` run the model.
os.environ.setdefault("QUIRE_EMBEDDING_MODEL", "none")

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("QUIRE_CORPUS", PROJECT_ROOT.parent / "shared" / "corpus"))
HANDBOOK = CORPUS / "18f-handbook" / "pages"


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


# --- how the suite runs (`make test`: tests/run.py) -----------------------------------------

# Production hashes a password with PBKDF2 at 1,000,000 iterations: about half a second per
# user on a busy 2-core machine, and most tests make three or four users. Tests hash with MD5
# (Django's advice for test suites); the real hashers stay listed after it, so a hash made by
# another process (`load_demo` run as a command) still checks. The tests of login itself use
# `real_password_hasher`.
PRODUCTION_PASSWORD_HASHERS = list(settings.PASSWORD_HASHERS)
FAST_PASSWORD_HASHER = "django.contrib.auth.hashers.MD5PasswordHasher"

# Tests that use one of these (or are marked `serial`) run in the serial pass, one at a time
# beside the parallel pass on a Redis database of their own (tests/run.py): a Celery worker
# (it consumes its Redis database's one queue, whichever xdist worker published to it),
# gunicorn in its own processes, or a server pointed at a database that is not there.
# Browser tests run in the parallel pass: Chromium and the live server are each worker's own.
SERIAL_FIXTURES = frozenset({"celery_worker", "quire_servers", "server_without_database"})


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--part",
        choices=("parallel", "serial"),
        help="only the tests that may run in parallel (under pytest-xdist), or only the others",
    )


def pytest_configure(config: pytest.Config) -> None:
    # pytest-django's `live_server` runs Django's LiveServerThread, which makes its server
    # from this class attribute: one whose connections send at once (core/devserver.py).
    LiveServerThread.server_class = PromptThreadedWSGIServer
    settings.PASSWORD_HASHERS = [FAST_PASSWORD_HASHER, *PRODUCTION_PASSWORD_HASHERS]
    reset_hashers(setting="PASSWORD_HASHERS")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker and settings.REDIS_URL:
        keep_redis_keys_apart(worker)


def keep_redis_keys_apart(worker: str) -> None:
    """xdist workers share REDIS_URL: each keys its cache and counters by its own name.

    Each worker has its own database, so two of them may both have agent 1, whose rate-limit
    counter would otherwise be one key; and a test that empties the cache (a prefixed cache
    deletes only its own keys, config/cache.py) must not empty another worker's.
    """
    for alias, cache in settings.CACHES.items():
        if "Redis" in str(cache["BACKEND"]):
            cache["KEY_PREFIX"] = f"{cache.get('KEY_PREFIX') or alias}-{worker}"
    settings.QUIRE_COUNTERS_KEY_PREFIX = f"counters-{worker}"
    settings.QUIRE_SHARED_KEY_PREFIX = f"shared-{worker}"
    clear_cache_handlers(setting="CACHES")


def runs_serially(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("serial") is not None or bool(fixtures & SERIAL_FIXTURES)


# What a test asks for when it uses the suite's database (pytest-django refuses any other use).
DATABASE_FIXTURES = frozenset({"db", "transactional_db", "live_server"})


def uses_the_database(item: pytest.Item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("django_db") is not None or bool(fixtures & DATABASE_FIXTURES)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """`database_independent` tests must not use the suite's database; then the parts."""
    wrong = [
        item.nodeid
        for item in items
        if item.get_closest_marker("database_independent") and uses_the_database(item)
    ]
    if wrong:
        raise pytest.UsageError(
            "marked database_independent but using the suite's database (CI's PostgreSQL run "
            f"would leave them out): {', '.join(wrong)}"
        )
    part = config.getoption("part")
    if part is None:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if runs_serially(item) == (part == "serial") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


@pytest.fixture
def real_password_hasher(settings: Any) -> None:
    """Production's hashers, for the tests of login itself (and servers that check passwords)."""
    settings.PASSWORD_HASHERS = PRODUCTION_PASSWORD_HASHERS


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `postgres` runs only on PostgreSQL: skipped elsewhere, failed in CI's run."""
    if item.get_closest_marker("postgres") is not None:
        require(
            POSTGRES,
            is_postgres(),
            f"needs PostgreSQL, and the tests run on {connection.vendor} "
            "(set DATABASE_URL=postgres://USER@HOST:PORT/NAME)",
        )


@pytest.fixture(autouse=True)
def _embedding_model(request: pytest.FixtureRequest, settings: Any) -> None:
    """The embedding model for tests marked `semantic`; keyword-only search for the others."""
    semantic = request.node.get_closest_marker("semantic") is not None
    settings.QUIRE_EMBEDDING_MODEL = DEFAULT_MODEL if semantic else "none"


@pytest.fixture(autouse=True)
def _no_random_purge(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database counter's hit purges the expired rows one time in 500, at random: one
    statement more, which made the query-count tests fail now and then. Tests purge only when
    they ask (tests/test_cache_counters.py)."""
    monkeypatch.setattr(config_cache, "purge_due", lambda: False)


@pytest.fixture(autouse=True)
def _wiki_languages(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from an empty wiki, whose languages are then counted as pages are
    indexed: they are never read from the database again (a thread does so once a minute),
    so query counts and plans stay the same however long a test takes."""
    monkeypatch.setattr(language, "LANGUAGES_TTL_SECONDS", float("inf"))
    language.prime_languages({})


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
def outsider(make_user: Callable[..., User]) -> Iterator[User]:
    """A signed-in user with no role and nothing to do with the pages under test.

    Unlike `reader`, who writes proposals in many tests, the outsider has authored, decided,
    uploaded and owns nothing, and is in no group. That is checked again when the test ends,
    so a test cannot quietly turn the outsider into an author and still call it an outsider.
    """
    user = make_user("otto")
    yield user
    user.refresh_from_db()
    assert not (user.is_staff or user.is_superuser or user.groups.exists()), "outsider got a role"
    assert rows_pointing_at(user) == [], "the outsider must stay unrelated; use reader instead"


# The user's own API keys say who they are, not what they have to do with a page.
# Ways in, not things done: keys, and the sessions a sign-in records (people.SignInSession).
CREDENTIALS = {"authtoken.Token", "reviews.ApiToken", "people.SignInSession"}


def rows_pointing_at(user: User) -> list[str]:
    """Each kind of row that refers to `user` (versions, decisions, agents, audit...), by name."""
    found = []
    for relation in User._meta.related_objects:
        related = relation.related_model
        assert not isinstance(related, str)
        if related._meta.label in CREDENTIALS:
            continue
        if related._default_manager.filter(**{relation.field.name: user}).exists():
            found.append(f"{related._meta.label}.{relation.field.name}")
    return found


@pytest.fixture
def admin_user(make_user: Callable[..., User]) -> User:
    return make_user("ada", superuser=True)


@pytest.fixture
def make_page(editor: User) -> Callable[..., Page]:
    """A live page published by the editor.

    Under a review workflow nobody publishes (wiki.permissions), so a page made there is set
    up as the section's existing content: as if made before the workflow was assigned (the
    assignments above it are lifted while it is made, and put back). Tests of publishing
    under a workflow go through the services and doors themselves, never through this."""

    def make(
        title: str = "A page",
        body: str = "Some text.\n",
        *,
        parent: Page | None = None,
        tags: list[str] | None = None,
        instructions: str = "",
    ) -> Page:
        above = (
            []
            if parent is None
            else list(WorkflowAssignment.objects.filter(page__path__in=ancestor_paths(parent.path)))
        )
        WorkflowAssignment.objects.filter(pk__in=[row.pk for row in above]).delete()
        try:
            version = page_create(
                actor=editor,
                title=title,
                body=body,
                parent=parent,
                tags=tags or [],
                instructions=instructions,
                publish=True,
            )
        finally:
            WorkflowAssignment.objects.bulk_create(above)
        return Page.objects.get(pk=version.page_id)

    return make


def live(page: Page) -> Version:
    page.refresh_from_db()
    assert page.live_version is not None
    return page.live_version


_SEEN_FORM = re.compile(
    r'<form id="rv-seen" method="post" action="([^"]+)" hidden>(.*?)</form>', re.S
)
_SHOWN = re.compile(r'name="shown" value="([^"]*)"')


def seen_post(client: Any, html: str) -> None:
    """The "seen" POST a review page or the queue sends once shown (static/quire/reviews.js):
    every digest its form carries."""
    found = _SEEN_FORM.search(html)
    if found is not None:
        shown = _SHOWN.findall(found.group(2))
        assert client.post(found.group(1), {"shown": shown}).status_code == 204


def open_review_page(client: Any, url: str) -> str:
    """A reviewer opens a review page as a browser does: the GET (which writes nothing), then
    the "seen" POST its script sends once it is shown (static/quire/reviews.js). Returns the
    page's HTML."""
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    html = response.content.decode()
    seen_post(client, html)
    return html


def open_queue(client: Any, url: str = "/reviews/") -> str:
    """A reviewer opens the review queue as a browser does: the GET (which writes nothing),
    then the "seen" POST for the rows it shows whole. Returns the page's HTML."""
    return open_review_page(client, url)


@pytest.fixture(autouse=True)
def _fresh_cache(request: pytest.FixtureRequest) -> None:
    """Rate-limit and login-throttle counters live in shared stores; no test inherits another's.

    Without Redis they are in the database, so only tests that may use it clear them.
    """
    from django.core.cache import cache

    from config.cache import counters_clear

    uses_db = request.node.get_closest_marker("django_db") is not None or bool(
        {"db", "transactional_db", "live_server"} & set(request.fixturenames)
    )
    if uses_db:
        transactional = bool({"transactional_db", "live_server"} & set(request.fixturenames))
        request.getfixturevalue("transactional_db" if transactional else "db")
        cache.clear()
        counters_clear()
