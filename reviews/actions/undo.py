"""An approval taken back within its window: the page shows what it showed before and the
proposal waits again."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from core.actors import Actor
from core.audit import audit_record
from core.errors import Conflict
from core.transactions import atomic_retried
from reviews import outbox
from reviews.actions.publish import lock_version
from reviews.actions.rules import approval_undo_refusal
from reviews.deciders import approvals_changed
from reviews.models import Approval
from reviews.selectors import review_of
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.services import page_make_live


@atomic_retried
def version_approve_undo(*, actor: Actor, version: Version) -> Version:
    """Take back one's approval that published a proposal, while it is still short and
    nothing newer went live: the page shows again what it showed before, the version it
    published (a copy under a new number) is gone, and the proposal waits again at its last
    step, without this reviewer's approval."""
    page, version = lock_version(version)
    refusal = approval_undo_refusal(actor, version)
    if refusal is not None:
        raise Conflict(refusal, detail={"status": version.status})
    published = version.merged_into or version
    previous = (
        Version.objects.filter(
            page=page,
            status=VersionStatus.APPROVED,
            number__lt=published.number,
            merged_into__isnull=True,
        )
        .exclude(pk=version.pk)
        .order_by("-number")
        .first()
    )
    newest_number = published.pk != version.pk and page.last_version_number == published.number
    if previous is None or (published.pk != version.pk and not newest_number):
        raise Conflict(
            "this approval can no longer be taken back (the page had no live version before, "
            "or newer versions were numbered since); revert the page from its history instead."
        )
    page_make_live(page, previous)
    version.reopen()
    version.body = "" if version.kind == VersionKind.APPEND else version.proposed_body
    try:
        with transaction.atomic():
            version.save()
    except IntegrityError:
        raise Conflict(
            "the author proposed again since the approval, so it cannot be taken back; revert "
            "the page from its history instead."
        ) from None
    if published.pk != version.pk:
        published.remove()
        page.last_version_number -= 1
        Page.objects.filter(pk=page.pk).update(last_version_number=page.last_version_number)
    review = review_of(version)
    assert review is not None
    Approval.objects.filter(
        review=review, version=version, step=review.step, user_id=actor.pk
    ).delete()
    approvals_changed(review)
    review.move_to("undo")
    review.save(update_fields=["status", "updated_at"])
    # The author was not told yet (the email waits out the window): now they never are.
    outbox.drop_decision(version)
    audit_record(
        action="version.approve_undo",
        actor=actor,
        page=page,
        version_number=version.number,
        data={
            "live": previous.number,
            "removed": published.number if published != version else None,
        },
    )
    version.page = page  # as the undo left it: `previous` is live again
    return version
