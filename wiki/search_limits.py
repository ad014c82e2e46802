"""A search's time limit and planner settings, and the one way its statements reach the
database (`search_rows`).

On PostgreSQL a search's statements run with settings of their own: a statement timeout (so
that a search too slow for its worker answers a clean, retryable error instead of holding
it), custom plans for their values, and index reads priced as reads from memory. Outside any
transaction, as a request runs it, each statement goes to the server in one round trip with
its settings: a pipeline of `set_config` and the statement, which PostgreSQL runs as one
implicit transaction, so the settings end with it and nothing is left to commit or roll back.
A search used to open a transaction of its own for them (BEGIN, the settings, the
statements, COMMIT: three round trips more than its statements). Inside a caller's
transaction the settings go into a savepoint instead, which `time_limit` rolls back.

On SQLite the limit is a progress handler; there are no settings.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import OperationalError, transaction

from config.replicas import read_connection
from core.errors import TryAgain

QUERY_CANCELED = "57014"
# PostgreSQL's random_page_cost for the search's statements. Its default (4) prices a read by
# index as a seek on a spinning disk; a search reads the index rows of its set's pages, which
# a wiki that is searched keeps in memory. At 116,283 pages (`make bench-scale`) the default
# made the planner prefer a parallel scan of the whole page table to the 2,031 index probes
# of one subtree, which it then searched in 30 ms instead of 6 (p95 30 ms against 12 over
# the bench's queries) whenever ANALYZE's sample put the subtree at 1,163 pages rather than
# 1. 1.1, the usual value for SSDs and cached data, keeps the index plan after any sample;
# the other sets' searches were as fast as before. Only the search's statements have it.
SEARCH_RANDOM_PAGE_COST = "1.1"

# The time limit (ms) of the search running in this thread, when its statements are to carry
# their settings (PostgreSQL, outside a transaction); None otherwise.
_statement_limit: ContextVar[int | None] = ContextVar("quire_search_limit", default=None)


def search_settings(milliseconds: int) -> list[tuple[str, str]]:
    """The settings every statement of a search runs with on PostgreSQL."""
    return [
        ("statement_timeout", str(milliseconds)),
        # Planned for its values each time (a prepared statement's generic plan would guess
        # how many pages the set's ranges and the words hold).
        ("plan_cache_mode", "force_custom_plan"),
        ("random_page_cost", SEARCH_RANDOM_PAGE_COST),
    ]


def _set_config(cursor: Any, settings: Sequence[tuple[str, str]]) -> None:
    """Set `settings` for the current transaction (implicit or not), in one statement."""
    cursor.execute(
        "SELECT " + ", ".join("set_config(%s, %s, true)" for _ in settings),
        [value for pair in settings for value in pair],
    )


@contextmanager
def time_limit(milliseconds: int) -> Iterator[None]:
    """Stop the SQL of one search after `milliseconds`, raising TryAgain instead of holding
    a worker: PostgreSQL's statement_timeout for each of its statements (`search_rows`),
    SQLite's progress handler.
    """
    connection = read_connection()
    if connection.vendor == "postgresql":
        try:
            if connection.in_atomic_block:
                # Inside a caller's transaction: the settings in a savepoint that is rolled
                # back at the end, which ends them (a search writes nothing).
                with transaction.atomic(using=connection.alias):
                    with connection.cursor() as cursor:
                        _set_config(cursor, search_settings(milliseconds))
                    yield
                    transaction.set_rollback(True, using=connection.alias)
            else:
                token = _statement_limit.set(milliseconds)
                try:
                    yield
                finally:
                    _statement_limit.reset(token)
        except OperationalError as error:
            if getattr(error.__cause__, "sqlstate", None) == QUERY_CANCELED:
                raise _too_slow(milliseconds) from error
            raise
        return
    connection.ensure_connection()
    raw = connection.connection
    deadline = time.monotonic() + milliseconds / 1000
    raw.set_progress_handler(lambda: int(time.monotonic() > deadline), 1000)
    try:
        yield
    except OperationalError as error:
        if "interrupted" in str(error):
            raise _too_slow(milliseconds) from error
        raise
    finally:
        raw.set_progress_handler(None, 0)


def search_rows(
    sql: str,
    params: Sequence[Any] | Mapping[str, Any],
    *,
    settings: Sequence[tuple[str, str]] = (),
) -> list[tuple[Any, ...]]:
    """The rows of one statement of a search, run with the search's settings (`time_limit`)
    and `settings` (PostgreSQL planner or extension settings that only this statement needs).

    Under `time_limit` outside any transaction on PostgreSQL: one round trip, the settings
    and the statement pipelined into one implicit transaction. Inside a transaction: the
    settings are set in it first (the caller's savepoint ends them). On SQLite: the
    statement alone."""
    limit = _statement_limit.get()
    connection = read_connection()
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.execute(sql, params)
            return cursor.fetchall()
        if limit is not None and not connection.in_atomic_block:
            every = [*search_settings(limit), *settings]
            with connection.cursor() as setter, connection.wrap_database_errors:
                with connection.connection.pipeline():
                    _set_config(setter, every)
                    cursor.execute(sql, params)
                # The pipeline's end sent its Sync and read every result: one round trip.
            return cursor.fetchall()
        if settings:
            with transaction.atomic(using=connection.alias, savepoint=False):
                _set_config(cursor, settings)
                cursor.execute(sql, params)
                return cursor.fetchall()
        cursor.execute(sql, params)
        return cursor.fetchall()


def _too_slow(milliseconds: int) -> TryAgain:
    return TryAgain(
        f"the search took longer than {milliseconds / 1000:g} seconds and was stopped. Try "
        "again in a few seconds, or narrow it with more distinctive words or `under`."
    )
