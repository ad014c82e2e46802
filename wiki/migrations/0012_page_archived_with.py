"""Archiving a page archives the pages under it: `archived_with` names the page that took
each along, and pages already under an archived page are archived with it here."""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models

from wiki.scope import Root, Scope


def archive_subtrees(apps: Any, schema_editor: Any) -> None:
    Page = apps.get_model("wiki", "Page")
    # Outermost first: a page under two archived pages goes with the higher one.
    for page in Page.objects.filter(archived=True).order_by("path").only("pk", "path"):
        under = Scope.of([Root(page.pk, page.path)]).q(readable=False)
        Page.objects.filter(under, archived=False).update(archived=True, archived_with=page.pk)
    SearchDocument = apps.get_model("wiki", "SearchDocument")
    SearchDocument.objects.filter(page__archived=True).delete()


class Migration(migrations.Migration):
    dependencies = [("wiki", "0011_version_merged_into")]

    operations = [
        migrations.AddField(
            model_name="page",
            name="archived_with",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="wiki.page",
            ),
        ),
        migrations.RunPython(archive_subtrees, migrations.RunPython.noop),
    ]
