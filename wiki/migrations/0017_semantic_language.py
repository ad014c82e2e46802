"""Each search document records its page's language (wiki.language), detected here for the
pages indexed before, so that search can prefer pages in the query's language."""

from typing import Any

from django.db import migrations, models


def detect_languages(apps: Any, schema_editor: Any) -> None:
    from wiki.language import page_language

    SearchDocument = apps.get_model("wiki", "SearchDocument")
    documents = (
        SearchDocument.objects.using(schema_editor.connection.alias)
        .filter(language__isnull=True)
        .select_related("page__live_version")
        .only("page_id", "page__path", "page__live_version__title", "page__live_version__body")
        .order_by("page_id")
    )
    batch = []
    for document in documents.iterator(chunk_size=500):
        version = document.page.live_version
        document.language = (
            page_language(version.title, version.body, document.page.path) if version else ""
        )
        batch.append(document)
        if len(batch) >= 500:
            SearchDocument.objects.bulk_update(batch, ["language"])
            batch = []
    SearchDocument.objects.bulk_update(batch, ["language"])


class Migration(migrations.Migration):
    dependencies = [("wiki", "0016_merge_lanes")]

    operations = [
        migrations.AddField(
            model_name="searchdocument",
            name="language",
            field=models.CharField(blank=True, max_length=16, null=True),
        ),
        migrations.AddIndex(
            model_name="searchdocument",
            index=models.Index(fields=["language"], name="searchdocument_language"),
        ),
        migrations.RunPython(detect_languages, migrations.RunPython.noop, elidable=True),
    ]
