"""Who may decide a review's current step now: the one rule, asked by every door.

The decision itself, the review-request mail, the queue (its "waits on you" and the admins'
"nobody can decide this"), the presence sign and the Approve button all come here, so they
cannot disagree. At a step of an assigned workflow the deciders are the active members of the
step's group; at the default step (no workflow assigned) they are the people who may decide
on the page (wiki.permissions: Reviewers without section grants); a step's group members
must also be allowed to read the page. Admins count as members of Reviewers, as before
workflows, but not of other groups: a Legal step is Legal's.
Never among them: the proposal's author, the owner of the agent that wrote it, the person
whose OAuth connection carried it, and anyone who already approved this text in this
review, at any step (one person counts once per review).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Prefetch, QuerySet

from reviews.models import DEFAULT_STEPS, DEFAULT_WORKFLOW_NAME, Approval, Review
from wiki import permissions
from wiki.models import Version
from wiki.roles import REVIEWERS


def is_default_step(review: Review) -> bool:
    """Whether the review goes through the default workflow (no assignment above its page)."""
    return review.workflow_page_id is None


def step_group(review: Review) -> str:
    """The group named by the step the review waits on."""
    return str(review.current_step["group"])


def deciding_groups(review: Review, access: permissions.Access) -> list[str]:
    """The groups that decide `review`'s current step, as every door names them: at a
    workflow step its group; at the default step the groups holding `decide` on the page
    (`access`, wiki.permissions: Reviewers unless a grant names others)."""
    if is_default_step(review):
        return sorted(access.groups(permissions.DECIDE) or ())
    return [step_group(review)]


# A listing that shows many reviews loads their approvals once, into this attribute of each
# review (`approvals_prefetch`, Django's public `Prefetch(..., to_attr=...)`); the rule reads
# it when present, else asks the database. Only reads load it; a write that adds, resets or
# removes an approval drops it (`approvals_changed`), so no decision reads a stale list.
LISTED_APPROVALS = "listed_approvals"


def approvals_prefetch(through: str = "") -> list[Prefetch | str]:
    """The prefetch lookups that load reviews' approvals with their people into
    `LISTED_APPROVALS` (`through`: the path to the reviews, e.g. "review__")."""
    return [
        Prefetch(f"{through}approvals", queryset=Approval.objects.all(), to_attr=LISTED_APPROVALS),
        f"{through}{LISTED_APPROVALS}__user",
    ]


def listed_approvals(review: Review) -> list[Approval]:
    """Every approval of `review` (reset ones too), first given first: the listing's, when it
    loaded them, else from the database."""
    listed: list[Approval] | None = getattr(review, LISTED_APPROVALS, None)
    return list(review.approvals.all()) if listed is None else listed


def approvals_changed(review: Review) -> None:
    """Forget the approvals a listing loaded into `review`: they changed since."""
    review.__dict__.pop(LISTED_APPROVALS, None)


def counted_approvers(reviews: Sequence[Review]) -> dict[int, set[int]]:
    """Who approved the revision under review in each review (approvals a reviewer's edit
    reset do not count), from the approvals a listing loaded when it did."""
    found: dict[int, set[int]] = {review.pk: set() for review in reviews}
    missing = []
    for review in reviews:
        if review.pk is None:
            continue
        listed: list[Approval] | None = getattr(review, LISTED_APPROVALS, None)
        if listed is not None:
            found[review.pk] = {
                a.user_id for a in listed if a.version_id == review.version_id and not a.reset
            }
        else:
            missing.append(review)
    if missing:
        rows = Approval.objects.filter(
            review__in=[review.pk for review in missing], reset=False
        ).values_list("review_id", "version_id", "user_id")
        versions = {review.pk: review.version_id for review in missing}
        for review_id, version_id, user_id in rows:
            if versions[review_id] == version_id:
                found[review_id].add(user_id)
    return found


def _never(review: Review, version: Version) -> set[int]:
    """The people who may never decide this revision: its author, the agent's owner, the
    person who connected the agent that wrote it."""
    excluded = {version.author_user_id, review.connected_by_id}
    if version.author_agent_id is not None:
        excluded.add(version.author_agent.owner_id)  # type: ignore[union-attr]
    excluded.discard(None)
    return excluded  # type: ignore[return-value]


def deciders_of(
    reviews: Iterable[Review], accesses: dict[str, permissions.Access] | None = None
) -> dict[int, set[int]]:
    """The ids of the people who may decide each review's current step now, by the pk of the
    version under review (defined for a proposal from before workflows too). Three queries
    whatever the number of reviews and of section grants: the grants above their pages
    (wiki.permissions.accesses_at, none when the caller gives them), the people of every
    group concerned with their groups, and the approvals (none when a listing loaded them:
    `approvals_prefetch`)."""
    reviews = list(reviews)
    if not reviews:
        return {}
    if accesses is None:
        accesses = permissions.accesses_at([review.version.page for review in reviews])
    groups = {REVIEWERS} | {step_group(r) for r in reviews if not is_default_step(r)}
    for access in accesses.values():
        for right in (permissions.READ, permissions.DECIDE):
            groups |= access.groups(right) or frozenset()
    people = permissions.people_in(groups)
    approved = counted_approvers(reviews)
    found: dict[int, set[int]] = {}
    for review in reviews:
        may = _may_decide(review, accesses[review.version.page.path], people)
        found[review.version_id] = may - _never(review, review.version) - approved[review.pk]
    return found


def _may_decide(
    review: Review, access: permissions.Access, people: dict[int, permissions.Subject]
) -> set[int]:
    """Who may decide `review`'s current step by the policy, before the people who never may:
    at the default step, those holding `decide` on the page; at a workflow step, its group's
    members (admins count as Reviewers, not as Legal) who may read the page."""
    if is_default_step(review):
        return {
            pk
            for pk, person in people.items()
            if permissions.grants_give(person, permissions.DECIDE, access)
        }
    group = step_group(review)
    return {
        pk
        for pk, person in people.items()
        if (group in person.groups or (group == REVIEWERS and person.superuser))
        and permissions.grants_give(person, permissions.READ, access)
    }


def deciders(review: Review) -> QuerySet[User]:
    """The people who may decide `review`'s current step now (see the module's rule)."""
    return User.objects.filter(pk__in=deciders_of([review])[review.version_id]).order_by("username")


def transient_review(version: Version) -> Review:
    """The default review a proposal from before workflows would get (not saved)."""
    review = Review(
        page_id=version.page_id,
        version_id=version.pk,
        workflow_name=DEFAULT_WORKFLOW_NAME,
        steps=DEFAULT_STEPS,
    )
    # Only this side of the relation: `version.review` must stay "none" for its callers.
    Review.version.field.set_cached_value(review, version)
    return review


def refusal_reason(actor: Any, review: Review, version: Version) -> str:
    """Why `actor`, who is not among the deciders, may not decide: one sentence for them."""
    if not isinstance(actor, User) or not actor.is_active:
        return "only people can approve or reject proposals."
    if version.author_user_id is not None and version.author_user_id == actor.pk:
        return "you cannot decide your own proposal; ask another reviewer."
    agent = version.author_agent if version.author_agent_id is not None else None
    if agent is not None and agent.owner_id == actor.pk:
        return (
            f"{agent.name} is your agent, so you cannot decide what it proposes; "
            "ask another reviewer."
        )
    if review.connected_by_id is not None and review.connected_by_id == actor.pk:
        name = agent.name if agent is not None else "the agent"
        return (
            f"this proposal came through a connection you allowed to act as {name}, so you "
            "cannot decide it; ask another reviewer."
        )
    if review.pk is not None and actor.pk in counted_approvers([review])[review.pk]:
        return (
            "you already approved this text in this review, and one person counts once "
            f"across its steps; step {review.step + 1} needs another member of "
            f"{step_group(review)}."
        )
    if is_default_step(review):
        # Who decides here is the policy's (a grant may name Legal, not Reviewers).
        return permissions.refusal(actor, permissions.DECIDE, version.page) or (
            "only reviewers can approve or reject proposals."
        )
    current = review.current_step
    return (
        f"this proposal waits on step {review.step + 1} of {len(review.steps)} "
        f"({current['name']}), which members of {current['group']} decide, and you "
        f"are not in {current['group']}."
    )
