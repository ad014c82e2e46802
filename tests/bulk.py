"""Large sites for scale tests, written in bulk (no services: thousands of pages in seconds)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User

from wiki.models import Page, Version, VersionStatus


def make_live(
    pages: list[Page], *, author: User, body: Callable[[int, Page], str] = lambda n, page: "Notes."
) -> list[Version]:
    """Give each saved page an approved version 1 (`body(n, page)`) and make it live."""
    versions = Version.objects.bulk_create(
        Version(
            page=page,
            number=1,
            status=VersionStatus.APPROVED,
            title=page.title,
            body=body(n, page),
            author_user=author,
        )
        for n, page in enumerate(pages)
    )
    for page, version in zip(pages, versions, strict=True):
        page.live_version = version
        page.last_version_number = 1
    Page.objects.bulk_update(pages, ["live_version", "last_version_number"], batch_size=2_000)
    return versions
