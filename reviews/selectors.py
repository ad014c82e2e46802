"""Reads for the review screens and the REST API; each decides its own joins."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import Exists, F, Prefetch, Q, QuerySet, prefetch_related_objects
from django.db.models.expressions import RawSQL
from django.db.models.functions import Substr
from django.utils import timezone

from core.errors import Forbidden, NotFound
from reviews.classify import CLASSES
from reviews.deciders import (
    approvals_prefetch,
    deciders_of,
    is_default_step,
    listed_approvals,
    step_group,
)
from reviews.merge import appended_body
from reviews.models import (
    Approval,
    NotificationPreference,
    RefusedHunk,
    Review,
    ReviewAsk,
    ReviewComment,
    ReviewerSettings,
    ReviewStatus,
    ReviewVisit,
    WorkflowStep,
)
from reviews.workflows import applicable_workflow
from wiki import permissions, roles
from wiki.models import SIBLING_ORDER, Page, PageGrant, Version, VersionKind, VersionStatus
from wiki.roles import can_review
from wiki.scope import EVERYTHING, Scope, person_scope
from wiki.search import search_pages
from wiki.selectors import hidden_among, in_scope, unapproved_text_readable_by
from wiki.validators import check_text

AUTHOR_KINDS = ("agent", "human")
KINDS = (VersionKind.REPLACE.value, VersionKind.APPEND.value)


@dataclass(frozen=True)
class QueueFilters:
    agent: str = ""  # agent name
    page: str = ""  # public page id
    author_kind: str = ""  # "agent", "human" or ""
    title: str = ""  # part of the page title
    path: str = ""  # path prefix, e.g. "tools" for tools/slack and everything under it
    author: str = ""  # an agent's name or a person's username
    kind: str = ""  # "replace", "append" or ""
    workflow: str = ""  # the name of the workflow a proposal started with
    step: int | None = None  # the step it waits on, from 1
    change: str = ""  # a kind of change (reviews.classify.CLASSES), e.g. "numbers"
    order: str = ""  # "" oldest first, "small" smallest change first, "large" largest first

    @classmethod
    def from_params(cls, params: Any) -> QueueFilters:
        """The filters a query string asks for; InvalidArgument for text no name or id holds."""

        def text(name: str) -> str:
            return check_text(str(params.get(name) or ""), field=name).strip()[:200]

        kind = text("kind")
        author_kind = text("author_kind")
        step = text("step")
        return cls(
            agent=text("agent"),
            page=text("page"),
            author_kind=author_kind if author_kind in AUTHOR_KINDS else "",
            title=text("title"),
            path=text("path").strip("/"),
            author=text("author"),
            kind=kind if kind in KINDS else "",
            workflow=text("workflow"),
            step=int(step) if step.isdigit() and 0 < int(step) < 100 else None,
            change=text("change") if text("change") in CLASSES else "",
            order=text("order") if text("order") in QUEUE_ORDERS else "",
        )

    @property
    def active(self) -> bool:
        return any(
            (
                self.agent,
                self.page,
                self.author_kind,
                self.title,
                self.path,
                self.author,
                self.kind,
                self.workflow,
                self.step,
                self.change,
            )
        )


# How the queue may be sorted: oldest first, or by the lines a change changes (proposals
# made before changes were classed, without a count, last).
QUEUE_ORDERS: dict[str, tuple[Any, ...]] = {
    "": ("created_at", "id"),
    "small": (F("change_lines").asc(nulls_last=True), "created_at", "id"),
    "large": (F("change_lines").desc(nulls_last=True), "created_at", "id"),
}


def _with_people(versions: QuerySet[Version]) -> QuerySet[Version]:
    return versions.select_related(
        "page",
        "page__live_version",
        "author_user",
        "author_agent",
        "decided_by",
        "base_version",
        "review",
        "review__workflow",
    )


def decides_a_step(user: Any) -> bool:
    """Whether `user` may decide something without being in Reviewers: they are in a group
    that some workflow step names (Legal, say), a group granted `decide` on a section, or
    they approved a step of a review still open. One query."""
    if not permissions.is_active_person(user):
        return False
    named = WorkflowStep.objects.filter(group__user=user)
    granted = PageGrant.objects.filter(decide=True, group__user=user)
    approved = Review.objects.filter(
        status__in=[ReviewStatus.OPEN, ReviewStatus.CHANGES_REQUESTED],
        workflow_page__isnull=False,
        version__status=VersionStatus.IN_REVIEW,
        approvals__user=user,
    )
    return User.objects.filter(
        Exists(named) | Exists(granted) | Exists(approved), pk=user.pk
    ).exists()


def sees_queue(user: Any) -> bool:
    """Whether `user` has the review queue (and the Reviews link): whoever may decide
    something. Reviewers (admins count as reviewers) see every proposal they may read; the
    others the ones they may decide (`review_queue`)."""
    return can_review(user) or decides_a_step(user)


def check_can_see_queue(user: Any) -> None:
    """The queue of proposals is for the people who decide them (`sees_queue`)."""
    if not sees_queue(user):
        raise Forbidden(
            "only reviewers, and the members of a group a review workflow names or granted "
            "decide on a section, can see the proposals waiting for review; ask an admin to "
            "add you to the Reviewers group."
        )


def _only_decidable(versions: QuerySet[Version], user: User) -> QuerySet[Version]:
    """The proposals `user` (not a reviewer) may decide the current step of, by the policy:
    a workflow step of a group they are in, or the default step on a page where they hold
    `decide` (wiki.permissions.pages_where). Whether each is theirs to decide now (not their
    own, not twice) the row says, from reviews.deciders."""
    waiting = (
        Review.objects.filter(version__status=VersionStatus.IN_REVIEW, workflow_page__isnull=False)
        .only("pk", "steps", "step", "workflow_page_id")
        .order_by()
    )
    names = roles.group_names(user)
    ids = [r.pk for r in waiting if not is_default_step(r) and step_group(r) in names]
    default_step = Q(review__workflow_page__isnull=True) & Q(
        page__in=permissions.pages_where(user, permissions.DECIDE)
    )
    return versions.filter(Q(review__in=ids) | default_step)


def waiting_count(user: Any) -> int:
    """The number of proposals in `user`'s queue: the Reviews badge counts only what they
    may read, as the queue lists it."""
    return review_queue(for_user=user).order_by().count()


def review_queue(
    filters: QueueFilters | None = None, *, for_user: User | None = None
) -> QuerySet[Version]:
    """Versions waiting for a decision, oldest first, on pages `for_user` may read; `for_user`
    not a reviewer: the ones waiting on a step of their group."""
    versions = _with_people(Version.objects.filter(status=VersionStatus.IN_REVIEW))
    reader = person_scope(for_user) if for_user is not None else EVERYTHING
    # Each row's page path as they are shown it (wiki.scope.shown_path).
    versions = versions.annotate(page_hidden_prefix=reader.hidden_prefix("page__path"))
    if for_user is not None:
        # Only what they may read (wiki.permissions): a section's title stays in it.
        versions = versions.filter(in_scope(reader))
    if for_user is not None and not can_review(for_user):
        versions = _only_decidable(versions, for_user)
    filters = filters or QueueFilters()
    if filters.agent:
        versions = versions.filter(author_agent__name=filters.agent)
    if filters.page:
        versions = versions.filter(page__public_id=filters.page)
    if filters.author_kind == "agent":
        versions = versions.filter(author_agent__isnull=False)
    elif filters.author_kind == "human":
        versions = versions.filter(author_agent__isnull=True)
    if filters.title:
        # Titles only: short, one per row. Bodies are never searched this way.
        versions = versions.filter(page__title__icontains=filters.title)
    if filters.path:
        # The path as they are shown it: a section hidden from them is never matched.
        shown = Substr("page__path", F("page_hidden_prefix") + 1)
        versions = versions.annotate(page_shown_path=shown).filter(
            Q(page_shown_path=filters.path) | Q(page_shown_path__startswith=filters.path + "/")
        )
    if filters.author:
        versions = versions.filter(
            Q(author_agent__name=filters.author) | Q(author_user__username=filters.author)
        )
    if filters.kind:
        versions = versions.filter(kind=filters.kind)
    if filters.workflow:
        # Its id, as /api/v1/workflows/ lists it, or the name it had when proposals started.
        named = Q(review__workflow_name=filters.workflow)
        if re.fullmatch(r"[0-9]{1,9}", filters.workflow):
            named |= Q(review__workflow_id=int(filters.workflow))
        versions = versions.filter(named)
    if filters.step is not None:
        versions = versions.filter(review__step=filters.step - 1)
    if filters.change:
        versions = versions.filter(change_classes__regex=rf"(^| ){filters.change}( |$)")
    return with_reviews(versions).order_by(*QUEUE_ORDERS[filters.order])


def next_waiting(user: User, *, besides: Version) -> Version | None:
    """The oldest proposal `user` could decide next: not `besides`, not their own, not one of
    their agents' (see services.decision_refusal)."""
    return (
        review_queue(for_user=user)
        .exclude(pk=besides.pk)
        .exclude(author_user=user)
        .exclude(author_agent__owner=user)
        .first()
    )


