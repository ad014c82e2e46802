"""An index that serves Chinese, Japanese and Korean queries on PostgreSQL: character bigrams.

Every CJK character is indexed as a word of its own (migration 0008), so a CJK word is
searched as a phrase of its characters. The GIN index holds no positions: it found every
page holding each character somewhere (on a Korean wiki, nearly every page) and PostgreSQL
then read each one to check the phrase. The tsvector now also holds every pair of adjacent
CJK characters ("파일" in "파일을", "ファ", "ァイ", "イル" in "ファイル") as lexemes of the
`simple` configuration, so a query's bigrams pick the pages from the index before the phrase
is checked (wiki/search.py). Existing rows are re-indexed here.

SQLite needs nothing: FTS5 keeps positions in its index and answers the phrase from it.
"""

from typing import Any

from django.db import migrations

# Han, kana and Hangul, as wiki.search._CJK; the gap is wiki.search.CJK_GAP (U+2008).
CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"

BIGRAMS = rf"""
CREATE OR REPLACE FUNCTION wiki_cjk_bigrams(t text) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(substr(r.run, i, 2), ' '), '')
    FROM (
        SELECT replace(m[1], chr(8200), '') AS run
        FROM regexp_matches(t, '[{CJK}](?:\u2008?[{CJK}])+', 'g') AS m
    ) AS r
    CROSS JOIN LATERAL generate_series(1, char_length(r.run) - 1) AS i
$$;
"""

VECTOR_WITH_BIGRAMS = """
CREATE OR REPLACE FUNCTION wiki_searchdocument_vector() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    body text := coalesce(NEW.body, '');
BEGIN
    LOOP
        BEGIN
            NEW.vector :=
                setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
                || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
                || setweight(to_tsvector('english', body), 'C')
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

VECTOR_WITHOUT_BIGRAMS = """
CREATE OR REPLACE FUNCTION wiki_searchdocument_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        NEW.vector :=
            setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
            || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
            || setweight(to_tsvector('english', coalesce(NEW.body, '')), 'C');
    EXCEPTION WHEN program_limit_exceeded THEN
        NEW.vector :=
            setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
            || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
            || setweight(to_tsvector('english', left(coalesce(NEW.body, ''), 50000)), 'C');
    END;
    RETURN NEW;
END
$$;
"""

# The trigger runs on an update of these columns: setting one to itself re-indexes the row.
REINDEX_CJK = rf"""
UPDATE wiki_searchdocument SET title = title
WHERE title ~ '[{CJK}]' OR tags ~ '[{CJK}]' OR body ~ '[{CJK}]'
"""


def forwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(BIGRAMS)
    schema_editor.execute(VECTOR_WITH_BIGRAMS)
    schema_editor.execute(REINDEX_CJK)


def backwards(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(VECTOR_WITHOUT_BIGRAMS)
    schema_editor.execute(REINDEX_CJK)
    schema_editor.execute("DROP FUNCTION IF EXISTS wiki_cjk_bigrams(text)")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0013_page_chunks")]

    operations = [migrations.RunPython(forwards, backwards)]
