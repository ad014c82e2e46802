"""The proposal's conversation and who is looking at it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from core.actors import Actor
from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidArgument
from core.transactions import atomic_retried
from reviews.actions.publish import lock_version
from reviews.actions.rules import may_comment, validate_comment
from reviews.merge import appended_body
from reviews.models import ReviewComment, ReviewVisit
from reviews.selectors import review_of
from wiki.models import Page, Version, VersionKind, VersionStatus


@atomic_retried
def review_comment_add(
    *, actor: Actor, version: Version, comment: Any, line: int | None = None
) -> ReviewComment:
    """A note in the proposal's conversation; with `line`, on that line of the proposed text
    (the note keeps the line's words, so it finds the line again in a later revision)."""
    if not may_comment(actor, version):
        raise Forbidden("only reviewers and the proposal's author can comment on it.")
    assert isinstance(actor, User)
    body = validate_comment(comment)
    if not body:
        raise InvalidArgument("write the comment first: it is empty.", field="comment")
    page, version = lock_version(version)
    review = review_of(version)
    if review is None or version.status != VersionStatus.IN_REVIEW:
        raise Conflict(
            f"v{version.number} is not in review any more; comments go on waiting proposals."
        )
    line_text = ""
    if line is not None:
        lines = _proposed_lines(page, version)
        if isinstance(line, bool) or not isinstance(line, int) or line < 1:
            raise InvalidArgument("line must be a line number, from 1.", field="line")
        if line > len(lines):
            # The text is the proposal's as it stands now (a revision may have shortened it).
            raise Conflict(
                f"v{version.number} has {len(lines)} lines; comment on one of them, or "
                "leave the line out to comment on the whole proposal.",
            )
        line_text = lines[line - 1]
    note = ReviewComment.objects.create(
        review=review, version=version, author=actor, body=body, line=line, line_text=line_text
    )
    audit_record(
        action="version.comment",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=body,
        data={"line": line},
    )
    return note


def _proposed_lines(page: Page, version: Version) -> list[str]:
    if version.kind == VersionKind.APPEND:
        live = page.live_version
        return appended_body(live.body if live else "", version.proposed_body).splitlines()
    return version.body.splitlines()


def review_visit(*, actor: User, version: Version) -> Version | None:
    """Note that `actor` is looking at `version` now (others see them reviewing it for a few
    minutes). Returns the revision they last looked at before, if another one."""
    review = review_of(version)
    if review is None or not actor.is_authenticated:
        return None
    now = timezone.now()
    earlier = (
        ReviewVisit.objects.filter(review=review, user=actor).select_related("version").first()
    )
    if earlier is None:
        try:
            with transaction.atomic():
                ReviewVisit.objects.create(review=review, user=actor, version=version, seen_at=now)
        except IntegrityError:  # the same person in two tabs at once
            pass
        return None
    ReviewVisit.objects.filter(pk=earlier.pk).update(version=version, seen_at=now)
    return earlier.version if earlier.version_id != version.pk else None
