"""A proposal's review through its workflow: started, continued by a revision, ended, and
checked against `Review.TRANSITIONS` before a decision."""

from __future__ import annotations

from collections.abc import Sequence

from core.actors import Actor, is_agent
from reviews.models import Review, ReviewRevision
from reviews.selectors import review_of
from reviews.workflows import review_workflows
from wiki.models import Version


def connector_of(actor: Actor) -> int | None:
    """The person whose OAuth connection the agent acts through (set by the MCP door), if
    any: like the agent's owner, they may not decide what it proposes."""
    return getattr(actor, "oauth_allowed_by_id", None) if is_agent(actor) else None


def reviews_start(versions: Sequence[Version], *, connected_by: int | None = None) -> None:
    """Start the review of each new proposal at step 1 of the workflow that applies to its
    page, the steps copied so that later changes to the workflow leave it alone."""
    applied = review_workflows(versions)
    reviews = []
    for version in versions:
        workflow = applied[version.page_id]
        reviews.append(
            Review(
                page_id=version.page_id,
                version=version,
                workflow=workflow.workflow,
                workflow_name=workflow.name,
                workflow_page=workflow.source,
                steps=workflow.steps,
                connected_by_id=connected_by,
            )
        )
    Review.objects.bulk_create(reviews)
    ReviewRevision.objects.bulk_create(
        ReviewRevision(review=review, version=review.version, number=1) for review in reviews
    )
    for review in reviews:
        review.version.review = review


def review_continue(
    earlier: Version, version: Version, *, connected_by: int | None
) -> Review | None:
    """The author revised `earlier`: its review goes on with `version`, from step 1."""
    review = Review.objects.select_for_update().filter(version=earlier).first()
    if review is None:
        return None
    review.move_to("revise")
    review.version = version
    review.step = 0
    review.connected_by_id = connected_by
    review.revision += 1
    review.save()
    ReviewRevision.objects.create(review=review, version=version, number=review.revision)
    version.review = review
    return review


def reviews_end(version: Version | None) -> None:
    """The author withdrew `version` (or published over it): its review ends with it."""
    if version is None:
        return
    review = Review.objects.select_for_update().filter(version=version).first()
    if review is not None:
        review.move_to("withdraw")
        review.save(update_fields=["status", "updated_at"])


def checked_review(version: Version, transition: str, *, step: int | None = None) -> Review:
    """The review of a locked version, checked for `transition` (given for `step`, from 1)
    against the table in `Review.TRANSITIONS`."""
    review = review_of(version)
    if review is None:
        # A proposal made before workflows existed: it goes through the workflow of its page.
        reviews_start([version])
        review = version.review
    review.check_move(transition, step=step)
    return review
