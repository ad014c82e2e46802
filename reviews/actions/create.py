"""New pages with their first version: in review, or live at once for an editor."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.actors import Actor, is_agent
from core.audit import audit_event, audit_record_many
from core.transactions import atomic_retried
from reviews import outbox
from reviews.actions.flow import connector_of, reviews_start
from reviews.actions.publish import author_fields, mark_approved
from reviews.actions.rules import (
    PUBLISHED_DIRECTLY,
    check_can_propose,
    check_can_propose_here,
    check_can_publish,
)
from reviews.classify import classify_into
from wiki.models import Page, Version, VersionKind
from wiki.services import PageRow, new_pages_make_live, page_rows_create
from wiki.validators import (
    validate_change_summary,
    validate_markdown,
    validate_tags,
    validate_title,
)


@dataclass(frozen=True)
class NewPage:
    """One page for `pages_create` to make: the arguments of `page_create` but the actor."""

    title: str
    body: str
    parent: Page | None = None
    tags: Sequence[str] | None = None
    instructions: str = ""
    change_summary: str = ""
    source_path: str | None = None
    extra_frontmatter: dict[str, Any] | None = None
    public_id: str | None = None


def _checked(new: NewPage) -> NewPage:
    return replace(
        new,
        title=validate_title(new.title),
        body=validate_markdown(new.body),
        tags=validate_tags(list(new.tags) if new.tags is not None else []),
        instructions=validate_markdown(new.instructions, field="instructions"),
        change_summary=validate_change_summary(new.change_summary) or "Created the page.",
    )


def page_create(
    *,
    actor: Actor,
    title: str,
    body: str,
    parent: Page | None = None,
    tags: Iterable[str] | None = None,
    instructions: str = "",
    change_summary: str = "",
    publish: bool = False,
    source_path: str | None = None,
    extra_frontmatter: dict[str, Any] | None = None,
    public_id: str | None = None,
) -> Version:
    """A new page with version 1: live at once when an editor publishes, otherwise in review."""
    new = NewPage(
        title=title,
        body=body,
        parent=parent,
        tags=list(tags) if tags is not None else None,
        instructions=instructions,
        change_summary=change_summary,
        source_path=source_path,
        extra_frontmatter=extra_frontmatter,
        public_id=public_id,
    )
    return pages_create(actor=actor, pages=[new], publish=publish)[0]


def _first_versions(actor: Actor, checked: list[NewPage]) -> list[Version]:
    """The pages' rows, inserted together, and version 1 of each (not saved yet)."""
    rows = page_rows_create(
        [
            PageRow(
                title=new.title,
                parent=new.parent,
                tags=list(new.tags or []),
                instructions=new.instructions,
                source_path=new.source_path,
                extra_frontmatter=new.extra_frontmatter,
                public_id=new.public_id,
                slug_with_id=is_agent(actor),
            )
            for new in checked
        ]
    )
    return [
        Version(
            page=page,
            number=page.last_version_number,
            kind=VersionKind.REPLACE,
            title=new.title,
            body=new.body,
            proposed_body=new.body,
            tags=list(new.tags or []),
            parent=page.parent,
            instructions=new.instructions,
            change_summary=new.change_summary,
            **author_fields(actor),
        )
        for page, new in zip(rows, checked, strict=True)
    ]


@atomic_retried
def pages_create(*, actor: Actor, pages: Sequence[NewPage], publish: bool = False) -> list[Version]:
    """New pages with version 1 each, made as `page_create` makes one, all or none.

    A bulk import makes a folder's pages this way: however many pages, it costs the same
    few queries (the rows are inserted together), not a transaction per page.
    """
    if not pages:
        return []
    checked = [_checked(new) for new in pages]
    check_can_propose(actor)
    parents = {new.parent.pk if new.parent else None: new.parent for new in checked}
    for parent in parents.values():
        if publish:
            check_can_publish(actor, parent)
        else:
            check_can_propose_here(actor, parent)
    versions = _first_versions(actor, checked)
    for version in versions:
        classify_into(version, None)
        if publish:
            mark_approved(version, approver=actor, comment=PUBLISHED_DIRECTLY)
    Version.objects.bulk_create(versions)
    if publish:
        new_pages_make_live(versions)
    audit_record_many(
        [
            audit_event(
                action="page.create",
                actor=actor,
                page=version.page,
                version_number=version.number,
                outcome=version.status,
                data={"title": version.title},
            )
            for version in versions
        ]
    )
    if not publish:
        reviews_start(versions, connected_by=connector_of(actor))
        outbox.queue_reviews_requested(versions)
    return versions
