"""Approving part of a proposal: the reviewer keeps some changed blocks (hunks) and refuses
the others, each with its reason. What is kept is approved as a reviewer's edit would be
(reviews.actions.decide.version_approve), so in a workflow it is what the next step reviews; the
refused blocks are recorded for the author, who may propose them again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.contrib.auth.models import User

from core.actors import Actor
from core.audit import audit_record
from core.errors import Conflict, InvalidArgument
from core.transactions import atomic_retried
from reviews.actions.decide import version_approve
from reviews.actions.rules import validate_comment
from reviews.hunks import Hunk, hunks, kept_text
from reviews.merge import is_stale
from reviews.models import RefusedHunk
from reviews.selectors import review_of
from wiki.models import Version, VersionKind, VersionStatus

REASON_MAX = 1000
REFUSED_MAX = 200
REFUSE_NOTHING = "you refused no change: approve the proposal as it is instead."
REFUSE_ALL = "you refused every change: reject the proposal instead, with your reason."


@dataclass(frozen=True)
class PartialPlan:
    """What approving with `refused` applies: every hunk, and the text the kept ones make."""

    hunks: list[Hunk]
    refused: dict[int, str]  # hunk number: reason
    before: str  # the live text the hunks are counted against
    kept: str

    @property
    def kept_hunks(self) -> list[Hunk]:
        return [hunk for hunk in self.hunks if hunk.number not in self.refused]


def partial_refusal(version: Version) -> str | None:
    """Why `version` cannot be approved in part (None: it can)."""
    if version.status != VersionStatus.IN_REVIEW:
        return None  # the approval itself says why not
    if version.kind == VersionKind.APPEND:
        return "an addition is one block: approve or reject it whole, or edit it."
    live = version.page.live_version
    if live is None:
        return "a new page is approved or rejected whole, or edited."
    if is_stale(version):
        return (
            "this proposal is stale: its changes are counted against what is live now only "
            "once merged; edit it against the live version instead."
        )
    return None


def version_hunks(version: Version) -> list[Hunk]:
    """The changed blocks a reviewer keeps or refuses, against what is live now."""
    if partial_refusal(version) is not None or version.status != VersionStatus.IN_REVIEW:
        return []
    return hunks(version.page.live_version.body, version.body)  # type: ignore[union-attr]


def partial_plan(version: Version, refused: Mapping[int, str]) -> PartialPlan:
    """What keeping every hunk of `version` but `refused` makes; InvalidArgument for a hunk
    number it does not have, or for refusing none or all."""
    refusal = partial_refusal(version)
    if refusal is not None:
        raise Conflict(refusal)
    before = version.page.live_version.body  # type: ignore[union-attr]
    found = hunks(before, version.body)
    numbers = {hunk.number for hunk in found}
    unknown = sorted(set(refused) - numbers)
    if unknown:
        raise Conflict(
            f"v{version.number} has changes 1 to {len(found)} against what is live now; there "
            f"is no change {unknown[0]}. Reload the proposal and choose again.",
            detail={"hunks": len(found)},
        )
    # Refusing none or all is a question of what this proposal holds, not of the request's
    # shape: a conflict, answered with what to do instead.
    if not refused:
        raise Conflict(REFUSE_NOTHING, detail={"hunks": len(found)})
    if set(refused) == numbers:
        raise Conflict(REFUSE_ALL, detail={"hunks": len(found)})
    reasons = {number: _reason(reason) for number, reason in sorted(refused.items())}
    return PartialPlan(found, reasons, before, kept_text(before, version.body, set(reasons)))


def _reason(reason: str) -> str:
    if len(reason) > REASON_MAX:
        raise InvalidArgument(
            f"a refused change's reason can be at most {REASON_MAX:,} characters.",
            field="refused",
        )
    return validate_comment(reason)


@atomic_retried
def version_approve_partial(
    *,
    actor: Actor,
    version: Version,
    refused: Mapping[int, str],
    expected_live_number: int,
    comment: str = "",
    step: int | None = None,
) -> Version:
    """Approve the hunks of `version` not in `refused` (hunk number: reason), counted against
    the live version the reviewer saw (`expected_live_number`, which must still be live).
    The kept text is approved as the reviewer's edit; each refused hunk is recorded with
    its reason for the author."""
    plan = partial_plan(version, refused)
    review = review_of(version)
    at_step = review.step if review is not None else 0
    decided = version_approve(
        actor=actor,
        version=version,
        comment=comment,
        edited_body=plan.kept,
        expected_live_number=expected_live_number,
        step=step,
        # Refusing only takes out changes the earlier steps approved: their approvals hold.
        narrowing=True,
    )
    assert isinstance(actor, User)
    review = review_of(decided)
    assert review is not None
    RefusedHunk.objects.bulk_create(
        RefusedHunk(
            review=review,
            version=decided,
            step=at_step,
            number=hunk.number,
            line=hunk.line,
            replaced=hunk.replaced,
            proposed=hunk.proposed,
            reason=plan.refused[hunk.number],
            refused_by=actor,
        )
        for hunk in plan.hunks
        if hunk.number in plan.refused
    )
    audit_record(
        action="version.approve_partial",
        actor=actor,
        page=decided.page,
        version_number=decided.number,
        comment=comment,
        data={"step": at_step + 1, "refused": sorted(plan.refused), "hunks": len(plan.hunks)},
    )
    return decided
