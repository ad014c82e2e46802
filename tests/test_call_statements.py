"""The statements every tool call runs, in plain SQL: the same values as the ORM's, the token
found once and forgotten when it changes, and on PostgreSQL prepared so that they are not
planned again on each call."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
import redis
from django.db import close_old_connections, connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents import mcp_audit, mcp_rate, selectors
from agents import services as agent_services
from agents.models import PageRead
from config.cache import counter_value
from config.postgresql.base import has_input
from config.postgresql.types import int_array
from core.actors import SystemActor
from core.audit import audit_event, audit_record
from core.models import AuditEvent
from wiki.models import Page
from wiki.search import search_pages

from .conftest import is_postgres
from .fixtures_mcp import AgentKey, rpc, rpc_tool
from .fixtures_redis import RedisServer

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
        read = selectors.readable_page_for_agent(reader_agent.agent, page.public_id)
        orm = Page.objects.select_related("live_version").get(pk=page.pk)
        live = orm.live_version
        assert live is not None
        assert read == selectors.ReadablePage(
            pk=orm.pk,
            public_id=orm.public_id,
            path=orm.path,
            title=live.title,
            tags=live.tags,
            instructions=live.instructions,
            body=live.body,
            version_number=live.number,
            published_at=live.decided_at or live.created_at,
            has_files=False,
            root_path=top.path,
            hidden_prefix=0,
        )
        # Converted as the ORM converts: an aware datetime, a JSON list, a real boolean.
        assert read.published_at.tzinfo is not None
        assert read.has_files is False
    assert selectors.readable_page_for_agent(reader_agent.agent, top.public_id).tags == [
        "travel",
        "ops",
    ]


def test_it_refuses_a_page_outside_the_set_as_one_that_is_not_there(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    given, other = make_page("Given"), make_page("Other")
    reader_agent.give(given)
    for read in (selectors.readable_page_for_agent, selectors.page_for_agent):
        # Outside the set and not there at all: the same answer (issue 21).
        with pytest.raises(Exception, match=f"there is no page {other.public_id} that you"):
            read(reader_agent.agent, other.public_id)
        with pytest.raises(Exception, match="there is no page pg_nothere that you"):
            read(reader_agent.agent, "pg_nothere")


def test_it_finds_an_active_agent_by_token_as_a_whole_agent(reader_agent: AgentKey) -> None:
    found = selectors.agent_by_token(reader_agent.token)
    assert found is not None
    assert concrete_values(found) == concrete_values(reader_agent.agent)
    reader_agent.agent.is_active = False
    reader_agent.agent.save()
    assert selectors.agent_by_token(reader_agent.token) is None


def test_it_looks_a_token_up_once_then_forgets_it_when_the_token_is_rotated_or_revoked(
    client: Client, reader_agent: AgentKey, make_page: Callable[..., Page]
) -> None:
    page = make_page("Cached")
    reader_agent.give(page)
    selectors.forget_agent_tokens()
    with CaptureQueriesContext(connection) as first:
        rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)
    with CaptureQueriesContext(connection) as second:
        rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)
    assert any("token_hash" in query["sql"] for query in first.captured_queries)
    assert not any("agents_agent" in query["sql"] for query in second.captured_queries)

    actor = SystemActor("tests")
    new_token = agent_services.agent_token_rotate(actor=actor, agent=reader_agent.agent)
    assert rpc(client, reader_agent.token, "tools/list").status_code == 401
    assert rpc(client, new_token, "tools/list").status_code == 200
    agent_services.agent_update(actor=actor, agent=reader_agent.agent, can_edit_pages=True)
    listed = rpc(client, new_token, "tools/list").json()["result"]["tools"]
    assert "update_page" in [tool["name"] for tool in listed]
    agent_services.agent_revoke(actor=actor, agent=reader_agent.agent)
    assert rpc(client, new_token, "tools/list").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_it_forgets_a_token_again_when_its_change_commits(
    client: Client, reader_agent: AgentKey
) -> None:
    assert rpc(client, reader_agent.token, "tools/list").status_code == 200
    # Another request may read the old row after the change and before its commit.
    agent_services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
    assert rpc(client, reader_agent.token, "tools/list").status_code == 401


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
    audit_record(action="test.sql", **fields)
    audit_record(action="test.sql", actor=SystemActor("tests"))
    audit_event(action="test.sql", **fields).save()
    by_agent, by_system, saved = AuditEvent.objects.filter(action="test.sql").order_by("id")
    ignored = {"id", "at"}
    assert {k: v for k, v in concrete_values(by_agent).items() if k not in ignored} == {
        k: v for k, v in concrete_values(saved).items() if k not in ignored
    }
    assert by_agent.actor_agent_id == reader_agent.agent.pk and by_agent.page_id == page.pk
    assert (by_agent.version_number, by_agent.outcome, by_agent.duration_ms) == (1, "ok", 7)
    assert by_agent.comment == fields["comment"] and by_agent.data == fields["data"]
    assert by_agent.at is not None and by_agent.at.tzinfo is not None
    assert by_system.actor_system == "tests" and by_system.data == {}
    assert by_system.actor_agent_id is None and by_system.page_id is None


def test_it_logs_each_statement_with_its_values(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    page = make_page("Logged")
    reader_agent.give(page)
    with CaptureQueriesContext(connection) as queries:
        selectors.readable_page_for_agent(reader_agent.agent, page.public_id)
    assert len(queries) == 1
    assert page.public_id in queries.captured_queries[0]["sql"]


def prepared_page_reads() -> int:
    """How many statements reading a page for an agent this connection has prepared."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements "
            "WHERE statement LIKE %s AND statement LIKE %s",
            ["%wiki_page%", "%set_entry%"],
        )
        return int(cursor.fetchone()[0])


