"""A long page's later sections keep their word positions in the search index.

PostgreSQL keeps a word's position in a tsvector only up to 16,383: every later word of a long
page sat at 16,383, so a phrase ("quarterly rollback drill") in a later section never matched
by position. A body over 30,000 characters (the fewest that can hold 16,383 words) is now
indexed line by line (the index holds plain text, headings stripped: lines are what is left
of its structure), each line's positions following on from the previous ones and wrapping
past 16,383 back to 1: words next to each other stay next to each other; words 16,383
positions apart may look adjacent to a phrase, and a single line longer than 16,383 words
still saturates. Shorter bodies are indexed as
before. The long pages already indexed are indexed again.
"""

from importlib import import_module
from typing import Any

from django.db import migrations

# The trigger as migration 0014 left it, for going back.
VECTOR_BEFORE = import_module("wiki.migrations.0014_search_cjk_bigrams").VECTOR_WITH_BIGRAMS

BODY_VECTOR = r"""
CREATE OR REPLACE FUNCTION wiki_body_vector(body text) RETURNS tsvector
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
    IF char_length(body) <= 30000 THEN
        RETURN to_tsvector('english', body);
    END IF;
    RETURN (
        WITH pieces AS (
            SELECT n, to_tsvector('english', piece) AS vector
            FROM regexp_split_to_table(body, E'\n') WITH ORDINALITY AS t(piece, n)
        ), placed AS (
            SELECT vector, coalesce(sum((
                SELECT coalesce(max(p), 0) FROM unnest(vector) AS u, unnest(u.positions) AS p
            )) OVER (ORDER BY n ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start
            FROM pieces
        )
        SELECT coalesce(string_agg(
            '''' || replace(replace(u.lexeme, '\', '\\'), '''', '''''') || ''':' || (
                SELECT string_agg(((placed.start + p - 1) %% 16383 + 1)::text, ',')
                FROM unnest(u.positions) AS p
            ), ' ')::tsvector, ''::tsvector)
        FROM placed, unnest(placed.vector) AS u
    );
END
$$;
"""

VECTOR = """
CREATE OR REPLACE FUNCTION wiki_searchdocument_vector() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    body text := coalesce(NEW.body, '');
BEGIN
    LOOP
        BEGIN
            NEW.vector :=
                setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
                || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
                || setweight(wiki_body_vector(body), 'C')
                || setweight(to_tsvector('simple', wiki_cjk_bigrams(coalesce(NEW.title, ''))), 'A')
                || setweight(to_tsvector('simple', wiki_cjk_bigrams(coalesce(NEW.tags, ''))), 'B')
                || setweight(to_tsvector('simple', wiki_cjk_bigrams(body)), 'C');
            RETURN NEW;
        EXCEPTION WHEN program_limit_exceeded THEN
            -- A body of many distinct words can exceed the 1 MB tsvector limit: index its start.
            IF char_length(body) <= 50000 THEN
                RAISE;
            END IF;
            body := left(body, 50000);
        END;
    END LOOP;
END
$$;
"""

# The trigger runs on an update of the body: setting it to itself indexes the row again.
REINDEX_LONG = "UPDATE wiki_searchdocument SET body = body WHERE char_length(body) > 30000"


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(BODY_VECTOR)
    schema_editor.execute(VECTOR)
    schema_editor.execute(REINDEX_LONG)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(VECTOR_BEFORE)
    schema_editor.execute(REINDEX_LONG)
    schema_editor.execute("DROP FUNCTION IF EXISTS wiki_body_vector(text)")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0023_version_change_classes")]

    operations = [migrations.RunPython(forwards, backwards)]
