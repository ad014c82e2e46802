"""`{% page_workflow page user as applied %}`: the review workflow a page's proposals go through
(as `user` may see it: reviews.workflows.workflow_seen_by);
`{% changes_requested_of version as request %}`: the reviewer's request its author answers."""

from __future__ import annotations

from typing import Any

from django import template

from reviews.models import ReviewComment
from reviews.selectors import changes_request
from reviews.workflows import AppliedWorkflow, workflow_seen_by
from wiki.models import Page, Version

register = template.Library()


@register.simple_tag
def page_workflow(page: Page, user: Any) -> AppliedWorkflow:
    return workflow_seen_by(user, page)


@register.simple_tag
def changes_requested_of(version: Version | None) -> ReviewComment | None:
    """The request for changes `version` waits on its author for, if any: its author sees it
    where they revise (the page, the edit form), not only on the review page and by email."""
    return changes_request(version) if version is not None else None
