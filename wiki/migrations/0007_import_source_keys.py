"""Mark the source keys of pages imported before keys named their folder.

Those keys were relative to a folder nobody recorded (`common/tar.md`); prefixed with `./`
they are told apart from new keys (`pages/common/tar.md`), and the next import of a folder
that holds the same path takes the page over under its new key.
"""

from typing import Any

from django.db import migrations

LEGACY = "./"
SOURCE_PATH_MAX = 1000
DEMO = "quire-demo:"  # load_demo's own keys, which never came from import_markdown


def mark_legacy_keys(apps: Any, schema_editor: Any) -> None:
    Page = apps.get_model("wiki", "Page")
    pages = (
        Page.objects.exclude(source_path=None)
        .exclude(source_path__startswith=DEMO)
        .exclude(source_path__startswith=LEGACY)
    )
    changed = []
    for page in pages.only("pk", "source_path").iterator(chunk_size=2000):
        if len(page.source_path) > SOURCE_PATH_MAX - len(LEGACY):
            continue  # cannot be marked; it stays a key of its own, as before
        page.source_path = LEGACY + page.source_path
        changed.append(page)
    Page.objects.bulk_update(changed, ["source_path"], batch_size=500)


def unmark_legacy_keys(apps: Any, schema_editor: Any) -> None:
    Page = apps.get_model("wiki", "Page")
    changed = []
    for page in Page.objects.filter(source_path__startswith=LEGACY).only("pk", "source_path"):
        page.source_path = page.source_path[len(LEGACY) :]
        changed.append(page)
    Page.objects.bulk_update(changed, ["source_path"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [("wiki", "0006_index_links_without_titles")]

    operations = [migrations.RunPython(mark_legacy_keys, unmark_legacy_keys, elidable=False)]
