"""What each row of the review queue shows: flags, a short diff preview, one-click approval.

Everything here is worked out from the rows the queue selector already loaded (the version,
its page and the page's live version), so a screen of rows costs no query per row.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from django.contrib.auth.models import User

from reviews.actions.rules import decision_refusal
from reviews.classify import ChangeLabel, change_labels, is_low_risk, kept_out_of_batches
from reviews.deciders import deciders_of, deciding_groups, listed_approvals, transient_review
from reviews.diff import Diff, diff_text, invisible_characters
from reviews.merge import appended_body, is_stale, staleness
from reviews.models import ReviewStatus
from reviews.selectors import asks, review_of, reviewing_now
from wiki import permissions
from wiki.models import Version, VersionKind
from wiki.scope import EVERY_PAGE, shown_path

# A diff fits the row when it changes at most this many lines, shown with one line around.
PREVIEW_LINES = 6


@dataclass(frozen=True)
class QueueRow:
    version: Version
    stale: bool
    staleness: str | None  # "written against v2, live is v3" for a stale proposal
    invisible: bool
    preview: Diff | None  # None when the change is too long to judge from the row
    one_click: bool  # approve straight from the row
    own: bool  # the reviewer may not decide it (their own, their agent's, another step's)
    refusal: str | None  # why not, as services.decision_refusal says it
    step: str = ""  # "Step 1 of 2: Legal (1 of 2 approvals)"
    waiting_on: str = ""  # "you", a group's name, or "the author"
    reviewing: list[str] = field(default_factory=list)  # others who opened it just now
    nobody_decides: bool = False  # no one may decide its step (shown to admins)
    asked: list[str] = field(default_factory=list)  # people asked by name (reviews.asking)

    @property
    def page_path(self) -> str:
        """The page's path as the reviewer is shown it (review_queue gives the start of it
        that names pages hidden from them)."""
        hidden = self.version.page_hidden_prefix  # type: ignore[attr-defined]
        return shown_path(self.version.page.path, EVERY_PAGE, hidden)

    @property
    def change(self) -> list[ChangeLabel]:
        """Its kind of change and size (the "new page" badge is shown apart)."""
        return change_labels(self.version, besides=("new_page",))

    @property
    def low_risk(self) -> bool:
        """What "Select the low-risk ones" ticks: one-click rows of no risky kind, and of
        no kind their workflow keeps out of batches (which would refuse the whole batch)."""
        if not (self.one_click and is_low_risk(self.version)):
            return False
        review = review_of(self.version)
        # The workflow comes with the queue's rows (selectors._with_people): no query.
        workflow = review.workflow if review is not None else None
        return workflow is None or not kept_out_of_batches(self.version, workflow.never_in_batch)

    @property
    def shows_whole(self) -> bool:
        """The row shows the whole change that approving applies (what a batch may decide)."""
        return self.preview is not None and not self.stale

    @property
    def waits_on_you(self) -> bool:
        return self.waiting_on == "you"

    @property
    def one_click_reason(self) -> str:
        if self.version.kind == VersionKind.APPEND:
            return "An addition to a page that has not changed since it was proposed."
        return "A small change written against the live version."


def _changed_lines(old: str, new: str) -> int:
    """An upper bound of the lines a diff would mark, without the word-level work."""
    matcher = difflib.SequenceMatcher(None, old.splitlines(), new.splitlines(), autojunk=False)
    return sum(
        (i2 - i1) + (j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"
    )


def queue_row(
    version: Version,
    reviewer: User,
    deciders: set[int] | None = None,
    access: permissions.Access | None = None,
) -> QueueRow:
    page = version.page
    live = page.live_version
    stale = is_stale(version)
    invisible = bool(
        invisible_characters(
            version.proposed_body,
            version.body,
            version.title,
            version.change_summary,
            version.instructions,
            *version.tags,
        )
    )
    refusal = decision_refusal(reviewer, version, deciders=deciders)
    own = refusal is not None
    preview = None
    if live is not None:
        if version.kind == VersionKind.APPEND:
            # An append changes only the body; nothing else to compare.
            body, same_fields = appended_body(live.body, version.proposed_body), True
        else:
            # Ids, not related rows: no query per row.
            body = version.body
            same_fields = (
                version.title == live.title
                and version.tags == live.tags
                and version.parent_id == live.parent_id
                and version.instructions == live.instructions
            )
        if same_fields and _changed_lines(live.body, body) <= PREVIEW_LINES:
            preview = diff_text(live.body, body, context=1)
    if version.kind == VersionKind.APPEND:
        # An append is applied on whatever is live; unchanged since proposed, what the
        # reviewer reads in the row is exactly what goes live.
        fits = live is not None and version.base_version_id == live.pk and preview is not None
    else:
        fits = live is not None and not stale and preview is not None
    step, waiting_on = _step(version, reviewer, refusal, access)
    one_click = fits and not invisible and waiting_on == "you" and not page.archived
    return QueueRow(
        version,
        stale,
        staleness(version),
        invisible,
        preview,
        one_click,
        own,
        refusal,
        step=step,
        waiting_on=waiting_on,
        nobody_decides=deciders is not None
        and not deciders
        and review_of(version) is not None
        and version.review.status == ReviewStatus.OPEN,
    )


def _step(
    version: Version, reviewer: User, refusal: str | None, access: permissions.Access | None
) -> tuple[str, str]:
    """Which step the row waits on, and on whom: you, the groups deciding the step (the
    policy's, as the mail and the buttons ask it: reviews.deciders), or its author."""
    review = review_of(version)
    if review is None:
        return "", "you" if refusal is None else "others"
    current = review.current_step
    # Prefetched with the queue (selectors.with_reviews): no query per row.
    approvals = [
        a
        for a in listed_approvals(review)
        if a.version_id == version.pk and a.step == review.step and not a.reset
    ]
    label = (
        f"Step {review.step + 1} of {len(review.steps)}: {current['name']} "
        f"({len(approvals)} of {current['approvals']} approvals)"
    )
    if review.status == ReviewStatus.CHANGES_REQUESTED:
        return label, "the author"
    if refusal is None:
        return label, "you"
    if access is None:
        access = permissions.access_at(version.page)
    return label, ", ".join(deciding_groups(review, access)) or "nobody"


def queue_rows(versions: list[Version], reviewer: User) -> list[QueueRow]:
    """The rows of a screen of the queue: those awaiting the reviewer first, then the others
    (each part oldest first), with who else is looking at each."""
    # Who may decide each row's step: one query for the whole screen (reviews.deciders).
    accesses = permissions.accesses_at([version.page for version in versions])
    deciders = deciders_of((review_of(v) or transient_review(v) for v in versions), accesses)
    rows = [
        queue_row(version, reviewer, deciders[version.pk], accesses[version.page.path])
        for version in versions
    ]
    by_review = {
        review.pk: deciders[version.pk]
        for version in versions
        if (review := review_of(version)) is not None
    }
    present = reviewing_now(list(by_review), besides=reviewer, deciders=by_review)
    for row in rows:
        review = review_of(row.version)
        if review is not None:
            row.reviewing.extend(present.get(review.pk, []))
            # Prefetched with the queue (selectors.with_reviews).
            row.asked.extend(ask.person.get_username() for ask in asks(review))
    return sorted(rows, key=lambda row: not row.waits_on_you)