def agents_with_proposals() -> list[str]:
    """Names of the agents that have proposals waiting, for the queue's filter."""
    names = (
        Version.objects.filter(status=VersionStatus.IN_REVIEW, author_agent__isnull=False)
        .order_by("author_agent__name")
        .values_list("author_agent__name", flat=True)
        .distinct()
    )
    return list(names)


def recent_decisions(user: User, *, limit: int = 10) -> list[Version]:
    """The reviewer's own latest approvals and rejections (not pages they published)."""
    return list(
        _with_people(
            Version.objects.filter(
                decided_by=user, status__in=[VersionStatus.APPROVED, VersionStatus.REJECTED]
            )
            .exclude(author_user=user)
            .order_by("-decided_at", "-id")
        )[:limit]
    )


def version_of(page: Page, number: int, *, reader: Any) -> Version:
    """Version `number` of `page`, if `reader` may read it (see
    `wiki.selectors.unapproved_text_readable_by`; and a proposal waiting on a step they
    decide, see reviews.deciders); a hidden one is answered as a missing one."""
    version = _readable(page, number, reader) or _deciding(page, number, reader)
    if version is None:
        raise NotFound(
            f"page {page.public_id} has no version {number} that you can read; open its "
            "history for the versions there are."
        )
    version.page = page  # share the page row (and its live version) already loaded
    # Whose answer it is: what it names (its parent) is what they may read.
    version.reader_scope = person_scope(reader)  # type: ignore[attr-defined]
    return version