@pytest.mark.skipif(not is_postgres(), reason="prepared statements are PostgreSQL's")
def test_it_prepares_the_page_read_on_postgresql_after_a_few_runs(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    page = make_page("Prepared")
    reader_agent.give(page)

    for _ in range(6):
        selectors.readable_page_for_agent(reader_agent.agent, page.public_id)
    assert prepared_page_reads() == 1
    for _ in range(20):
        selectors.readable_page_for_agent(reader_agent.agent, page.public_id)
    assert prepared_page_reads() == 1  # prepared once, then reused


@pytest.mark.skipif(not is_postgres(), reason="prepared statements are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_search_leaves_the_statements_its_connection_prepared(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    # Outside any transaction, as a request runs it. A search once had a transaction of its
    # own for its settings, ended by a ROLLBACK, at which psycopg deallocates every statement
    # the connection prepared; its settings now end with each statement's implicit one.
    page = make_page("Quarterly planning", "Notes from the planning day.\n")
    reader_agent.give(page)
    for _ in range(6):
        selectors.readable_page_for_agent(reader_agent.agent, page.public_id)
    assert prepared_page_reads() == 1

    hits = search_pages("quarterly planning", scope=selectors.agent_scope(reader_agent.agent))

    assert [hit.public_id for hit in hits] == [page.public_id]
    assert prepared_page_reads() == 1
    assert not connection.in_atomic_block
    with connection.cursor() as cursor:  # the search's timeout ended with its statements
        cursor.execute("SHOW statement_timeout")
        assert cursor.fetchone()[0] == "0"


@pytest.mark.skipif(not is_postgres(), reason="the parameter is the PostgreSQL backend's")
@pytest.mark.parametrize("values", [[3, 17], [3, 40_000], [3, 2**31 + 5]])
def test_a_kept_array_of_keys_is_sent_as_psycopg_sends_the_list(values: list[int]) -> None:
    # The same type (which decides the plans PostgreSQL considers) and the same values.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_typeof(%s)::text, %s", [int_array(values), int_array(values)])
        kept = cursor.fetchone()
        cursor.execute("SELECT pg_typeof(%s)::text, %s", [values, values])
        listed = cursor.fetchone()
    assert kept == listed
    assert kept[1] == values


@pytest.mark.skipif(not is_postgres(), reason="the check is the PostgreSQL backend's")
@pytest.mark.django_db(transaction=True)
def test_checking_a_kept_connection_sends_nothing_to_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    Page.objects.count()  # connected
    sent: list[str] = []
    execute = type(connection.connection).execute
    cursor = type(connection.connection).cursor

    def spy_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(str(query))
        return execute(self, query, *args, **kwargs)

    def spy_cursor(self: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append("cursor")
        return cursor(self, *args, **kwargs)

    monkeypatch.setattr(type(connection.connection), "execute", spy_execute)
    monkeypatch.setattr(type(connection.connection), "cursor", spy_cursor)

    assert connection.is_usable()
    assert sent == []


@pytest.mark.skipif(not is_postgres(), reason="the check is the PostgreSQL backend's")
@pytest.mark.django_db(transaction=True)
def test_a_connection_the_server_ended_is_replaced_before_a_request_uses_it(
    make_page: Callable[..., Page],
) -> None:
    page = make_page("Still here")
    pid = connection.cursor().connection.info.backend_pid
    fileno = connection.connection.fileno()
    database = connection.settings_dict
    with psycopg.connect(
        dbname=database["NAME"],
        host=database["HOST"],
        port=database["PORT"] or None,
        user=database["USER"],
        password=database["PASSWORD"] or None,
        autocommit=True,
    ) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 10
    while not has_input(fileno) and time.monotonic() < deadline:
        time.sleep(0.01)

    assert not connection.is_usable()
    close_old_connections()  # as at the start of each request
    assert Page.objects.get(pk=page.pk).title == "Still here"
    assert connection.connection.info.backend_pid != pid


# --- with Redis: the token's check and the rate-limit count in one round trip ----------------


def redis_round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every round trip to Redis from now on: a command, or a pipeline's commands at once."""
    trips: list[str] = []
    command, pipeline = redis.Redis.execute_command, redis.client.Pipeline.execute

    def one_command(self: Any, *args: Any, **options: Any) -> Any:
        trips.append(str(args[0]))
        return command(self, *args, **options)

    def one_pipeline(self: Any, *args: Any, **options: Any) -> Any:
        trips.append("+".join(str(c[0][0]) for c in self.command_stack))
        return pipeline(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", one_command)
    monkeypatch.setattr(redis.client.Pipeline, "execute", one_pipeline)
    return trips


def test_a_tool_call_checks_its_kept_token_and_counts_itself_in_one_redis_round_trip(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    redis_configured: RedisServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    page = make_page("Counted")
    reader_agent.give(page)
    rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)  # keeps the token
    trips = redis_round_trips(monkeypatch)
    for _ in range(3):
        rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)
    assert trips == ["GET+SET+INCRBY+EXPIRE"] * 3
    window = mcp_rate.rate_counter(reader_agent.agent)
    assert counter_value(window) == 4  # every call counted once


def test_a_kept_token_rotated_meanwhile_is_refused_and_its_call_not_counted(
    client: Client,
    reader_agent: AgentKey,
    make_page: Callable[..., Page],
    redis_configured: RedisServer,
) -> None:
    page = make_page("Rotated")
    reader_agent.give(page)
    rpc_tool(client, reader_agent.token, "get_page", pageId=page.public_id)
    # Another process rotates the token: this one keeps its copy, only the generation moves.
    kept = dict(selectors._agents_by_token_hash)
    agent_services.agent_token_rotate(actor=SystemActor("tests"), agent=reader_agent.agent)
    selectors._agents_changed_everywhere()
    selectors._agents_by_token_hash.update(kept)
    window = mcp_rate.rate_counter(reader_agent.agent)
    assert counter_value(window) == 1
    answer = rpc(
        client,
        reader_agent.token,
        "tools/call",
        {"name": "get_page", "arguments": {"pageId": page.public_id}},
    )
    assert answer.status_code == 401
    assert counter_value(window) == 1


def test_a_kept_token_is_confirmed_before_a_refusal_is_audited_under_its_agent(
    client: Client, reader_agent: AgentKey, redis_configured: RedisServer
) -> None:
    assert rpc(client, reader_agent.token, "tools/list").status_code == 200
    kept = dict(selectors._agents_by_token_hash)
    agent_services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
    selectors._agents_changed_everywhere()
    selectors._agents_by_token_hash.update(kept)
    before = AuditEvent.objects.filter(action="mcp.request").count()
    answer = client.post(
        "/mcp",
        "{not json",
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {reader_agent.token}",
    )
    assert answer.status_code == 401
    assert AuditEvent.objects.filter(action="mcp.request").count() == before


def test_an_editing_agents_read_is_recorded_with_its_audit_row_in_one_commit(
    client: Client, make_page: Callable[..., Page], editor_agent: AgentKey
) -> None:
    page = make_page("Travel", "Book trains.\n")
    editor_agent.give(page)
    rpc_tool(client, editor_agent.token, "browse")  # the token found, its use recorded

    with CaptureQueriesContext(connection) as queries:
        result = rpc_tool(client, editor_agent.token, "get_page", pageId=page.public_id)

    assert result["isError"] is False, result
    writes = [
        query["sql"]
        for query in queries
        if "agents_pageread" in query["sql"] or "wiki_auditevent" in query["sql"]
    ]
    # PostgreSQL: one statement, one durable commit; SQLite: two (its commits wait for no
    # disk flush in WAL mode).
    assert len(writes) == (1 if is_postgres() else 2), writes
    read = PageRead.objects.get(agent=editor_agent.agent, page=page)
    assert read.version_number == 1
    event = AuditEvent.objects.get(actor_agent=editor_agent.agent, action="mcp.get_page")
    assert (event.page_id, event.version_number) == (page.pk, 1)


def test_a_read_whose_audit_row_fails_records_no_read_either(
    client: Client, make_page: Callable[..., Page], editor_agent: AgentKey, monkeypatch: Any
) -> None:
    page = make_page("Travel", "Book trains.\n")
    editor_agent.give(page)
    monkeypatch.setattr(mcp_audit, "record_call", _failing_record)

    with pytest.raises(RuntimeError):
        rpc_tool(client, editor_agent.token, "get_page", pageId=page.public_id)

    assert not PageRead.objects.filter(agent=editor_agent.agent).exists()


def _failing_record(call: mcp_audit.ToolCall) -> None:
    raise RuntimeError("the audit row could not be written")
