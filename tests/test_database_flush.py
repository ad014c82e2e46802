"""How Quire's PostgreSQL backend empties the database (config/postgresql/base.py).

The flush Django's TransactionTestCase runs after each test (no sequence reset) deletes the
rows of every table instead of truncating them all, which on PostgreSQL made new files for
every table and index (230 to 370 ms a test); `manage.py flush` still truncates and restarts
the ids.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from agents.models import Agent
from core.models import AuditEvent
from wiki.models import Page, Version

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def tables() -> list[str]:
    return connection.introspection.django_table_names(only_existing=True, include_views=False)


def rows_left() -> dict[str, int]:
    counts = {}
    with connection.cursor() as cursor:
        for table in tables():
            quoted = connection.ops.quote_name(table)  # a name from introspection
            cursor.execute(f"SELECT count(*) FROM {quoted}")  # noqa: S608
            counts[table] = cursor.fetchone()[0]
    return {table: count for table, count in counts.items() if count}


def test_the_test_flush_deletes_the_rows_of_every_table_whatever_refers_to_what(
    make_page: Callable[..., Page], reviewer: User
) -> None:
    parent = make_page("Parent", "Above.\n")
    make_page("Child", "Below.\n", parent=parent)
    Agent.objects.create(name="bot", owner=reviewer)
    assert Version.objects.exists() and AuditEvent.objects.exists() and Permission.objects.exists()

    statements = connection.ops.sql_flush(no_style(), tables(), reset_sequences=False)
    assert statements and all(s.startswith("DELETE FROM ") for s in statements), statements
    # Pages refer to their versions and versions to their pages: deferred keys let the rows
    # go in any order, in the flush's one transaction.
    call_command("flush", interactive=False, reset_sequences=False, inhibit_post_migrate=True)

    assert rows_left() == {}


def test_manage_py_flush_still_truncates_and_restarts_the_ids(
    make_page: Callable[..., Page],
) -> None:
    make_page("A page", "Text.\n")

    [statement] = connection.ops.sql_flush(no_style(), tables(), reset_sequences=True)
    assert statement.startswith("TRUNCATE ") and statement.endswith(" RESTART IDENTITY;")
    call_command("flush", interactive=False, inhibit_post_migrate=True)

    assert rows_left() == {}
    again = Page.objects.create(title="After", slug="after")
    assert again.pk == 1