def _readable(page: Page, number: int, reader: Any) -> Version | None:
    return (
        _with_people(page.versions.filter(unapproved_text_readable_by(reader)))
        .filter(number=number)
        .first()
    )


def _deciding(page: Page, number: int, reader: Any) -> Version | None:
    """Version `number` of `page` when it waits on a step `reader` decides, or on which they
    gave their approval in this review: the text they are asked to judge."""
    if reader is None or not reader.is_authenticated or not reader.is_active:
        return None
    version = (
        _with_people(page.versions.filter(number=number))
        .select_related("author_agent__owner")
        .first()
    )
    if version is not None and version.status != VersionStatus.IN_REVIEW:
        # Decided since the first read (another decider published it a moment ago): what
        # the reader may read of it now is what the first read would say now.
        return _readable(page, number, reader)
    review = review_of(version) if version is not None else None
    if version is None or review is None:
        return None
    approved = review.approvals.filter(version=version, user=reader).exists()
    if approved or reader.pk in deciders_of([review])[version.pk]:
        return version
    return None


def page_versions(page: Page, *, reader: Any) -> list[Version]:
    """Every version of a page `reader` may read, newest first."""
    versions = list(
        Version.objects.filter(unapproved_text_readable_by(reader), page=page)
        .select_related(
            "author_user",
            "author_agent",
            "decided_by",
            "reverted_from",
            "base_version",
            "merged_into",
        )
        .prefetch_related(
            Prefetch("approvals", queryset=Approval.objects.select_related("user", "review"))
        )
        .order_by("-number")
    )
    for version in versions:
        version.page = page
    return versions


