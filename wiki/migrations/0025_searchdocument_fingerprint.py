"""Each search row's fingerprint (wiki.copies), so that search shows a page copied into
several folders as one hit naming where the copies are (issue 49): the column, its index, and
the fingerprints of the rows indexed before, from their indexed text."""

from __future__ import annotations

from typing import Any

from django.db import migrations, models

from wiki.copies import fingerprint

_BATCH = 500


def fingerprint_documents(apps: Any, schema_editor: Any) -> None:
    documents = apps.get_model("wiki", "SearchDocument")
    rows = documents.objects.filter(fingerprint__isnull=True).only("pk", "body")
    batch = []
    for row in rows.iterator(chunk_size=_BATCH):
        row.fingerprint = fingerprint(row.body)
        batch.append(row)
        if len(batch) == _BATCH:
            documents.objects.bulk_update(batch, ["fingerprint"])
            batch = []
    documents.objects.bulk_update(batch, ["fingerprint"])


class Migration(migrations.Migration):
    dependencies = [("wiki", "0024_search_long_body_positions")]

    operations = [
        migrations.AddField(
            model_name="searchdocument",
            name="fingerprint",
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddIndex(
            model_name="searchdocument",
            index=models.Index(fields=["fingerprint"], name="searchdocument_fingerprint"),
        ),
        migrations.RunPython(fingerprint_documents, migrations.RunPython.noop),
    ]
