"""A reviewer's decision on a proposal at its step: approve (as written, edited or merged),
reject, or send it back for changes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from core.actors import Actor
from core.audit import audit_record
from core.errors import Conflict, InvalidArgument
from core.transactions import atomic_retried
from reviews import outbox
from reviews.actions.flow import checked_review
from reviews.actions.publish import fill_append, lock_version, publish_version
from reviews.actions.rules import (
    CHANGES_REASON_REQUIRED,
    approved_twice,
    check_can_decide,
    check_decider_first,
    validate_comment,
)
from reviews.deciders import approvals_changed
from reviews.merge import appended_body, is_stale, merge_proposal
from reviews.models import Approval, CommentKind, Review, ReviewComment
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.validators import validate_resolved_markdown, validate_tags, validate_title


def _counted(review: Review, version: Version) -> list[Approval]:
    """The approvals of the text under review that count (a reviewer's edit resets the ones
    given before it), at every step."""
    return list(
        Approval.objects.filter(review=review, version=version, reset=False).select_related("user")
    )


def _open_step(review: Review, approvals: list[Approval]) -> int | None:
    """The first step still short of approvals (a reviewer's edit can send a review back to
    an earlier step), or None when every step has its approvals."""
    for index, step in enumerate(review.steps):
        if sum(1 for a in approvals if a.step == index) < step["approvals"]:
            return index
    return None


def _record_approval(
    review: Review, version: Version, approver: User, comment: str, *, edited: bool
) -> Approval:
    """One approval row; the partial unique constraint (one counted approval per person and
    text) makes a second one by the same person a 409 even if two requests of theirs race."""
    approvals_changed(review)
    try:
        with transaction.atomic():
            return Approval.objects.create(
                review=review,
                version=version,
                step=review.step,
                user=approver,
                comment=comment,
                edited=edited,
            )
    except IntegrityError:
        raise approved_twice(review) from None


def _reset_approvals(review: Review, version: Version) -> list[str]:
    """A reviewer edited the text: the approvals given to the text before no longer count
    (kept in the history, marked reset). Returns who gave them."""
    earlier = list(
        Approval.objects.filter(review=review, version=version, reset=False).select_related("user")
    )
    Approval.objects.filter(pk__in=[a.pk for a in earlier]).update(reset=True)
    approvals_changed(review)
    return [a.user.get_username() for a in earlier]


def _apply_merge(version: Version, *, keep: set[str], live_number: int | None) -> None:
    """Merge a stale replace three-way, except the fields in `keep` (a reviewer edited them).

    Refused, naming the fields, where both sides changed something the reviewer did not resolve.
    """
    merge = merge_proposal(version)
    unresolved = [c for c in merge["conflicts"] if c["field"] not in keep]
    if unresolved:
        base_number = version.base_version.number if version.base_version else 0
        names = ", ".join(sorted({c["field"] for c in unresolved}))
        raise Conflict(
            f"v{version.number} was written against v{base_number} but v{live_number} is live "
            f"now, and the two changes overlap in {names}. Resolve the conflict in the editor or "
            "reject the proposal.",
            detail={"conflicts": unresolved, "liveVersion": live_number},
        )
    fields = merge["fields"]
    if "markdown" not in keep:
        version.body = fields["body"]
    if "title" not in keep:
        version.title = fields["title"]
    if "tags" not in keep:
        version.tags = fields["tags"]
    version.parent_id, version.instructions = fields["parent_id"], fields["instructions"]
    version.merged = True


def _apply_edit(
    page: Page, version: Version, *, body: str | None, title: str | None, tags: Iterable[str] | None
) -> None:
    """The reviewer's edit, made against the live version that is still live."""
    live = page.live_version
    if version.kind == VersionKind.APPEND:
        # Title, tags and parent come from what is live now, as for an unedited append.
        fill_append(page, version)
        if body is not None:
            version.body = appended_body(
                live.body if live else "", validate_resolved_markdown(body)
            )
    else:
        if is_stale(version):
            edited = {"markdown": body, "title": title, "tags": tags}
            keep = {name for name, value in edited.items() if value is not None}
            _apply_merge(version, keep=keep, live_number=live.number if live else None)
        if body is not None:
            version.body = validate_resolved_markdown(body)
    if title is not None:
        version.title = validate_title(title)
    if tags is not None:
        version.tags = validate_tags(list(tags))
    version.edited_by_reviewer = True


