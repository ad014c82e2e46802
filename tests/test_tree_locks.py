"""Two writers in one branch of the tree never deadlock: pages are locked in one order
(ancestors first, by path), and a transaction that still loses a deadlock is run once more.

Each test forces the overlap on PostgreSQL with two threads, each on its own connection: the
first writer is held inside its transaction (holding its locks) until the second is seen
waiting on a lock in pg_stat_activity, then let go.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from core.errors import InvalidArgument
from reviews.actions.propose import version_propose
from wiki import services as wiki_services
from wiki.models import Page

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

WAIT_SECONDS = 30


class Writer(threading.Thread):
    """Runs `work` on its own database connection; keeps its backend pid and its outcome."""

    def __init__(self, name: str, work: Callable[[], Any]) -> None:
        super().__init__(name=name, daemon=True)
        self.work = work
        self.pid: int | None = None
        self.started_work = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            connection.ensure_connection()
            self.pid = connection.connection.info.backend_pid
            self.started_work.set()
            self.work()
        except BaseException as exc:  # the outcome the test asserts on
            self.error = exc
        finally:
            connection.close()


def wait_until_waiting_on_a_lock(writer: Writer) -> None:
    assert writer.started_work.wait(WAIT_SECONDS)
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [writer.pid]
            )
            row = cursor.fetchone()
        if row is not None and row[0] == "Lock":
            return
        assert writer.is_alive(), writer.error
        time.sleep(0.02)
    raise AssertionError(f"{writer.name} never waited on a lock")


@contextmanager
def held_at_check_parent(monkeypatch: pytest.MonkeyPatch, thread_name: str) -> Iterator[Any]:
    """The thread called `thread_name` stops in wiki.services.check_parent (it holds its page
    locks by then) until the returned event is set."""
    release = threading.Event()
    reached = threading.Event()
    original = wiki_services.check_parent

    def check_parent(page: Page | None, parent: Page | None) -> None:
        if threading.current_thread().name == thread_name and not reached.is_set():
            reached.set()
            assert release.wait(WAIT_SECONDS)
        original(page, parent)

    monkeypatch.setattr(wiki_services, "check_parent", check_parent)
    try:
        yield reached, release
    finally:
        release.set()


def renaming(page: Page, editor: User) -> Writer:
    """A started writer publishing `page` under the title "Staff handbook"."""
    writer = Writer(
        "rename",
        lambda: version_propose(actor=editor, page=page, title="Staff handbook", publish=True),
    )
    writer.start()
    return writer


def finish(*writers: Writer) -> None:
    for writer in writers:
        writer.join(WAIT_SECONDS * 2)
        assert not writer.is_alive(), f"{writer.name} is still running"


def test_it_publishes_a_child_while_its_parent_is_renamed(
    make_page: Callable[..., Page], editor: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = make_page("Handbook")
    child = make_page("Travel", parent=parent)
    with held_at_check_parent(monkeypatch, "rename") as (reached, release):
        rename = renaming(parent, editor)
        assert reached.wait(WAIT_SECONDS)
        publish = Writer(
            "publish",
            lambda: version_propose(
                actor=editor, page=child, body="Book trains first.\n", publish=True
            ),
        )
        publish.start()
        wait_until_waiting_on_a_lock(publish)
        release.set()
        finish(rename, publish)
    assert rename.error is None and publish.error is None, (rename.error, publish.error)
    parent.refresh_from_db()
    child.refresh_from_db()
    assert (parent.path, child.path) == ("staff-handbook", "staff-handbook/travel")
    assert child.live_version is not None and child.live_version.body == "Book trains first.\n"


def test_it_moves_a_under_b_while_b_moves_under_a_without_a_cycle(
    make_page: Callable[..., Page], editor: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = make_page("Alpha"), make_page("Beta")
    with held_at_check_parent(monkeypatch, "a-under-b") as (reached, release):
        first = Writer(
            "a-under-b",
            lambda: version_propose(actor=editor, page=a, parent=b, publish=True),
        )
        first.start()
        assert reached.wait(WAIT_SECONDS)
        second = Writer(
            "b-under-a",
            lambda: version_propose(actor=editor, page=b, parent=a, publish=True),
        )
        second.start()
        wait_until_waiting_on_a_lock(second)
        release.set()
        finish(first, second)
    assert first.error is None, first.error
    # The second sees the first's move once it gets the locks: a cycle, refused as such.
    assert isinstance(second.error, InvalidArgument), second.error
    assert "under itself or one of its descendants" in str(second.error.message)
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.parent_id, b.parent_id) == (b.pk, None)
    assert (a.path, b.path) == ("beta/alpha", "beta")


def test_it_runs_a_transaction_that_lost_a_deadlock_once_more(
    make_page: Callable[..., Page], editor: User
) -> None:
    parent = make_page("Handbook")
    child = make_page("Travel", parent=parent)
    child_held, go_on = threading.Event(), threading.Event()

    def outsider() -> None:
        # Holds the child, then wants the parent the rename holds: a real deadlock, which
        # PostgreSQL settles against the rename (it waited first, with the shorter timeout).
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL deadlock_timeout = '20s'")
            cursor.execute("SELECT 1 FROM wiki_page WHERE id = %s FOR UPDATE", [child.pk])
            child_held.set()
            assert go_on.wait(WAIT_SECONDS)
            cursor.execute("SELECT 1 FROM wiki_page WHERE id = %s FOR UPDATE", [parent.pk])

    holder = Writer("outsider", outsider)
    holder.start()
    assert child_held.wait(WAIT_SECONDS)
    rename = renaming(parent, editor)
    wait_until_waiting_on_a_lock(rename)
    go_on.set()
    finish(holder, rename)
    assert holder.error is None, holder.error
    assert rename.error is None, rename.error
    child.refresh_from_db()
    assert child.path == "staff-handbook/travel"
    assert parent.versions.count() == 2  # the lost attempt left nothing behind
