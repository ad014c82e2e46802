"""What search shows of a page body reads its HTML entities as the rendered page does.

wiki.search.plain_text and wiki.outline now decode entities (`D&iacute;as` is `Días`) for
the index's text, its excerpts and the headings of chunks and outlines (issue 37). Rows
written before keep the entities until their page changes: this decodes the indexed body of
every document holding one (the PostgreSQL trigger refreshes its vector) and the heading of
every chunk holding one. The pages' markdown is left as written.
"""

from __future__ import annotations

import html
from typing import Any

from django.db import migrations

_BATCH = 500


def _decode(model: Any, field: str) -> None:
    rows = model.objects.filter(**{f"{field}__contains": "&"}).only("pk", field)
    changed = []
    for row in rows.iterator(chunk_size=_BATCH):
        value = getattr(row, field)
        decoded = html.unescape(value)
        if decoded != value:
            setattr(row, field, decoded)
            changed.append(row)
    model.objects.bulk_update(changed, [field], batch_size=_BATCH)


def decode_body_entities(apps: Any, schema_editor: Any) -> None:
    _decode(apps.get_model("wiki", "SearchDocument"), "body")
    _decode(apps.get_model("wiki", "PageChunk"), "heading")


class Migration(migrations.Migration):
    dependencies = [("wiki", "0021_read_hidden_function")]

    operations = [migrations.RunPython(decode_body_entities, migrations.RunPython.noop)]