def _text_to_approve(
    page: Page, version: Version, *, edit: dict[str, Any], expected_live_number: int | None
) -> None:
    """The text the approval is for: the reviewer's edit (`edit`'s body, title and tags, made
    against `expected_live_number`, which must still be live), an append on what is live
    now, or a stale replace merged three-way."""
    live_number = page.live_version.number if page.live_version else None
    if expected_live_number is not None and expected_live_number != (live_number or 0):
        raise Conflict(
            f"the live version changed to v{live_number} while you were reviewing; "
            "reload the proposal and decide again.",
            detail={"liveVersion": live_number},
        )
    if any(value is not None for value in edit.values()):
        if is_stale(version) and expected_live_number is None:
            raise Conflict(
                "this proposal is stale; edit it against the current live version and say "
                "which live version you edited against.",
                detail={"liveVersion": live_number},
            )
        _apply_edit(page, version, **edit)
    elif version.kind == VersionKind.APPEND:
        fill_append(page, version)
    elif is_stale(version):
        _apply_merge(version, keep=set(), live_number=live_number)


@atomic_retried
def version_approve(
    *,
    actor: Actor,
    version: Version,
    comment: str = "",
    edited_body: str | None = None,
    edited_title: str | None = None,
    edited_tags: Iterable[str] | None = None,
    expected_live_number: int | None = None,
    step: int | None = None,
    narrowing: bool = False,
) -> Version:
    """Approve a proposal at the step of its workflow it waits on (`step`, from 1: the step
    the reviewer saw; refused with a 409 when the review has moved on since).

    The approval is recorded; when the step has its approvals the proposal moves to the
    next step (whose deciders are emailed then), and the last approval of the last step
    publishes it. One person counts once per review, across steps. Publishing: an append
    lands on top of whatever is live now; a replace whose base is still live goes live as
    written; a stale one is merged three-way when the changes do not overlap and refused with
    the conflicts when they do (at every step). A reviewer may edit the proposal first
    (`edited_*`) against the live version they saw (`expected_live_number`), which must still
    be live, so nothing is overwritten unseen; the edit resets the approvals given to the
    text before it, so the review goes back to the first step they were given at, unless it
    is `narrowing`: it only leaves out changes of the text they approved (reviews.partial).
    """
    check_decider_first(actor, version, step)
    comment = validate_comment(comment)
    page, version = lock_version(version)
    version.check_move(VersionStatus.APPROVED)
    review = checked_review(version, "approve", step=step)
    approver = check_can_decide(actor, version)
    edited = any(value is not None for value in (edited_body, edited_title, edited_tags))
    _text_to_approve(
        page,
        version,
        edit={"body": edited_body, "title": edited_title, "tags": edited_tags},
        expected_live_number=expected_live_number,
    )
    reset = _reset_approvals(review, version) if edited and not narrowing else []
    _record_approval(review, version, approver, comment, edited=edited)
    waiting = _open_step(review, _counted(review, version))
    if waiting is not None:
        _approve_step(
            page,
            version,
            review,
            approver=approver,
            comment=comment,
            to_step=waiting,
            edited=edited,
            reset=reset,
        )
        return version
    published = publish_version(page, version, approver=approver, comment=comment)
    review.move_to("merge" if version.merged else "publish")
    review.save(update_fields=["status", "updated_at"])
    audit_record(
        action="version.approve",
        actor=actor,
        page=page,
        version_number=version.number,
        comment=comment,
        data={
            "edited": version.edited_by_reviewer,
            "merged": version.merged,
            "step": review.step + 1,
            "published_as": published.number,
            "reset": reset,
        },
    )
    outbox.queue_decision(version)
    return version


