"""Deciding many proposals in one action: all of them or none, and taken back whole.

Each item goes through the single decision's own service (`version_approve`,
`version_reject`), so every rule of one decision holds for each; a batch adds what only a
batch needs: the person was shown the item's whole change against what is live now, the item
is not stale, and its workflow lets its kind of change be approved in a batch. One refusal
refuses the whole action; the answer lists every item refused and why. Emails, inbox items,
chat posts and audit rows are written in the one transaction, so they follow it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from core.actors import Actor, is_agent
from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound, QuireError
from core.transactions import atomic_retried
from reviews import outbox
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.rules import approval_undo_seconds, validate_comment
from reviews.actions.undo import version_approve_undo
from reviews.classify import kept_out_of_batches, labels
from reviews.deciders import approvals_changed
from reviews.merge import is_stale
from reviews.models import Approval, BatchDecision, DecisionBatch, DecisionBatchItem
from reviews.selectors import review_of
from reviews.shown import shown_token_is_current, was_shown
from wiki.models import Version, VersionStatus
from wiki.services import lock_pages

BATCH_MAX = 100

NOT_SHOWN = (
    "you were not shown this change as it stands against what is live now; open it (or the "
    "queue, where its whole change fits in its row) and decide it after reading it. Over "
    "REST, read the version first (GET /api/v1/pages/{pageId}/versions/{number}/) and pass "
    "the `shown` it answers in the item."
)
SHOWN_CHANGED = (
    "the proposal changed since you read it (a revision, a reviewer's edit or a newer live "
    "version): read it again and pass the new `shown`."
)
STALE = (
    "the page changed since this was written (it is stale), so approving it would merge "
    "changes you were not shown; open it and decide it on its own."
)


@dataclass(frozen=True)
class BatchItem:
    """One proposal to decide and the step it is decided for (from 1; None: the step it is
    at when the action reads it)."""

    version: Version
    step: int | None = None
    # The digest a read of the version answered (REST's `shown`, reviews.shown.shown_token):
    # given, it alone says whether the caller was shown the change as it stands.
    shown: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why one item of a batch was refused."""

    version: Version
    code: str
    reason: str

    def as_dict(self) -> dict[str, object]:
        return {
            "pageId": self.version.page.public_id,
            "versionNumber": self.version.number,
            "code": self.code,
            "reason": self.reason,
        }


class BatchRefused(Conflict):
    """At least one item was refused, so nothing was decided."""

    def __init__(self, refused: list[Refusal], *, undo: bool = False) -> None:
        what = "taken back" if undo else "decided"
        count = len(refused)
        super().__init__(
            f"{count} of the proposals could not be {what}, so nothing was {what}: "
            + "; ".join(
                f"{r.version.page.title} v{r.version.number}: {r.reason}" for r in refused[:5]
            )
            + ("; …" if count > 5 else "")
            + ". Leave those out, or decide them on their own, and try again.",
            detail={"refused": [r.as_dict() for r in refused]},
        )
        self.refused = refused


def _check_items(items: Sequence[BatchItem]) -> None:
    if not items:
        raise InvalidArgument("choose at least one proposal to decide.", field="items")
    if len(items) > BATCH_MAX:
        raise InvalidArgument(
            f"a batch decides at most {BATCH_MAX} proposals; you chose {len(items)}. Decide "
            "them in several batches.",
            field="items",
        )
    ids = [item.version.pk for item in items]
    if len(set(ids)) != len(ids):
        raise InvalidArgument("a proposal is listed twice; list each once.", field="items")


def _batch_refusal(actor: User, version: Version, decision: str, shown: str | None) -> str | None:
    """What a batch asks beyond a single decision, of `version` as locked; None: nothing.
    A proposal no longer in review is the single decision's to refuse, saying why. Shown:
    the digest the item carries (`shown`), else what was recorded (a queue row, the page)."""
    if version.status != VersionStatus.IN_REVIEW:
        return None
    live = version.page.live_version
    if decision == BatchDecision.APPROVE and live is not None and is_stale(version):
        return STALE
    if shown is not None:
        if not shown_token_is_current(actor, version, shown):
            return SHOWN_CHANGED
    elif not was_shown(actor, version, live):
        return NOT_SHOWN
    if decision == BatchDecision.APPROVE:
        return _kept_out(version)
    return None


def _kept_out(version: Version) -> str | None:
    """Why the workflow of `version`'s review keeps its kind of change out of batches."""
    review = review_of(version)
    workflow = review.workflow if review is not None else None
    if workflow is None:
        return None
    kept_out = kept_out_of_batches(version, workflow.never_in_batch)
    if not kept_out:
        return None
    return (
        f"the workflow {workflow.name!r} never approves {' or '.join(labels(kept_out))} "
        "in a batch; open it and decide it on its own."
    )


def _decide_one(actor: User, item: BatchItem, decision: str, comment: str) -> tuple[Version, bool]:
    """The single decision's service; returns the version and whether it went live."""
    if decision == BatchDecision.APPROVE:
        decided = version_approve(
            actor=actor, version=item.version, step=item.step, comment=comment
        )
        return decided, decided.status == VersionStatus.APPROVED
    decided = version_reject(actor=actor, version=item.version, step=item.step, comment=comment)
    return decided, False


def _locked(version: Version) -> Version:
    return Version.objects.select_related("page__live_version", "base_version").get(pk=version.pk)


