"""The review page's helpers beside what it shows of the proposal (reviews.proposal_context):
the "Edit, then approve" form as it opens, what a reviewer saw last, the words after an
approval, the crumbs. Reads only."""

from __future__ import annotations

from typing import Any

from django.urls import reverse

from reviews import selectors
from reviews.merge import appended_body
from wiki.models import Page, Version, VersionKind, VersionStatus


def edit_initial(version: Version, context: dict[str, Any]) -> dict[str, Any]:
    """The "Edit, then approve" form as it opens: the proposal, or the merge with markers."""
    live = context["live"]
    proposed = context["proposed"]
    initial = {
        "title": proposed["title"],
        "tags": ", ".join(proposed["tags"]),
        "body": version.proposed_body if version.kind == VersionKind.APPEND else proposed["body"],
        "expected_live_number": live.number if live else 0,
    }
    merge = context.get("merge")
    if merge is not None:
        fields = merge["fields"]
        initial["body"] = merge["text_with_markers"]
        initial["title"] = fields["title"]
        initial["tags"] = ", ".join(fields["tags"])
    return initial


def as_seen(version: Version) -> str:
    """The text a reviewer read on an earlier revision (an addition: on today's live page)."""
    if version.kind == VersionKind.APPEND and version.status != VersionStatus.APPROVED:
        live = version.page.live_version
        return appended_body(live.body if live else "", version.proposed_body)
    return version.body


def approved_verb(version: Version) -> str:
    """ "approved", or where an approval that does not publish yet left the proposal."""
    if version.status == VersionStatus.APPROVED:
        return "approved"
    review = selectors.review_of(version)
    if review is None:
        return "approved"
    step = review.current_step
    return (
        f"approved; it waits on step {review.step + 1} of {len(review.steps)} "
        f"({step['name']}, {step['group']})"
    )


def page_crumbs(page: Page, *first: tuple[str, str]) -> list[tuple[str, str]]:
    """The same trail as the page view's: the page (when it can be opened) and its history."""
    crumbs = [("Pages", reverse("wiki:home")), *first]
    if page.live_version_id is not None and not page.archived:
        crumbs.append((page.title, reverse("wiki:page", kwargs={"public_id": page.public_id})))
    else:
        crumbs.append((page.title, ""))
    crumbs.append(("History", reverse("reviews:history", kwargs={"page_id": page.public_id})))
    return crumbs
