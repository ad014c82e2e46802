"""The search index: a SearchDocument per live page, searched on PostgreSQL through a
weighted tsvector kept by a trigger (GIN-indexed), on SQLite through an FTS5 table kept by
triggers. See wiki/search.py."""

import django.contrib.postgres.search
import django.db.models.deletion
from django.db import migrations, models

POSTGRES_UP = """
CREATE FUNCTION wiki_searchdocument_vector() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    BEGIN
        NEW.vector :=
            setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
            || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
            || setweight(to_tsvector('english', coalesce(NEW.body, '')), 'C');
    EXCEPTION WHEN program_limit_exceeded THEN
        -- A body of many distinct words can exceed the 1 MB tsvector limit: index its start.
        NEW.vector :=
            setweight(to_tsvector('english', coalesce(NEW.title, '')), 'A')
            || setweight(to_tsvector('english', coalesce(NEW.tags, '')), 'B')
            || setweight(to_tsvector('english', left(coalesce(NEW.body, ''), 50000)), 'C');
    END;
    RETURN NEW;
END
$$;
CREATE TRIGGER wiki_searchdocument_vector
    BEFORE INSERT OR UPDATE OF title, tags, body ON wiki_searchdocument
    FOR EACH ROW EXECUTE FUNCTION wiki_searchdocument_vector();
CREATE INDEX wiki_searchdocument_vector_gin ON wiki_searchdocument USING gin (vector);
"""

POSTGRES_DOWN = """
DROP INDEX IF EXISTS wiki_searchdocument_vector_gin;
DROP TRIGGER IF EXISTS wiki_searchdocument_vector ON wiki_searchdocument;
DROP FUNCTION IF EXISTS wiki_searchdocument_vector();
"""

# External-content FTS5 table over wiki_searchdocument (rowid = page id), so the text is
# stored once; the triggers keep it in step, old values included as FTS5 requires.
SQLITE_UP = [
    """CREATE VIRTUAL TABLE wiki_searchdocument_fts USING fts5(
        title, tags, body,
        content='wiki_searchdocument', content_rowid='page_id',
        tokenize='porter unicode61 remove_diacritics 2'
    )""",
    """CREATE TRIGGER wiki_searchdocument_fts_insert AFTER INSERT ON wiki_searchdocument BEGIN
        INSERT INTO wiki_searchdocument_fts(rowid, title, tags, body)
        VALUES (new.page_id, new.title, new.tags, new.body);
    END""",
    """CREATE TRIGGER wiki_searchdocument_fts_delete AFTER DELETE ON wiki_searchdocument BEGIN
        INSERT INTO wiki_searchdocument_fts(wiki_searchdocument_fts, rowid, title, tags, body)
        VALUES ('delete', old.page_id, old.title, old.tags, old.body);
    END""",
    """CREATE TRIGGER wiki_searchdocument_fts_update AFTER UPDATE ON wiki_searchdocument BEGIN
        INSERT INTO wiki_searchdocument_fts(wiki_searchdocument_fts, rowid, title, tags, body)
        VALUES ('delete', old.page_id, old.title, old.tags, old.body);
        INSERT INTO wiki_searchdocument_fts(rowid, title, tags, body)
        VALUES (new.page_id, new.title, new.tags, new.body);
    END""",
]

SQLITE_DOWN = [
    "DROP TRIGGER IF EXISTS wiki_searchdocument_fts_update",
    "DROP TRIGGER IF EXISTS wiki_searchdocument_fts_delete",
    "DROP TRIGGER IF EXISTS wiki_searchdocument_fts_insert",
    "DROP TABLE IF EXISTS wiki_searchdocument_fts",
]


def create_search_engine(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_UP)
    elif vendor == "sqlite":
        for statement in SQLITE_UP:
            schema_editor.execute(statement)


def drop_search_engine(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_DOWN)
    elif vendor == "sqlite":
        for statement in SQLITE_DOWN:
            schema_editor.execute(statement)


def index_live_pages(apps, schema_editor):
    from wiki.search import document_fields

    Page = apps.get_model("wiki", "Page")
    SearchDocument = apps.get_model("wiki", "SearchDocument")
    pages = Page.objects.filter(archived=False, live_version__isnull=False).select_related(
        "live_version"
    )
    for page in pages.prefetch_related("attachments").order_by("pk"):
        version = page.live_version
        title, tags, body = document_fields(
            title=version.title,
            tags=version.tags,
            body=version.body,
            attachments=[(a.name, a.extracted_text) for a in page.attachments.all()],
        )
        SearchDocument.objects.create(page_id=page.pk, title=title, tags=tags, body=body)


class Migration(migrations.Migration):

    dependencies = [
        ('wiki', '0002_groups'),
    ]

    operations = [
        migrations.CreateModel(
            name='SearchDocument',
            fields=[
                ('page', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='search_document', serialize=False, to='wiki.page')),
                ('title', models.TextField()),
                ('tags', models.TextField(blank=True, default='')),
                ('body', models.TextField(blank=True, default='')),
                ('vector', django.contrib.postgres.search.SearchVectorField(editable=False, null=True)),
            ],
        ),
        migrations.RunPython(create_search_engine, drop_search_engine),
        migrations.RunPython(index_live_pages, migrations.RunPython.noop),
    ]
