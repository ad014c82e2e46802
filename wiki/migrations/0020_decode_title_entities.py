"""Titles imported with HTML entities (`C&oacute;mo`) read as their characters (`Cómo`).

The importer took a title from a frontmatter `title` or a `# heading` as written; a reader of
the rendered page sees the entity decoded, so an agent, the tree and the consent screen were
shown `C&oacute;mo`. Pages, their versions and their search rows get the decoded title; a
page whose address came from the entity-laden title gets the address its title gives now
(its descendants follow), on both databases (the search triggers refresh the index rows).
"""

from __future__ import annotations

import html
from typing import Any

from django.db import migrations
from django.utils.text import slugify

_BATCH = 500


def _decoded(title: str) -> str:
    return html.unescape(title) if "&" in title else title


def decode_title_entities(apps: Any, schema_editor: Any) -> None:
    page_model = apps.get_model("wiki", "Page")
    version_model = apps.get_model("wiki", "Version")
    document_model = apps.get_model("wiki", "SearchDocument")

    versions = version_model.objects.filter(title__contains="&").only("pk", "title")
    changed = [v for v in versions.iterator(chunk_size=_BATCH) if _decoded(v.title) != v.title]
    for version in changed:
        version.title = _decoded(version.title)
    version_model.objects.bulk_update(changed, ["title"], batch_size=_BATCH)

    documents = document_model.objects.filter(title__contains="&").only("pk", "title")
    changed = [d for d in documents.iterator(chunk_size=_BATCH) if _decoded(d.title) != d.title]
    for document in changed:
        document.title = _decoded(document.title)
    document_model.objects.bulk_update(changed, ["title"], batch_size=_BATCH)

    # Parents before children, so a child's path is built on its parent's new one.
    pages = page_model.objects.filter(title__contains="&").order_by("path")
    for page in pages:
        title = _decoded(page.title)
        if title == page.title:
            continue
        old_base = (slugify(page.title, allow_unicode=True) or "page")[:200]
        slug = page.slug
        if slug.startswith(old_base):
            new_base = (slugify(title, allow_unicode=True) or "page")[:200]
            slug = _free(page_model, page, new_base + slug[len(old_base) :])
        old_path = page.path
        parent_path = old_path.rsplit("/", 1)[0] if "/" in old_path else None
        page.title, page.slug = title, slug
        page.path = f"{parent_path}/{slug}" if parent_path is not None else slug
        page.save(update_fields=["title", "slug", "path"])
        if page.path != old_path:
            below = page_model.objects.filter(path__startswith=old_path + "/").only("pk", "path")
            moved = list(below)
            for child in moved:
                child.path = page.path + child.path[len(old_path) :]
            page_model.objects.bulk_update(moved, ["path"], batch_size=_BATCH)


def _free(page_model: Any, page: Any, slug: str) -> str:
    siblings = set(
        page_model.objects.filter(parent_id=page.parent_id)
        .exclude(pk=page.pk)
        .values_list("slug", flat=True)
    )
    free, n = slug, 2
    while free in siblings:
        free = f"{slug}-{n}"
        n += 1
    return free


class Migration(migrations.Migration):
    dependencies = [("wiki", "0019_pagechunk_embedding_inline")]

    operations = [migrations.RunPython(decode_title_entities, migrations.RunPython.noop)]
