"""The benchmarks' raw-SQL leg sends what a served search sends on each call, and nothing that
a process's first search reads only (bench/run.py `captured_search_sql`); the benches make the
database they are pointed at when it is not there (`ensure_database`)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents import selectors
from bench import run
from wiki import language
from wiki.models import Page
from wiki.search import search_pages

from .fixtures_mcp import AgentKey

pytestmark = pytest.mark.django_db


def unnamed(statements: list[str]) -> list[str]:
    """The statements with their savepoints' names left out (each savepoint has its own)."""
    return [re.sub(r'"s\d+_x\d+"', '"s"', sql) for sql in statements]


def reads_languages(sql: str) -> bool:
    """The statement of `wiki.language.count_languages`: the wiki's languages and their pages."""
    return '"language"' in sql and "COUNT(*)" in sql


def test_the_raw_leg_leaves_out_what_only_a_process_first_search_reads(
    make_page: Callable[..., Page], reader_agent: AgentKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    reader_agent.give(make_page("Zebra crossings", "Cross at the zebra.\n"))
    scope = selectors.agent_scope(reader_agent.agent)

    # A process that has not read the wiki's languages yet reads them with its first search:
    # captured as it was, that read went into the raw leg of every round for that query.
    monkeypatch.setattr(language, "_known", {})
    with CaptureQueriesContext(connection) as first:
        search_pages("zebra", scope=scope, limit=8, fold_copies=True)
    assert any(reads_languages(query["sql"]) for query in first)

    monkeypatch.setattr(language, "_known", {})
    captured = run.captured_search_sql("zebra", scope)
    assert captured and not any(reads_languages(sql) for sql in captured)
    with CaptureQueriesContext(connection) as served:
        search_pages("zebra", scope=scope, limit=8, fold_copies=True)
    assert len(captured) == len(served) == len(first) - 1


def test_the_raw_leg_sends_the_copies_statement_the_mcp_tool_sends(
    make_page: Callable[..., Page], reader_agent: AgentKey
) -> None:
    """search_pages over MCP folds copies (a deeper ranking and one statement more, on the
    pages' fingerprints): the raw leg left both out, so an every-page call looked 3 to 4 ms
    dearer than its SQL (bench/REPORT.md, notes of 2026-12-08)."""
    reader_agent.give(make_page("Zebra crossings", "Cross at the zebra.\n"))
    scope = selectors.agent_scope(reader_agent.agent)
    run.captured_search_sql("zebra", scope)

    captured = run.captured_search_sql("zebra", scope)

    with CaptureQueriesContext(connection) as served:
        search_pages("zebra", scope=scope, limit=8, fold_copies=True)  # as the tool calls it
    assert unnamed(captured) == unnamed([query["sql"] for query in served])
    copies = ("d.fingerprint = ANY", "d.fingerprint IN (SELECT value FROM json_each")
    assert any(statement in sql for sql in captured for statement in copies)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite creates its file itself")
def test_the_benches_create_their_database_when_it_is_not_there() -> None:
    import uuid
    from urllib.parse import quote

    import psycopg
    from django.conf import settings

    server = settings.DATABASES["default"]
    name = f"quire_bench_new_{uuid.uuid4().hex[:8]}"
    login = quote(server["USER"]) + (f":{quote(server['PASSWORD'])}" if server["PASSWORD"] else "")
    host = f"{server['HOST'] or '127.0.0.1'}:{server['PORT'] or 5432}"
    url = f"postgres://{login}@{host}/{name}"
    try:
        # `make bench-search` pointed at a database not created yet made a traceback.
        assert run.ensure_database(url) is True
        assert run.ensure_database(url) is False  # there now: left as it is
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (id int)")
        assert run.ensure_database(url) is False
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('kept')").fetchone() == ("kept",)
        assert run.ensure_database(url, afresh=True) is True  # `make bench`: dropped, made anew
        with psycopg.connect(url, autocommit=True) as conn:
            assert conn.execute("SELECT to_regclass('kept')").fetchone() == (None,)
    finally:
        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
