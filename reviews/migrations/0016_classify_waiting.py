"""Class the proposals already waiting (reviews.classify), as a new one is when submitted."""

from typing import Any

from django.db import migrations

from reviews.classify import classify_text
from reviews.merge import appended_body


def classify_waiting(apps: Any, schema_editor: Any) -> None:
    Version = apps.get_model("wiki", "Version")
    waiting = Version.objects.filter(status="in_review").select_related(
        "base_version", "page__live_version"
    )
    for version in waiting.iterator(chunk_size=500):
        live = version.page.live_version
        if live is None:
            classified = classify_text(None, version.body)
        elif version.kind == "append":
            classified = classify_text(live.body, appended_body(live.body, version.proposed_body))
        else:
            before = version.base_version or live
            classified = classify_text(
                before.body,
                version.body,
                moved=version.parent_id != before.parent_id,
                renamed=version.title != before.title,
            )
        Version.objects.filter(pk=version.pk).update(
            change_classes=" ".join(classified.classes), change_lines=classified.lines
        )


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0015_decision_batches"),
        ("wiki", "0023_version_change_classes"),
    ]

    operations = [migrations.RunPython(classify_waiting, migrations.RunPython.noop)]
