"""Statistics on the pages' tree key, so that PostgreSQL knows how many pages a subtree's key
range holds (wiki/scope.py, TREE_KEY_SQL).

The index on the key (page_readable_tree_key, migration 0009) is partial, and PostgreSQL
reads no statistics from a partial index: every range looked like 0.5% of the pages, so a
search in a set of three large subtrees read the whole wiki page by page instead of starting
from the pages that hold the words (wiki/search.py). Expression statistics need
PostgreSQL 14; older servers keep the old estimates. SQLite needs nothing.
"""

from typing import Any

from django.db import migrations

CREATE = """
CREATE STATISTICS IF NOT EXISTS wiki_page_tree_key_stats
    ON (replace(path, '/', chr(1)) COLLATE "C") FROM wiki_page;
ANALYZE wiki_page;
"""


def forwards(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor == "postgresql" and connection.pg_version >= 140000:
        schema_editor.execute(CREATE)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP STATISTICS IF EXISTS wiki_page_tree_key_stats")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0014_search_cjk_bigrams")]

    operations = [migrations.RunPython(forwards, backwards)]
