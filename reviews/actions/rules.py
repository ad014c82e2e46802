"""What every action asks before it changes anything: the comment's rules and the
policy's answers (wiki.permissions, reviews.deciders) for proposing, publishing and deciding."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone

from core.actors import Actor, is_agent
from core.errors import Conflict, Forbidden, InvalidArgument
from core.unset import UNSET, Unset
from reviews.deciders import counted_approvers, deciders_of, refusal_reason, transient_review
from reviews.models import Review
from reviews.selectors import review_of
from wiki import permissions
from wiki.credentials import refuse_credentials
from wiki.models import Page, Version, VersionStatus
from wiki.validators import check_text, check_visible_text

COMMENT_MAX = 5000


REASON_REQUIRED = (
    "give a reason to reject: a reason is required; tell the author what to change so the "
    "next proposal can be approved."
)


COMMENT_TOO_LONG = f"the comment can be at most {COMMENT_MAX:,} characters."


CHANGES_REASON_REQUIRED = (
    "say what to change: a comment is required to send a proposal back to its author."
)


PUBLISHED_DIRECTLY = "Published directly."


def validate_comment(comment: Any, *, required: bool = False) -> str:
    """A reviewer's note; required (as the reason) to reject."""
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise InvalidArgument("the comment must be text.", field="comment")
    comment = check_text(comment, field="comment").strip()
    if len(comment) > COMMENT_MAX:
        raise InvalidArgument(
            f"the comment can be at most {COMMENT_MAX:,} characters; it has {len(comment):,}.",
            field="comment",
        )
    if required and not comment:
        raise InvalidArgument(REASON_REQUIRED, field="comment")
    # A comment is emailed to the author (an agent's owner) and kept in the history.
    refuse_credentials(comment, field="comment")
    # Emailed and shown to the author: no escape that recolours or reorders what they read.
    return check_visible_text(comment, field="comment", what="a comment")


def check_can_propose(actor: Actor) -> None:
    """`actor` may propose at all (a revoked agent, one that only reads, or nobody signed in
    may not): the policy's answer before any page is known."""
    refusal = permissions.kind_refusal(actor, permissions.PROPOSE)
    if refusal is not None:
        raise Forbidden(refusal)


def check_can_propose_here(actor: Actor, page: Page | None) -> None:
    """`actor` may propose on `page` (None: a new top-level page): wiki.permissions, for a
    person by their grants, for an agent by its owner's and its own flags."""
    refusal = permissions.refusal(actor, permissions.PROPOSE, page)
    if refusal is not None:
        raise Forbidden(refusal)


def check_can_publish(actor: Actor, page: Page | None, *, move_under: Any = UNSET) -> User:
    """`actor` may change `page` (None: add at the top level) without review, and move it
    under `move_under` (a page, or None for the top level) when given: wiki.permissions'
    rule, a review workflow included."""
    refusal = permissions.refusal(actor, permissions.PUBLISH, page)
    moving = (
        page is not None
        and not isinstance(move_under, Unset)
        and (move_under.pk if move_under is not None else None) != page.parent_id
    )
    if refusal is None and moving:
        refusal = permissions.move_refusal(actor, page, move_under)  # type: ignore[arg-type]
    if refusal is not None:
        raise Forbidden(refusal[0].upper() + refusal[1:])
    return actor  # type: ignore[return-value]


def decision_refusal(
    actor: Actor, version: Version, *, deciders: set[int] | None = None
) -> str | None:
    """Why `actor` may not approve, reject or send back `version` now, or None when they may.

    The one statement of who decides, for every door and screen: `actor` is among
    `reviews.deciders` of the step the proposal waits on (`deciders`: that set when the
    caller worked it out for many rows at once).
    """
    if is_agent(actor) or not isinstance(actor, User) or not actor.is_active:
        return "only people can approve or reject proposals."
    review = review_of(version) or transient_review(version)
    if deciders is None:
        deciders = deciders_of([review])[version.pk]
    if actor.pk in deciders:
        return None
    return refusal_reason(actor, review, version)


def check_decider_first(actor: Actor, version: Version, step: int | None) -> None:
    """Refuse someone who may not decide before reading what they sent (as the doors
    loaded the proposal); a decision for a step the review has left is answered once the
    rows are locked (409, it moved on), not as a lack of right."""
    if version.status != VersionStatus.IN_REVIEW:
        return  # decided already: the version's own move check says by whom
    review = review_of(version)
    # Without a step (a caller holding an older copy), the locked rows alone decide.
    if step is not None and (review is None or review.step + 1 == step):
        check_can_decide(actor, version)


def check_can_decide(actor: Actor, version: Version) -> User:
    refusal = decision_refusal(actor, version)
    if refusal is not None:
        review = review_of(version)
        if review is not None and actor.pk in counted_approvers([review])[review.pk]:
            raise approved_twice(review)  # a conflict with the state, not a lack of right
        raise Forbidden(refusal)
    assert isinstance(actor, User)
    return actor


def approved_twice(review: Review) -> Conflict:
    step = review.current_step
    return Conflict(
        f"you already approved this text in this review, and one person counts once across "
        f"its steps; step {review.step + 1} ({step['name']}) needs approvals from other "
        f"members of {step['group']}.",
        detail={"step": review.step + 1},
    )


def may_comment(actor: Actor, version: Version) -> bool:
    """Those holding `decide` on its page (wiki.permissions: Reviewers unless a grant names
    others), the people deciding its steps and the proposal's author (a person, or the
    owner of the agent) talk on it."""
    if is_agent(actor) or not actor.is_authenticated or not actor.is_active:
        return False
    if version.author_user_id == actor.pk or permissions.can(
        actor, permissions.DECIDE, version.page
    ):
        return True
    agent = version.author_agent
    if agent is not None and agent.owner_id == actor.pk:
        return True
    # A member of a step's group who decides it, or approved it at an earlier step.
    review = review_of(version)
    return review is not None and (
        decision_refusal(actor, version) is None
        or actor.pk in counted_approvers([review])[review.pk]
    )


def approval_undo_seconds() -> int:
    """How long a reviewer may take back an approval that published a proposal (setting
    QUIRE_APPROVAL_UNDO_SECONDS); after that, or once anything newer went live, the page is
    reverted instead. The author's decision email waits as long (reviews.outbox)."""
    return int(settings.QUIRE_APPROVAL_UNDO_SECONDS)


def approval_undo_refusal(actor: Actor, version: Version) -> str | None:
    """Why `actor` cannot take back the approval that published `version` now (None: they
    can). The one rule the web door and the service share."""
    if is_agent(actor) or version.status != VersionStatus.APPROVED:
        return "only an approved proposal's approval can be taken back."
    if version.decided_by_id != actor.pk or review_of(version) is None:
        return "only the reviewer who approved a proposal can take the approval back."
    if version.edited_by_reviewer:
        return "an approval with the reviewer's edits cannot be taken back; revert instead."
    decided_at = version.decided_at or timezone.now()
    window = approval_undo_seconds()
    if (timezone.now() - decided_at).total_seconds() > window:
        return (
            f"it is more than {window} seconds since the approval, so it can no "
            "longer be taken back; revert the page from its history instead."
        )
    published_id = version.merged_into_id or version.pk
    if version.page.live_version_id != published_id:
        return (
            "a newer version went live since the approval, so it can no longer be taken back; "
            "revert the page from its history instead."
        )
    return None
