"""The suite's own guards: a PostgreSQL test fails when CI requires PostgreSQL, the browser
fixture leaves nothing behind for the tests after it, the outsider stays unrelated, users are
hashed fast, and `make test` puts worker and server tests in its serial pass."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.hashers import identify_hasher
from django.contrib.auth.models import User

from reviews.actions.propose import version_propose
from tests import run
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


@pytest.mark.database_independent
@pytest.mark.parametrize("required", [False, True])
def test_it_fails_a_corpus_test_without_the_corpus_only_when_the_corpus_is_required(
    inner_suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, required: bool
) -> None:
    # A clone with no shared/ beside it: the corpus tests skip locally and fail in CI
    # (.ci/run sets QUIRE_REQUIRE_CORPUS=1), so CI cannot pass without checking search quality.
    monkeypatch.setenv("QUIRE_CORPUS", str(inner_suite.path / "no-corpus-here"))
    if required:
        monkeypatch.setenv("QUIRE_REQUIRE_CORPUS", "1")
    else:
        monkeypatch.delenv("QUIRE_REQUIRE_CORPUS", raising=False)
    inner_suite.makepyfile(
        test_corpus="""
        from tests.conftest import HANDBOOK
        from tests.prerequisites import require_corpus

        def test_it_reads_the_handbook():
            require_corpus(HANDBOOK)
        """
    )
    result = inner_suite.runpytest_subprocess("-p", "no:cacheprovider", "-rsf", "-W", "ignore")
    if required:
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*the shared corpus is not at*no-corpus-here*"])
        result.stdout.fnmatch_lines(["*QUIRE_REQUIRE_CORPUS=1, so this is a failure*"])
    else:
        result.assert_outcomes(skipped=1)
        result.stdout.fnmatch_lines(["*SKIPPED*the shared corpus is not at*no-corpus-here*"])


@pytest.mark.database_independent
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


@pytest.mark.database_independent
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
    version_propose(actor=someone, page=page, body="Book trains.\n")
    tied = {name.split(".", 1)[1] for name in rows_pointing_at(someone)}
    assert "Version.author_user" in tied


def test_it_hashes_test_users_with_a_fast_hasher(reader: User) -> None:
    """PBKDF2 at a million iterations made most of the suite's time; tests/test_login.py
    checks that login itself still runs on it."""
    assert identify_hasher(reader.password).algorithm == "md5"
    assert reader.check_password("correct-horse-battery")


@pytest.mark.database_independent
def test_it_runs_worker_and_server_tests_in_the_serial_pass_and_browser_tests_in_parallel(
    inner_suite: pytest.Pytester,
) -> None:
    inner_suite.makepyfile(
        test_parts="""
        import pytest

        def test_plain(db):
            pass

        def test_with_a_live_server(live_server):
            pass

        def test_with_a_worker(celery_worker):
            pass

        def test_with_gunicorn(quire_servers):
            pass

        def test_with_chromium(browser_page):
            pass

        @pytest.mark.browser
        def test_marked_browser():
            pass

        @pytest.mark.serial
        def test_marked_serial():
            pass
        """
    )

    # One run (each costs a Django start-up); the parallel pass is the rest, by construction.
    result = inner_suite.runpytest_subprocess(
        "-p", "no:cacheprovider", "--collect-only", "-q", "--part=serial"
    )

    assert {line.split("::")[1] for line in result.outlines if "::" in line} == {
        "test_with_a_worker",
        "test_with_gunicorn",
        "test_marked_serial",
    }
    result.stdout.fnmatch_lines(["*3/7 tests collected (4 deselected)*"])


@pytest.mark.parametrize(
    ("parallel", "serial", "expected"),
    [
        (0, 0, 0),
        (0, 5, 0),  # the arguments named only tests of the parallel pass
        (5, 0, 0),
        (5, 5, 5),  # no test at all: a failure, as with one pytest run
        (1, 0, 1),
        (0, 1, 1),
        (5, 2, 2),
    ],
)
def test_it_fails_make_test_when_a_pass_fails_or_nothing_ran(
    monkeypatch: pytest.MonkeyPatch, parallel: int, serial: int, expected: int
) -> None:
    ran: dict[str, tuple[tuple[str, ...], dict[str, str] | None]] = {}

    def fake_pytest(*args: str, env: dict[str, str] | None = None, output: Any = None) -> int:
        part = args[0].removeprefix("--part=")
        ran[part] = (args, env)
        return parallel if part == "parallel" else serial

    monkeypatch.setattr(run, "pytest", fake_pytest)
    monkeypatch.setenv("QUIRE_TEST_WORKERS", "2")

    assert run.main(["-x", "tests/test_login.py"]) == expected
    assert {part: args for part, (args, _) in ran.items()} == {
        "parallel": (
            "--part=parallel",
            "-n",
            "2",
            "--dist",
            "worksteal",
            "-x",
            "tests/test_login.py",
        ),
        "serial": ("--part=serial", "-x", "tests/test_login.py"),
    }


def test_it_runs_the_serial_pass_beside_the_parallel_one_on_its_own_redis_database(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The serial pass starts before the parallel one ends (its tests mostly wait on servers
    and workers), with the next Redis database: its Celery workers must not take the parallel
    pass's tasks, nor its emptied cache empty theirs."""
    both_running = threading.Barrier(2, timeout=30)
    environments: dict[str, dict[str, str] | None] = {}

    def fake_pytest(*args: str, env: dict[str, str] | None = None, output: Any = None) -> int:
        environments[args[0]] = env
        both_running.wait()  # breaks (and fails the run) if the passes ran one after the other
        return 0

    monkeypatch.setattr(run, "pytest", fake_pytest)
    monkeypatch.setenv("QUIRE_TEST_WORKERS", "2")
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")

    assert run.main([]) == 0
    serial_environment = environments["--part=serial"]
    assert serial_environment is not None
    assert serial_environment["REDIS_URL"] == "redis://127.0.0.1:6379/1"
    assert environments["--part=parallel"] is None  # the parallel pass keeps REDIS_URL as set
    assert run.next_redis_database("redis://:secret@cache:6380") == "redis://:secret@cache:6380/1"
    assert run.next_redis_database("rediss://cache/15") == "rediss://cache/0"


@pytest.mark.database_independent
def test_it_refuses_a_database_independent_test_that_uses_the_database(
    inner_suite: pytest.Pytester,
) -> None:
    """CI's PostgreSQL run leaves `database_independent` tests out: one that used the suite's
    database would then never run on PostgreSQL."""
    inner_suite.makepyfile(
        test_marks="""
        import pytest

        @pytest.mark.database_independent
        def test_alone():
            pass

        @pytest.mark.database_independent
        def test_on_the_database(db):
            pass
        """
    )

    result = inner_suite.runpytest_subprocess("-p", "no:cacheprovider", "--collect-only", "-q")

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*marked database_independent but using the suite's database*test_on_the_database"]
    )
    assert "test_alone" not in result.stderr.str()
