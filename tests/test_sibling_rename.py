"""Two approvals that give sibling pages the same title at the same moment: one wins, the
other is a clear conflict that changes nothing (never a database error)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from core.errors import Conflict
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki.models import Page, VersionStatus

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = cursor.fetchone()
    return bool(row and row[0])


# SQLite runs one writer at a time, so the two renames cannot overlap there.
@pytest.mark.postgres
def test_it_gives_one_success_and_one_conflict_for_two_renames_to_one_title(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    parent = make_page("Tools")
    first = make_page("Slack", parent=parent)
    second = make_page("Zoom", parent=parent)
    rename_first = version_propose(actor=reader, page=first, title="Chat")
    rename_second = version_propose(actor=reader, page=second, title="Chat")
    first_approved, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def approve_first_and_hold() -> None:
        try:
            with transaction.atomic():
                version_approve(actor=reviewer, version=rename_first)
                first_approved.set()
                release.wait(timeout=30)
            outcome["first"] = "approved"
        finally:
            connection.close()

    def approve_second() -> None:
        try:
            version_approve(actor=second_reviewer, version=rename_second)
            outcome["second"] = "approved"
        except Conflict as exc:
            outcome["second"] = exc
        finally:
            connection.close()

    holder = threading.Thread(target=approve_first_and_hold)
    holder.start()
    assert first_approved.wait(timeout=30)
    racer = threading.Thread(target=approve_second)
    racer.start()
    deadline = time.monotonic() + 30
    while not _waiting_on_a_lock() and racer.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    release.set()
    holder.join(timeout=30)
    racer.join(timeout=30)

    assert outcome["first"] == "approved"
    conflict = outcome["second"]
    assert isinstance(conflict, Conflict)
    assert "at the same moment, so nothing was changed" in conflict.message
    rename_second.refresh_from_db()
    assert rename_second.status == VersionStatus.IN_REVIEW
    assert live(second).title == "Zoom"
    assert live(first).title == "Chat"

    version_approve(actor=second_reviewer, version=rename_second)  # decided again

    second.refresh_from_db()
    assert (second.title, second.path) == ("Chat", "tools/chat-2")