def live_pages(*, reader: Scope, tag: str = "", parent: str = "") -> QuerySet[Page]:
    """The live pages the person whose Scope is `reader` (`person_scope`) may read, each with
    the start of its path that names pages hidden from them (`hidden_prefix`)."""
    pages: QuerySet[Page] = (
        Page.objects.filter(reader.q())
        .select_related("live_version", "parent")
        .annotate(hidden_prefix=reader.hidden_prefix())
    )
    if tag:
        pages = _with_tag(pages, tag)
    if parent:
        # A page's children in the tree's order; a parent hidden from them has none (as a
        # missing one), though pages granted back to them lie under it.
        visible = Page.objects.filter(reader.q(readable=False), public_id=parent)
        return pages.filter(parent__in=visible).order_by(*SIBLING_ORDER)
    return pages.order_by("path")


def _with_tag(pages: QuerySet[Page], tag: str) -> QuerySet[Page]:
    # SQLite has no JSON containment operator; json_each gives the same answer there.
    if connection.vendor == "postgresql":
        return pages.filter(tags__contains=[tag])
    table = Page._meta.db_table
    has_tag = RawSQL(  # noqa: S611 - the table name is ours, the tag is a parameter
        f'EXISTS (SELECT 1 FROM json_each("{table}"."tags") WHERE json_each.value = %s)',  # noqa: S608
        (tag,),
    )
    return pages.annotate(has_tag=has_tag).filter(has_tag=True)


def proposed_content(version: Version) -> dict[str, Any]:
    """What the page would hold if `version` were approved as written (appends applied)."""
    live = version.page.live_version
    if version.kind == VersionKind.APPEND and version.status == VersionStatus.IN_REVIEW:
        body = appended_body(live.body if live else "", version.proposed_body)
        source = live or version
        return {
            "body": body,
            "title": source.title,
            "tags": source.tags,
            "parent": source.parent,
        }
    return {
        "body": version.body,
        "title": version.title,
        "tags": version.tags,
        "parent": version.parent,
    }


# How a page a reader may not read is named where a version names its parent (as the
# breadcrumbs name one): by no title, link or id.
HIDDEN_PAGE = {"title": "…"}


def parents_shown(reader: Scope, parents: dict[str, Any]) -> dict[str, Any]:
    """`parents` (pages or stand-ins, by name) as `reader` may be shown them: a page they may
    not read (an older version's parent in a section hidden from them) is HIDDEN_PAGE. One
    query (wiki.selectors.hidden_among)."""
    hidden = hidden_among(reader, [p for p in parents.values() if isinstance(p, Page)])
    return {
        name: HIDDEN_PAGE if isinstance(page, Page) and page.pk in hidden else page
        for name, page in parents.items()
    }


def search_live_pages(query: str, *, reader: Scope, tag: str = "", parent: str = "") -> list[Page]:
    hits = search_pages(query, scope=reader, limit=50)
    order = {hit.page_id: i for i, hit in enumerate(hits)}
    pages = list(live_pages(reader=reader, tag=tag, parent=parent).filter(pk__in=list(order)))
    return sorted(pages, key=lambda page: order[page.pk])


# --- the review of a proposal: its workflow, step, approvals and conversation ----------------


def review_of(version: Version) -> Review | None:
    try:
        return version.review  # type: ignore[no-any-return]
    except Review.DoesNotExist:
        return None


def with_reviews(versions: QuerySet[Version]) -> QuerySet[Version]:
    """`versions` with their reviews' approvals and comments, a fixed number of queries."""
    return versions.select_related("review").prefetch_related(
        *approvals_prefetch("review__"),
        "review__comments__author",
        "review__comments__version",
        Prefetch("review__asks", ReviewAsk.objects.select_related("person", "asked_by")),
    )


def _approvals(review: Review) -> list[Approval]:
    return sorted(listed_approvals(review), key=lambda approval: (approval.created_at, approval.pk))


def _comments(review: Review) -> list[ReviewComment]:
    return sorted(review.comments.all(), key=lambda comment: (comment.created_at, comment.pk))


def asks(review: Review) -> list[ReviewAsk]:
    """Who was asked by name, first asked first (prefetched by with_reviews)."""
    return sorted(review.asks.all(), key=lambda ask: (ask.created_at, ask.pk))


