"""A GIN index of the title's words alone (the weight-A lexemes of each search row's vector),
so that a search over every page reads the pages whose titles hold its words first, and the
pages that hold a common word only in their bodies (most of a large wiki for "file") only when
those are too few (wiki.search.backends, docs/search.md). PostgreSQL only: SQLite's FTS5
table has its own title column."""

from __future__ import annotations

from typing import Any

from django.db import migrations

CREATE = (
    "CREATE INDEX IF NOT EXISTS wiki_searchdocument_title_gin "
    "ON wiki_searchdocument USING gin (ts_filter(vector, '{a}'))"
)
DROP = "DROP INDEX IF EXISTS wiki_searchdocument_title_gin"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)
        # Statistics of the indexed expression, which the planner reads for the title's words.
        schema_editor.execute("ANALYZE wiki_searchdocument")


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("wiki", "0025_searchdocument_fingerprint")]

    operations = [migrations.RunPython(forwards, backwards)]
