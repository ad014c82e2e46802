"""Re-index pages written in Chinese, Japanese or Korean: their characters are now split by a
punctuation space instead of a plain one, so that excerpts keep the text's own spaces."""

import re
from typing import Any

from django.db import migrations

from wiki.search import _CJK, document_fields


def reindex_cjk(apps: Any, schema_editor: Any) -> None:
    document_model = apps.get_model("wiki", "SearchDocument")
    page_model = apps.get_model("wiki", "Page")
    attachment_model = apps.get_model("wiki", "Attachment")
    cjk = re.compile(f"[{_CJK}] [{_CJK}]")
    stale = [
        doc.page_id
        for doc in document_model.objects.only("page_id", "title", "tags", "body").iterator()
        if cjk.search(doc.title) or cjk.search(doc.tags) or cjk.search(doc.body)
    ]
    if not stale:
        return
    for page in page_model.objects.filter(pk__in=stale).select_related("live_version"):
        version = page.live_version
        attachments = attachment_model.objects.filter(page_id=page.pk).values_list(
            "name", "extracted_text"
        )
        title, tags, body = document_fields(
            title=version.title,
            tags=version.tags,
            body=version.body,
            attachments=list(attachments),
        )
        document_model.objects.filter(page_id=page.pk).update(title=title, tags=tags, body=body)


class Migration(migrations.Migration):
    dependencies = [("wiki", "0007_import_source_keys")]

    operations = [migrations.RunPython(reindex_cjk, migrations.RunPython.noop)]
