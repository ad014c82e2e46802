"""The suite's own guards: a PostgreSQL test fails when CI requires PostgreSQL, the browser
fixture leaves nothing behind for the tests after it, and the outsider stays unrelated."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from reviews import services
from tests.conftest import PROJECT_ROOT, rows_pointing_at
from tests.fixtures_browser import ASYNC_UNSAFE, CHROMIUM
from tests.prerequisites import BROWSER, require
from wiki.models import Page


@pytest.fixture
def inner_suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A pytest run in a subprocess with Quire's settings and the suite's own fixtures."""
    monkeypatch.setenv("PYTHONPATH", str(PROJECT_ROOT))
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", "config.settings")
    monkeypatch.setenv("SECRET_KEY", "test-only-secret-key")
    for name in ("DATABASE_URL", "REDIS_URL", ASYNC_UNSAFE, "QUIRE_REQUIRE_POSTGRES"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest('pytest_plugins = ["tests.conftest"]')
    return pytester


@pytest.mark.parametrize("required", [False, True])
def test_it_fails_a_postgres_test_on_sqlite_only_when_postgres_is_required(
    inner_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, required: bool
) -> None:
    if required:
        monkeypatch.setenv("QUIRE_REQUIRE_POSTGRES", "1")
    inner_suite.makepyfile(
        test_vendor="""
        import pytest

        @pytest.mark.postgres
        def test_it_runs_on_postgres():
            pass
        """
    )
    result = inner_suite.runpytest_subprocess("-p", "no:cacheprovider", "-rsE", "-W", "ignore")
    if required:
        result.assert_outcomes(errors=1)
        result.stdout.fnmatch_lines(["*needs PostgreSQL, and the tests run on sqlite*"])
        result.stdout.fnmatch_lines(["*QUIRE_REQUIRE_POSTGRES=1, so this is a failure*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*SKIPPED*needs PostgreSQL, and the tests run on sqlite*"])


@pytest.mark.browser
def test_it_leaves_djangos_async_guard_on_after_a_browser_test(
    inner_suite: pytest.Pytester,
) -> None:
    require(BROWSER, CHROMIUM.exists(), "Debian's Chromium is not installed at /usr/bin/chromium")
    inner_suite.makepyfile(
        test_1_browser=f"""
        import os

        def test_it_drives_chromium(browser_page):
            assert os.environ.get("{ASYNC_UNSAFE}") == "true"
            browser_page.set_content("<p>hello</p>")
            assert browser_page.text_content("p") == "hello"
        """,
        test_2_after=f"""
        import os

        def test_it_runs_with_djangos_guard_on():
            assert "{ASYNC_UNSAFE}" not in os.environ
        """,
    )
    result = inner_suite.runpytest_subprocess("-p", "no:cacheprovider", "-W", "ignore")
    result.assert_outcomes(passed=2)


def test_it_sees_a_proposal_as_a_tie_between_a_user_and_a_page(
    make_user: Callable[..., User], make_page: Callable[..., Page]
) -> None:
    """What the outsider fixture checks at the end of each test that uses it."""
    someone = make_user("sam")
    page = make_page("Travel")
    assert rows_pointing_at(someone) == []
    services.version_propose(actor=someone, page=page, body="Book trains.\n")
    tied = {name.split(".", 1)[1] for name in rows_pointing_at(someone)}
    assert "Version.author_user" in tied
