"""`quire_read_hidden(key, denied, allowed)` on PostgreSQL: the reading rule of
wiki.scope.hidden_sql for one row, given the reader's denied and allowed roots.

Written inline, the rule was a subquery per row whose cost included working out the two lists
of roots, so the planner priced every row of a subtree as if it read the grants again, and
chose to scan whole tables. As a function taking the two lists, they are worked out once per
statement (the arguments are uncorrelated subqueries) and the rule costs what a function call
costs. A SQL function holding subqueries is never inlined, so that pricing holds. SQLite needs
nothing: its statements are not planned by cost this way.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION quire_read_hidden(key text, denied text[], allowed text[])
RETURNS boolean LANGUAGE sql IMMUTABLE PARALLEL SAFE COST 10 AS $$
    SELECT EXISTS (
        SELECT 1 FROM unnest(denied) AS d(lo)
        WHERE key COLLATE "C" >= d.lo COLLATE "C"
          AND key COLLATE "C" < (d.lo || chr(2)) COLLATE "C"
          AND NOT EXISTS (
              SELECT 1 FROM unnest(allowed) AS a(lo)
              WHERE a.lo COLLATE "C" > d.lo COLLATE "C"
                AND key COLLATE "C" >= a.lo COLLATE "C"
                AND key COLLATE "C" < (a.lo || chr(2)) COLLATE "C"
          )
    )
$$
"""
DROP = "DROP FUNCTION IF EXISTS quire_read_hidden(text, text[], text[])"


def create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE)


def drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):
    dependencies = [("wiki", "0020_decode_title_entities")]

    operations = [migrations.RunPython(create, drop)]