def _approve_step(
    page: Page,
    version: Version,
    review: Review,
    *,
    approver: User,
    comment: str,
    to_step: int,
    edited: bool,
    reset: list[str],
) -> None:
    """An approval that does not publish yet: the proposal stays in review, at `to_step` (the
    next step once this one has its approvals; an earlier one after a reviewer's edit reset
    approvals). A reviewer's edit is kept as the text under review, written against the live
    version (an append becomes the whole page)."""
    if edited:
        version.kind = VersionKind.REPLACE
        version.proposed_body = version.proposed_body or version.body
        version.base_version = page.live_version
        version.save()
    else:
        # Approving here changes nothing yet; the merge or append is worked out again when
        # the last step publishes, on whatever is live then.
        version.refresh_from_db()
    step_number = review.step + 1
    moved = to_step != review.step
    review.move_to("approve")
    if moved:
        review.step = to_step
        review.save(update_fields=["step", "status", "updated_at"])
    audit_record(
        action="version.approval",
        actor=approver,
        page=page,
        version_number=version.number,
        comment=comment,
        data={
            "step": step_number,
            "advanced": moved,
            "to_step": to_step + 1,
            "edited": edited,
            "reset": reset,
        },
    )
    if moved or reset:
        outbox.queue_review_requested(version)


@atomic_retried
def version_reject(
    *, actor: Actor, version: Version, comment: str, step: int | None = None
) -> Version:
    """Decline a proposal, at any step, with a reason the author reads."""
    _, version = _review_answer(
        actor=actor, version=version, comment=comment, transition="reject", step=step
    )
    outbox.queue_decision(version)
    return version


@atomic_retried
def version_request_changes(
    *, actor: Actor, version: Version, comment: str, step: int | None = None
) -> Version:
    """Send a proposal back to its author with what to change. It stays in review, waiting
    on the author; their revision continues the same review from step 1."""
    reviewer, version = _review_answer(
        actor=actor, version=version, comment=comment, transition="request_changes", step=step
    )
    outbox.queue_changes_requested(version, requested_by=reviewer)
    return version


_ANSWERS = {
    "reject": (CommentKind.REJECTED, "version.reject"),
    "request_changes": (CommentKind.CHANGES_REQUESTED, "version.request_changes"),
}


def _review_answer(
    *, actor: Actor, version: Version, comment: str, transition: str, step: int | None
) -> tuple[User, Version]:
    """A reviewer's "no" or "not yet", with the reason: the checks, the version's move (a
    rejection ends it; a request for changes leaves it in review), the review's transition,
    the reason in its conversation, and the audit row. Returns the reviewer and the version
    as locked."""
    kind, action = _ANSWERS[transition]
    rejecting = transition == "reject"
    check_decider_first(actor, version, step)
    comment = validate_comment(comment, required=rejecting)
    if not comment:
        raise InvalidArgument(CHANGES_REASON_REQUIRED, field="comment")
    page, version = lock_version(version)
    version.check_move(VersionStatus.REJECTED)  # refuses, saying why, unless in review
    review = checked_review(version, transition, step=step)
    reviewer = check_can_decide(actor, version)
    if rejecting:
        version.move_to(VersionStatus.REJECTED, by=reviewer, comment=comment)
        version.save()
    review.move_to(transition, step=step)
    review.save(update_fields=["status", "updated_at"])
    ReviewComment.objects.create(
        review=review, version=version, author=reviewer, kind=kind, body=comment
    )
    audit_record(
        action=action,
        actor=reviewer,
        page=page,
        version_number=version.number,
        comment=comment,
        data={"step": review.step + 1},
    )
    return reviewer, version
