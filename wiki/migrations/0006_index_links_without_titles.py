# Page links were indexed as the linked page's title, which leaked the titles of pages a
# reader may not see into search results; re-index the pages that link, with their own words.

from django.db import migrations


def reindex_linking_pages(apps, schema_editor):
    from wiki.search import document_fields

    Page = apps.get_model("wiki", "Page")
    SearchDocument = apps.get_model("wiki", "SearchDocument")
    pages = Page.objects.filter(
        archived=False, live_version__isnull=False, live_version__body__contains="[[pg_"
    ).select_related("live_version")
    for page in pages.prefetch_related("attachments").order_by("pk"):
        version = page.live_version
        title, tags, body = document_fields(
            title=version.title,
            tags=version.tags,
            body=version.body,
            attachments=[(a.name, a.extracted_text) for a in page.attachments.all()],
        )
        SearchDocument.objects.filter(page_id=page.pk).update(title=title, tags=tags, body=body)


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0005_auditevent_moves_to_core"),
    ]

    operations = [
        migrations.RunPython(reindex_linking_pages, migrations.RunPython.noop),
    ]