@atomic_retried
def versions_decide_batch(
    *, actor: Actor, items: Sequence[BatchItem], decision: str, comment: str = ""
) -> DecisionBatch:
    """Approve or reject every item with one comment, or nothing: each item is checked and
    decided as a single decision is, inside this one transaction, and one refusal refuses
    the whole action (BatchRefused lists them all)."""
    if is_agent(actor) or not isinstance(actor, User):
        raise Forbidden("only people can approve or reject proposals.")
    if decision not in BatchDecision.values:
        raise InvalidArgument("decide approve or reject.", field="decision")
    _check_items(items)
    comment = validate_comment(comment, required=decision == BatchDecision.REJECT)
    # Every page of the batch at once, in the tree's lock order: two batches never wait on
    # each other's pages.
    lock_pages([item.version.page for item in items])
    batch = DecisionBatch.objects.create(actor=actor, decision=decision, comment=comment)
    refused: list[Refusal] = []
    rows: list[DecisionBatchItem] = []
    for item in items:
        version = _locked(item.version)
        review = review_of(version)
        step = item.step or (review.step + 1 if review is not None else 1)
        reason = _batch_refusal(actor, version, decision, item.shown)
        try:
            with transaction.atomic():  # a refused item leaves nothing, even mid-way
                decided, published = _decide_one(actor, BatchItem(version, step), decision, comment)
        except QuireError as error:
            # Who may decide comes first; then what only a batch asks (a stale proposal's
            # overlap is better said as "not shown"); then the single decision's other rules.
            if reason is None or isinstance(error, Forbidden):
                refused.append(Refusal(version, error.code, error.message))
                continue
        if reason is not None:
            refused.append(Refusal(version, "conflict", reason))
            continue
        rows.append(DecisionBatchItem(batch=batch, version=decided, step=step, published=published))
    if refused:
        raise BatchRefused(refused)
    DecisionBatchItem.objects.bulk_create(rows)
    audit_record(
        action="versions.decide_batch",
        actor=actor,
        comment=comment,
        data={
            "batch": batch.pk,
            "decision": decision,
            "versions": [[row.version.page.public_id, row.version.number] for row in rows],
        },
    )
    return batch


# --- taking a batch back ----------------------------------------------------------------------


def batch_undo_refusal(actor: Actor, batch: DecisionBatch) -> str | None:
    """Why `actor` cannot take `batch` back as a whole now (None: they can)."""
    if batch.actor_id != actor.pk or is_agent(actor):
        return "only the reviewer who decided a batch can take it back."
    if batch.undone_at is not None:
        return "this batch was taken back already."
    if batch.decision != BatchDecision.APPROVE:
        return "a rejection is final, in a batch as on its own; the authors were told at once."
    window = approval_undo_seconds()
    if (timezone.now() - batch.created_at).total_seconds() > window:
        return (
            f"it is more than {window} seconds since the batch, so it can no longer be taken "
            "back; revert each page from its history instead."
        )
    return None


def _take_back_step(actor: User, version: Version, step: int) -> None:
    """Take back an approval that did not publish: the proposal waits at `step` again
    without it, unless the review moved on past what this approval did."""
    review = review_of(version)
    approval = (
        Approval.objects.filter(
            review=review, version=version, step=step - 1, user=actor, reset=False
        ).first()
        if review is not None and version.status == VersionStatus.IN_REVIEW
        else None
    )
    if review is None or approval is None or review.step not in (step - 1, step):
        raise Conflict("it was decided further since the batch; decide it again on its own.")
    if (
        review.step == step
        and Approval.objects.filter(review=review, version=version, step=step, reset=False).exists()
    ):
        raise Conflict("the next step approved it since the batch; decide it again on its own.")
    approval.delete()
    approvals_changed(review)
    review.move_to("take_back")
    review.step = step - 1
    review.save(update_fields=["step", "status", "updated_at"])
    # The next step's deciders were told it waits on them: it no longer does.
    outbox.withdraw_review_requests(version, since=approval.created_at)
    audit_record(
        action="version.approval_undo",
        actor=actor,
        page=version.page,
        version_number=version.number,
        data={"step": step},
    )


@atomic_retried
def versions_decide_batch_undo(*, actor: Actor, batch: DecisionBatch) -> DecisionBatch:
    """Take back a whole approval batch within the undo window, or nothing: each proposal it
    published goes back as a single undo does (`version_approve_undo`), each approval that
    moved a proposal to its next step is removed, and every one waits again where it was."""
    batch = DecisionBatch.objects.select_for_update().get(pk=batch.pk)
    refusal = batch_undo_refusal(actor, batch)
    if refusal is not None:
        raise Conflict(refusal)
    assert isinstance(actor, User)
    items = list(batch.items.select_related("version__page"))
    lock_pages([item.version.page for item in items])
    refused: list[Refusal] = []
    for item in reversed(items):
        version = _locked(item.version)
        try:
            with transaction.atomic():
                if item.published:
                    version_approve_undo(actor=actor, version=version)
                else:
                    _take_back_step(actor, version, item.step)
        except QuireError as error:
            refused.append(Refusal(version, error.code, error.message))
    if refused:
        raise BatchRefused(refused, undo=True)
    batch.undone_at = timezone.now()
    batch.save(update_fields=["undone_at"])
    audit_record(
        action="versions.decide_batch_undo",
        actor=actor,
        data={"batch": batch.pk, "versions": len(items)},
    )
    return batch


def undoable_batch(actor: User) -> DecisionBatch | None:
    """`actor`'s latest batch when it can still be taken back whole."""
    latest = (
        DecisionBatch.objects.filter(actor=actor).prefetch_related("items").order_by("-id").first()
    )
    if latest is None or batch_undo_refusal(actor, latest) is not None:
        return None
    return latest


def batch_of(actor: User, batch_id: int) -> DecisionBatch:
    """One of `actor`'s batches; another's is not found, as if it did not exist."""
    batch = DecisionBatch.objects.filter(pk=batch_id, actor=actor).first()
    if batch is None:
        raise NotFound("you decided no batch with this number.")
    return batch
