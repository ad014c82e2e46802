"""The statements every tool call runs, compiled once: the same rows and the same writes as
the ORM's, and on PostgreSQL prepared so that they are not planned again on each call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.db.models import Exists, OuterRef
from django.test.utils import CaptureQueriesContext

from agents import selectors
from core.actors import SystemActor
from core.audit import audit_record
from core.compiled_query import CompiledQuery
from core.models import AuditEvent
from wiki.models import Attachment, Page

from .conftest import is_postgres
from .fixtures_mcp import AgentKey

pytestmark = pytest.mark.django_db


def concrete_values(instance: Any) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def test_it_reads_a_page_as_the_orm_does(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    top = make_page("Travel", "Book trains.\n", tags=["travel", "ops"], instructions="Be brief.")
    child = make_page("Per diem", "Rates.\n", parent=top)
    reader_agent.give(top)

    for page in (top, child):
        read = selectors.page_for_agent(reader_agent.agent, page.public_id)
        orm = (
            Page.objects.select_related("live_version")
            .annotate(has_files=Exists(Attachment.objects.filter(page=OuterRef("pk"))))
            .get(pk=page.pk)
        )
        assert read == orm
        assert concrete_values(read) == concrete_values(orm)
        assert read.live_version is not None and orm.live_version is not None
        assert concrete_values(read.live_version) == concrete_values(orm.live_version)
        # Converted as the ORM converts: aware datetimes, JSON lists, real booleans.
        assert read.live_version.created_at.tzinfo is not None
        assert read.in_set is True and read.has_files is False  # type: ignore[attr-defined]
    assert selectors.page_for_agent(reader_agent.agent, top.public_id).live_version.tags == [  # type: ignore[union-attr]
        "travel",
        "ops",
    ]


def test_it_still_refuses_a_page_outside_the_set_and_one_that_is_not_there(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    given, other = make_page("Given"), make_page("Other")
    reader_agent.give(given)
    with pytest.raises(Exception, match="not in your page set"):
        selectors.page_for_agent(reader_agent.agent, other.public_id)
    with pytest.raises(Exception, match="there is no page pg_nothere"):
        selectors.page_for_agent(reader_agent.agent, "pg_nothere")


def test_it_finds_an_active_agent_by_token_as_a_whole_agent(reader_agent: AgentKey) -> None:
    found = selectors.agent_by_token(reader_agent.token)
    assert found is not None
    assert concrete_values(found) == concrete_values(reader_agent.agent)
    reader_agent.agent.is_active = False
    reader_agent.agent.save()
    assert selectors.agent_by_token(reader_agent.token) is None


def test_it_writes_the_audit_row_that_save_would_write(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    page = make_page("Audited")
    fields: dict[str, Any] = {
        "actor": reader_agent.agent,
        "page": page,
        "version_number": 1,
        "outcome": "ok",
        "comment": "a comment \u00e9\u4e2d",
        "duration_ms": 7,
        "data": {"pageIds": [page.public_id], "nested": {"a": [1, None, True]}},
    }
    audit_record(action="test.compiled", **fields)
    audit_record(action="test.compiled", actor=SystemActor("tests"))
    by_agent, by_system = AuditEvent.objects.filter(action="test.compiled").order_by("id")
    assert by_agent.actor_agent_id == reader_agent.agent.pk and by_agent.page_id == page.pk
    assert (by_agent.version_number, by_agent.outcome, by_agent.duration_ms) == (1, "ok", 7)
    assert by_agent.comment == fields["comment"] and by_agent.data == fields["data"]
    assert by_agent.at is not None and by_agent.at.tzinfo is not None
    assert by_system.actor_system == "tests" and by_system.data == {}
    assert by_system.actor_agent_id is None and by_system.page_id is None


def test_it_refuses_a_query_whose_slot_a_field_rewrote() -> None:
    rewritten = CompiledQuery(
        lambda prefix: Page.objects.filter(path__startswith=prefix).values_list("pk"),
        slots=["prefix"],
        row=lambda pk: pk,
    )
    with pytest.raises(ValueError, match="lost the value of prefix"):
        rewritten(prefix="a")


def test_it_logs_each_statement_with_its_values(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    page = make_page("Logged")
    reader_agent.give(page)
    with CaptureQueriesContext(connection) as queries:
        selectors.page_for_agent(reader_agent.agent, page.public_id)
    assert len(queries) == 1
    assert page.public_id in queries.captured_queries[0]["sql"]


@pytest.mark.skipif(not is_postgres(), reason="prepared statements are PostgreSQL's")
def test_it_prepares_the_page_read_on_postgresql_after_a_few_runs(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    page = make_page("Prepared")
    reader_agent.give(page)

    def prepared_page_reads() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_prepared_statements "
                "WHERE statement LIKE %s AND statement LIKE %s",
                ["%wiki_page%", "%set_entry%"],
            )
            return int(cursor.fetchone()[0])

    for _ in range(6):
        selectors.page_for_agent(reader_agent.agent, page.public_id)
    assert prepared_page_reads() == 1
    for _ in range(20):
        selectors.page_for_agent(reader_agent.agent, page.public_id)
    assert prepared_page_reads() == 1  # prepared once, then reused