def review_summary(version: Version) -> dict[str, Any] | None:
    """Where a proposal in review stands, as REST and MCP show it (DESIGN "Review workflows"):
    its workflow, the step it waits on, approvals so far and needed, and the conversation."""
    if version.status != VersionStatus.IN_REVIEW:
        return None
    review = review_of(version)
    if review is None:
        return None
    step = review.current_step
    approvals = _approvals(review)
    current = [
        a for a in approvals if a.version_id == version.pk and a.step == review.step and not a.reset
    ]
    return {
        "workflow": review.workflow_name,
        "status": review.status,
        "step": review.step + 1,
        "steps": len(review.steps),
        "stepName": step["name"],
        "group": step["group"],
        "approvals": len(current),
        "required": step["approvals"],
        "approvedBy": [approval.user.get_username() for approval in current],
        "revision": review.revision,
        "path": [
            {
                "step": number,
                "name": each["name"],
                "group": each["group"],
                "required": each["approvals"],
                "approvedBy": [
                    a.user.get_username()
                    for a in approvals
                    if a.version_id == version.pk and a.step == number - 1 and not a.reset
                ],
            }
            for number, each in enumerate(review.steps, start=1)
        ],
        "comments": [
            {
                "author": comment.author.get_username(),
                "kind": comment.kind,
                "comment": comment.body,
                "line": comment.line,
                "lineText": comment.line_text or None,
                "onVersion": comment.version.number,
                "createdAt": comment.created_at.isoformat(),
            }
            for comment in _comments(review)
        ],
        "asked": [
            {
                "person": ask.person.get_username(),
                "askedBy": ask.asked_by.get_username() if ask.asked_by is not None else None,
                "askedAt": ask.created_at.isoformat(),
            }
            for ask in asks(review)
        ],
    }


def changes_request(version: Version) -> ReviewComment | None:
    """The reviewer's request for changes `version` waits on its author for, if any."""
    review = review_of(version)
    if review is None or review.status != ReviewStatus.CHANGES_REQUESTED:
        return None
    requests = [c for c in _comments(review) if c.kind == "changes_requested"]
    return requests[-1] if requests else None


def workflows_with_proposals() -> list[tuple[str, int]]:
    """(workflow name, steps) of the proposals waiting, for the queue's filter."""
    rows = (
        Review.objects.filter(version__status=VersionStatus.IN_REVIEW)
        .values_list("workflow_name", "steps")
        .order_by("workflow_name")
    )
    most: dict[str, int] = {}
    for name, steps in rows:
        most[name] = max(most.get(name, 0), len(steps))
    return sorted(most.items())


# --- the review page and the queue: the whole path, presence --------------------------------

# Someone who opened a proposal shows as reviewing it to the others for this long.
PRESENCE_WINDOW = timedelta(minutes=5)


@dataclass(frozen=True)
class StepState:
    number: int  # from 1
    name: str
    group: str
    required: int
    approvals: list[Approval]
    state: str  # "done", "current", "rejected" (ended here) or "upcoming"

    @property
    def still_needed(self) -> int:
        return max(0, self.required - len(self.approvals))


@dataclass(frozen=True)
class ReviewPath:
    """A proposal's review for the review page: every step with its approvals so far."""

    review: Review
    steps: list[StepState]
    comments: list[ReviewComment]
    revisions: list[int]  # version numbers, first to current
    workflow_changed: bool  # the workflow of the page is not the one it started with
    reviewing: list[str] = field(default_factory=list)  # others looking at it now
    text_changed: str = ""  # a reviewer edited the text after others approved it

    @property
    def current(self) -> StepState | None:
        return next((step for step in self.steps if step.state == "current"), None)


def review_path(version: Version, *, viewer: User | None = None) -> ReviewPath | None:
    """The path of `version`'s review: steps, approvals (of this version), the conversation
    across revisions, whether the workflow changed since it started, who else is on it."""
    review = review_of(version)
    if review is None:
        revision = getattr(version, "review_revision", None)
        review = revision.review if revision is not None else None
    if review is None:
        return None
    prefetch_related_objects(
        [review],
        *approvals_prefetch(),
        "comments__author",
        "comments__version",
        "revisions__version",
    )
    given = [a for a in _approvals(review) if a.version_id == version.pk]
    approvals = [a for a in given if not a.reset]
    decided = version.status != VersionStatus.IN_REVIEW
    steps = []
    for index, step in enumerate(review.steps):
        if version.status == VersionStatus.APPROVED or index < review.step:
            state = "done"
        elif index == review.step and not decided:
            state = "current"
        elif index == review.step and version.status == VersionStatus.REJECTED:
            state = "rejected"
        else:
            state = "upcoming"
        steps.append(
            StepState(
                number=index + 1,
                name=step["name"],
                group=step["group"],
                required=step["approvals"],
                approvals=[a for a in approvals if a.step == index],
                state=state,
            )
        )
    return ReviewPath(
        review=review,
        steps=steps,
        comments=_comments(review),
        revisions=[r.version.number for r in review.revisions.all()],
        workflow_changed=not decided and _workflow_changed(review, version.page),
        text_changed=text_changed(given),
        reviewing=reviewing_now([review.pk], besides=viewer).get(review.pk, [])
        if viewer is not None and not decided
        else [],
    )


