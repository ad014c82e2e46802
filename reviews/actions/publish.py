"""Making a version live: the page row locked, the version approved, and the page's live
version moved to it (or to its copy under the next number)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from core.actors import Actor, is_agent
from reviews.merge import appended_body
from wiki.models import Page, Version, VersionStatus
from wiki.services import allocate_version_number, lock_page_under, page_make_live


def author_fields(actor: Actor) -> dict[str, Any]:
    """A new version's author fields: the agent's or the person's, the other one empty."""
    if is_agent(actor):
        return {"author_agent": actor, "author_user": None}
    return {"author_user": actor, "author_agent": None}


def lock_version(version: Version) -> tuple[Page, Version]:
    """The page row locked (every decision on a page holds it, so two reviewers approving at
    once are two approvals in turn), with its branch in the tree's lock order (a move's new
    parent too), and the version and its review as they are now."""
    moving = version.parent_id != version.page.parent_id
    page, _ = lock_page_under(version.page, version.parent if moving else None)
    locked = Version.objects.select_related("base_version", "page", "decided_by", "review").get(
        pk=version.pk
    )
    return page, locked


def mark_approved(version: Version, *, approver: Actor, comment: str) -> None:
    """Mark `version` approved by `approver` (the caller saves it and makes it live)."""
    version.move_to(
        VersionStatus.APPROVED, by=approver if isinstance(approver, User) else None, comment=comment
    )


def publish_version(page: Page, version: Version, *, approver: Actor, comment: str) -> Version:
    """Approve `version` as it stands and make it, or its copy, the page's live version.

    Version numbers run forwards: a proposal approved after a newer version went live (a
    stale one merged, an append landing on later changes) goes live as a new version with the
    next number, and the proposal keeps its own number, approved and "merged into" that one.
    Returns the version that is live now.
    """
    mark_approved(version, approver=approver, comment=comment)
    live = page.live_version
    if live is None or live.number < version.number:
        version.save()
        page_make_live(page, version)
        return version
    published = Version(
        page=page,
        number=allocate_version_number(page),
        kind=version.kind,
        **version.content(parent=version.parent, proposed_body=version.proposed_body),
        change_summary=version.change_summary,
        author_user=version.author_user,
        author_agent=version.author_agent,
        base_version=live,
        edited_by_reviewer=version.edited_by_reviewer,
        merged=version.merged,
    )
    published.move_to(VersionStatus.APPROVED, by=version.decided_by, comment=comment)
    published.save()
    version.merged_into = published
    version.save()
    page_make_live(page, published)
    return published


def fill_append(page: Page, version: Version) -> None:
    """An append's full content: what is live now with the appended blocks at the end."""
    live = page.live_version
    version.body = appended_body(live.body if live else "", version.proposed_body)
    if live is not None:
        version.title, version.tags = live.title, live.tags
        version.parent, version.instructions = live.parent, live.instructions
