"""pgvector's `embedding` column kept in its row (storage MAIN) instead of pgvector's default,
EXTERNAL, which moved every vector out to the TOAST table: a search in a small set reads its
chunks' vectors one by one, and each was a TOAST fetch (a 2,031-page subtree: 2,049 chunks,
26,008 buffers and 69 ms; issue 38). The vectors written before are stored again."""

from typing import Any

from django.db import migrations


def keep_vectors_inline(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM information_schema.columns "
            "WHERE table_name = 'wiki_pagechunk' AND column_name = 'embedding'"
        )
        if cursor.fetchone() is None:
            return
        cursor.execute("ALTER TABLE wiki_pagechunk ALTER COLUMN embedding SET STORAGE MAIN")
        # A value written anew is stored as the column now says (an unchanged one would keep
        # its TOAST pointer).
        cursor.execute(
            "UPDATE wiki_pagechunk SET embedding = embedding::real[]::vector "
            "WHERE embedding IS NOT NULL"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0018_page_grants"),
    ]

    operations = [
        migrations.RunPython(keep_vectors_inline, migrations.RunPython.noop),
    ]