def text_changed(approvals: list[Approval]) -> str:
    """What the next approver must know when a reviewer edited the text under review after
    others approved it: who edited, at which step, and whose approvals no longer count."""
    edits = [a for a in approvals if a.edited and not a.reset]
    if not edits:
        return ""
    edit = edits[-1]
    reset = sorted(
        {a.user.get_username() for a in approvals if a.reset and a.created_at <= edit.created_at}
    )
    said = (
        f"{edit.user.get_username()} edited the text at step {edit.step + 1} before approving "
        "it: what you approve is the edited text, not what the author proposed."
    )
    if reset:
        said += (
            f" The approvals of the earlier text ({', '.join(reset)}) were reset and count no "
            "longer; read it again before you decide."
        )
    return said


def _workflow_changed(review: Review, page: Page) -> bool:
    now = applicable_workflow(page)
    return (now.name, now.steps) != (review.workflow_name, review.steps)


def reviewing_now(
    review_ids: list[int], *, besides: User | None, deciders: dict[int, set[int]] | None = None
) -> dict[int, list[str]]:
    """Who of the people who may decide each review (reviews.deciders) opened it in the last
    few minutes, but `besides`: {review id: names}. `deciders`: worked out by the caller."""
    visits = ReviewVisit.objects.filter(
        review_id__in=review_ids, seen_at__gte=timezone.now() - PRESENCE_WINDOW
    )
    if besides is not None:
        visits = visits.exclude(user=besides)
    found: dict[int, list[str]] = {}
    rows = list(visits.order_by("seen_at").values_list("review_id", "user_id", "user__username"))
    if deciders is None and rows:
        reviews = Review.objects.filter(pk__in={row[0] for row in rows}).select_related(
            "version__author_agent"
        )
        by_version = deciders_of(reviews)
        deciders = {review.pk: by_version[review.version_id] for review in reviews}
    for review_id, user_id, name in rows:
        if deciders is not None and user_id in deciders.get(review_id, set()):
            found.setdefault(review_id, []).append(name)
    return found


def last_seen(version: Version, viewer: User) -> Version | None:
    """The revision of this review `viewer` looked at last, when it is not `version`."""
    review = review_of(version)
    if review is None:
        return None
    visit = ReviewVisit.objects.filter(review=review, user=viewer).select_related("version").first()
    if visit is None or visit.version_id == version.pk:
        return None
    return visit.version


def notification_preference(user: User) -> str:
    """How the reviewer wants to hear of proposals: at once unless they chose otherwise."""
    chosen = (
        ReviewerSettings.objects.filter(user=user).values_list("notifications", flat=True).first()
    )
    return chosen or NotificationPreference.IMMEDIATE


def group_names() -> list[str]:
    """Every group a workflow step may wait on, by name."""
    return list(Group.objects.order_by("name").values_list("name", flat=True))


def public_ids(page_pks: Iterable[int]) -> dict[int, str]:
    """The public id of each page, by primary key (for conflicts that name parents)."""
    pks = set(page_pks)
    return dict(Page.objects.filter(pk__in=pks).values_list("pk", "public_id")) if pks else {}


def active_person(username: str) -> User | None:
    """An active person by user name (whom to ask for a review)."""
    if not username:
        return None
    return User.objects.filter(username=username, is_active=True).first()


def refused_hunks(version: Version) -> list[RefusedHunk]:
    """The changed blocks reviewers refused on `version` (reviews.partial), every step, in
    order."""
    return list(RefusedHunk.objects.filter(version=version).select_related("refused_by"))
