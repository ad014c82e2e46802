"""Export every live page as markdown files with YAML frontmatter, the inverse of the importer.

A page with children is written as `<path>/index.md`, a leaf as `<path>.md`. The frontmatter
holds the title, tags, instructions, the extra keys kept at import, `quire_id` and
`quire_position`, so that importing the folder into an empty wiki gives the same pages, tree,
ids and order back.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from wiki.models import Page

_RESERVED_KEYS = {"title", "tags", "instructions", "quire_id", "quire_position"}
# A leaf page with one of these slugs would take its parent folder's own page file; it is
# written as a folder of its own instead, which imports back as the same page.
_FOLDER_FILE_SLUGS = {"index", "readme"}


def export_path(page: Page, *, has_children: bool) -> PurePosixPath:
    """Where `page` goes, relative to the export folder."""
    if has_children or page.slug.lower() in _FOLDER_FILE_SLUGS:
        return PurePosixPath(page.path) / "index.md"
    return PurePosixPath(f"{page.path}.md")


def page_markdown(page: Page) -> str:
    """The file for `page`: YAML frontmatter, then the live body exactly as stored."""
    version = page.live_version
    assert version is not None
    meta: dict[str, Any] = {"title": version.title, "tags": list(version.tags)}
    if version.instructions:
        meta["instructions"] = version.instructions
    meta.update(
        (key, value) for key, value in page.extra_frontmatter.items() if key not in _RESERVED_KEYS
    )
    meta["quire_id"] = page.public_id
    # Its place among its siblings (the tree lists them by position, then slug).
    meta["quire_position"] = page.position
    frontmatter = yaml.safe_dump(
        meta, sort_keys=False, allow_unicode=True, default_flow_style=False, width=1000
    )
    return f"---\n{frontmatter}---\n{version.body}"


def export_markdown(root: Path) -> int:
    """Write every live, non-archived page under `root`; returns how many were written."""
    pages = list(Page.objects.readable().select_related("live_version").order_by("path"))
    exported = {page.pk for page in pages}
    parents = {page.parent_id for page in pages if page.parent_id in exported}
    for page in pages:
        target = root / export_path(page, has_children=page.pk in parents)
        target.parent.mkdir(parents=True, exist_ok=True)
        # Bytes, so that no newline translation touches the body.
        target.write_bytes(page_markdown(page).encode("utf-8"))
    return len(pages)
