"""A write that committed is never answered "try again" (issue 37, point 5).

During a database fault an update_page whose version had committed answered 503 "try again":
the agent then proposed twice. The fault here is the database's own: a trigger that fails the
statement a step after the version committed (the call's audit row, or the outbox's claim of
the reviewer's email in a hook after commit), as a connection lost at that moment would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.contrib.auth.models import User
from django.db import connection

from core.models import AuditEvent
from reviews.models import Notification
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import Page, Version

pytestmark = pytest.mark.django_db(transaction=True)


def _fail_on(table: str, event: str, when: str, *, cut: bool = False) -> Iterator[None]:
    """Make the database refuse `event` on `table` where `when` holds, until the test ends.
    `cut`: as a lost connection does (an OperationalError on SQLite too: a trigger calling a
    function that does not exist)."""
    if connection.vendor == "postgresql":
        statements = [
            "CREATE FUNCTION quire_test_fault() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'connection lost (test fault)' USING ERRCODE = '08006'; "
            "END $$ LANGUAGE plpgsql",
            f"CREATE TRIGGER quire_test_fault BEFORE {event} ON {table} FOR EACH ROW "
            f"WHEN ({when.replace('row.', 'NEW.')}) EXECUTE FUNCTION quire_test_fault()",
        ]
        undo = [
            f"DROP TRIGGER quire_test_fault ON {table}",
            "DROP FUNCTION quire_test_fault()",
        ]
    else:
        fault = "quire_connection_cut()" if cut else "RAISE(ABORT, 'disk I/O error (test fault)')"
        statements = [
            f"CREATE TRIGGER quire_test_fault BEFORE {event} ON {table} FOR EACH ROW "
            f"WHEN {when.replace('row.', 'NEW.')} "
            f"BEGIN SELECT {fault}; END"
        ]
        undo = ["DROP TRIGGER quire_test_fault"]
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    yield
    with connection.cursor() as cursor:
        for statement in undo:
            cursor.execute(statement)


def _propose(mcp: MCP, bot: AgentKey, page: Page) -> dict[str, object]:
    source = mcp.ok(bot, "get_page_source", pageId=page.public_id)
    result = mcp.call(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.\n",
        changeSummary="Faster.",
        baseVersion=source["liveVersion"],
    )
    assert not result.isError, result.content
    assert result.structuredContent is not None
    return result.structuredContent


def test_a_committed_update_is_answered_as_saved_when_its_audit_row_fails(
    mcp: MCP,
    make_agent: Callable[..., AgentKey],
    make_page: Callable[..., Page],
    reviewer: User,
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    faults = _fail_on(AuditEvent._meta.db_table, "INSERT", "row.action = 'mcp.update_page'")
    next(faults)

    answer = _propose(mcp, bot, page)

    proposals = Version.objects.filter(page=page, author_agent=bot.agent)
    assert [v.number for v in proposals] == [answer["versionNumber"]]
    assert answer["status"] == "in_review"
    assert str(answer["message"]).startswith(f"Submitted as v{answer['versionNumber']}")
    assert Notification.objects.filter(version__in=proposals, recipient=reviewer).exists()
    assert "warning" not in answer  # the answer was whole before the fault
    next(faults, None)


def test_a_write_cut_off_from_the_database_is_told_to_call_again_with_nothing_stored(
    mcp: MCP,
    make_agent: Callable[..., AgentKey],
    make_page: Callable[..., Page],
    caplog: pytest.LogCaptureFixture,
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.\n")
    bot = make_agent("docs-bot", can_edit=True, pages=(page,))
    source = mcp.ok(bot, "get_page_source", pageId=page.public_id)
    faults = _fail_on(Version._meta.db_table, "INSERT", "row.number > 1", cut=True)
    next(faults)

    error = mcp.error(
        bot,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 3 days.\n",
        changeSummary="Faster.",
        baseVersion=source["liveVersion"],
    )

    assert error.startswith("rate_limited: the database was unavailable"), error
    assert "nothing was stored" in error and "internal_error" not in error
    assert not Version.objects.filter(page=page, author_agent=bot.agent).exists()
    said = [r for r in caplog.records if "database is unavailable, nothing stored" in r.message]
    assert len(said) == 1 and said[0].exc_info is None
    assert "Traceback" not in caplog.text
    next(faults, None)
