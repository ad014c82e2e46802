"""A page's place among its siblings; existing pages keep the order the tree showed (slug)."""

from django.db import migrations, models


def number_siblings(apps, schema_editor):
    Page = apps.get_model("wiki", "Page")
    rows = Page.objects.order_by("parent_id", "slug", "id").values_list("pk", "parent_id")
    changed = []
    parent, position = object(), 0
    for pk, parent_id in rows.iterator(chunk_size=2000):
        position = position + 1 if parent_id == parent else 0
        parent = parent_id
        if position:
            changed.append(Page(pk=pk, position=position))
        if len(changed) >= 2000:
            Page.objects.bulk_update(changed, ["position"])
            changed = []
    Page.objects.bulk_update(changed, ["position"])


class Migration(migrations.Migration):

    dependencies = [
        ("wiki", "0013_page_chunks"),
    ]

    operations = [
        migrations.AddField(
            model_name="page",
            name="position",
            field=models.IntegerField(default=0),
        ),
        migrations.RunPython(number_siblings, migrations.RunPython.noop),
        migrations.AddIndex(
            model_name="page",
            index=models.Index(
                fields=["parent", "position", "slug", "id"], name="page_sibling_order"
            ),
        ),
    ]
