"""An index of readable pages in tree order, for browse: an agent's entry is one key range
of it, counted from the index alone and read in order a window at a time."""

from typing import Any

from django.db import migrations

from wiki.scope import TREE_KEY_SQL, readable_sql, tree_key_sql

INDEX = "page_readable_tree_key"


def create_index(apps: Any, schema_editor: Any) -> None:
    vendor = schema_editor.connection.vendor
    if vendor not in TREE_KEY_SQL:
        return
    key = tree_key_sql("", vendor)
    readable = readable_sql("")
    # On PostgreSQL the columns browse lists ride along, so that it reads the index alone
    # (an expression's own column must be in the index for an index-only scan).
    covering = " INCLUDE (path, id, public_id, title)" if vendor == "postgresql" else ""
    schema_editor.execute(
        f"CREATE INDEX {INDEX} ON wiki_page (({key})){covering} WHERE {readable}"
    )


def drop_index(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor in TREE_KEY_SQL:
        schema_editor.execute(f"DROP INDEX IF EXISTS {INDEX}")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0008_search_cjk_gaps")]

    operations = [migrations.RunPython(create_index, drop_index)]
