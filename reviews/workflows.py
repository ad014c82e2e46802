"""Review workflows: define them, assign them to subtrees, and find the one that applies.

A workflow is an ordered list of steps (a group and how many of its members approve). It is
assigned to a page and applies to everything under it; the nearest assignment wins; with
none, the default is one step of one approval by the Reviewers group (Quire's old rule).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import IntegrityError, transaction
from django.db.models import Q

from core.audit import audit_record
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from reviews.classify import CLASSES
from reviews.models import (
    DEFAULT_STEPS,
    DEFAULT_WORKFLOW_NAME,
    STEP_NAME_MAX,
    WORKFLOW_NAME_MAX,
    Workflow,
    WorkflowAssignment,
    WorkflowStep,
)
from wiki import permissions
from wiki.models import Page, Version
from wiki.roles import REVIEWERS
from wiki.validators import check_text

STEPS_MAX = 10
APPROVALS_MAX = 50
DUE_HOURS_MAX = 8760  # a year


@dataclass(frozen=True)
class AppliedWorkflow:
    """The workflow a page's proposals go through, and the page it is assigned to."""

    workflow: Workflow | None  # None: the default
    source: Page | None  # the page carrying the assignment (the page itself or an ancestor)
    name: str
    steps: list[dict[str, Any]]


DEFAULT = AppliedWorkflow(None, None, DEFAULT_WORKFLOW_NAME, DEFAULT_STEPS)


def workflow_seen_by(user: Any, page: Page) -> AppliedWorkflow:
    """`applicable_workflow(page)` as `user` may see it: the page carrying the assignment is
    not named (`source` None) when it is a section hidden from them above a page granted back
    to them (one query more then, none for the page's own or no assignment)."""
    applied = applicable_workflow(page)
    source = applied.source
    if source is None or source.pk == page.pk:
        return applied
    if permissions.reads(getattr(user, "pk", None), source.pk):
        return applied
    return replace(applied, source=None)


# --- reading ------------------------------------------------------------------------------


def steps_of(workflow: Workflow) -> list[dict[str, Any]]:
    """The workflow's steps as a proposal snapshots them: [{name, group, approvals,
    due_hours?}] (due_hours only on a step with its own due time)."""
    return [
        {
            "name": step.name,
            "group": step.group.name,
            "approvals": step.approvals,
            **({"due_hours": step.due_hours} if step.due_hours is not None else {}),
        }
        for step in workflow.steps.all()
    ]


def workflows() -> list[Workflow]:
    """Every workflow with its steps and the pages it is assigned to, by name."""
    return list(
        Workflow.objects.prefetch_related("steps__group", "assignments__page").order_by("name")
    )


def workflow_by_id(workflow_id: Any) -> Workflow:
    try:
        return Workflow.objects.prefetch_related("steps__group", "assignments__page").get(
            pk=int(workflow_id)
        )
    except (Workflow.DoesNotExist, TypeError, ValueError):
        raise NotFound(
            f"there is no workflow {workflow_id}; list them at /api/v1/workflows/."
        ) from None


def _ancestor_paths(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def applicable_workflows(pages: Sequence[Page]) -> dict[int, AppliedWorkflow]:
    """The workflow of each page, by page pk, in two queries whatever the number of pages."""
    paths = {prefix for page in pages for prefix in _ancestor_paths(page.path)}
    assignments = {
        assignment.page.path: assignment
        for assignment in WorkflowAssignment.objects.filter(page__path__in=paths)
        .select_related("page", "workflow")
        .prefetch_related("workflow__steps__group")
    }
    applied: dict[int, AppliedWorkflow] = {}
    for page in pages:
        nearest = next(
            (
                assignments[prefix]
                for prefix in reversed(_ancestor_paths(page.path))
                if prefix in assignments
            ),
            None,
        )
        if nearest is None:
            applied[page.pk] = DEFAULT
        else:
            workflow = nearest.workflow
            applied[page.pk] = AppliedWorkflow(
                workflow, nearest.page, workflow.name, steps_of(workflow)
            )
    return applied


def applicable_workflow(page: Page) -> AppliedWorkflow:
    """The workflow that applies to `page`: the nearest assignment on it or above, else the
    default."""
    return applicable_workflows([page])[page.pk]


def _strictness(applied: AppliedWorkflow) -> tuple[int, int, int]:
    """Orders workflows from the least strict: the default, then by steps, then approvals."""
    approvals = sum(int(step.get("approvals", 1)) for step in applied.steps)
    return (applied.workflow is not None, len(applied.steps), approvals)


def stricter(one: AppliedWorkflow, other: AppliedWorkflow) -> AppliedWorkflow:
    """The stricter of two workflows (`one` on a tie)."""
    return other if _strictness(other) > _strictness(one) else one


def review_workflows(versions: Sequence[Version]) -> dict[int, AppliedWorkflow]:
    """The workflow that reviews each proposal, by page pk: the one that applies to its page,
    or, for a proposal that moves the page across a workflow's border, the stricter of the
    workflows where it is and where it goes (wiki.permissions.move_refusal sends such a move
    here). A page that carries its own assignment takes it along and crosses no border."""
    pages = [version.page for version in versions]
    moving = [
        version
        for version in versions
        if version.parent_id != version.page.parent_id and version.parent_id is not None
    ]
    applied = applicable_workflows(pages + [version.parent for version in moving])  # type: ignore[misc]
    chosen: dict[int, AppliedWorkflow] = {page.pk: applied[page.pk] for page in pages}
    for version in versions:
        here = applied[version.page_id]
        if version.parent_id == version.page.parent_id:
            continue
        if here.source is not None and here.source.pk == version.page_id:
            continue
        there = DEFAULT if version.parent_id is None else applied[version.parent_id]
        chosen[version.page_id] = stricter(here, there)
    return chosen


# --- admin writes -------------------------------------------------------------------------


def _check_admin(actor: Any) -> User:
    if not permissions.is_admin(actor):
        raise Forbidden("only admins can define and assign review workflows.")
    return actor  # type: ignore[no-any-return]


def _validate_name(name: Any) -> str:
    if not isinstance(name, str) or not check_text(name, field="name").strip():
        raise InvalidArgument("give the workflow a name, e.g. Legal review.", field="name")
    name = name.strip()
    if len(name) > WORKFLOW_NAME_MAX:
        raise InvalidArgument(
            f"a workflow name can be at most {WORKFLOW_NAME_MAX} characters.", field="name"
        )
    return name


def _validate_due_hours(number: int, due_hours: Any) -> int | None:
    if due_hours is None or due_hours == "":
        return None
    if (
        isinstance(due_hours, bool)
        or not isinstance(due_hours, int)
        or not 1 <= due_hours <= DUE_HOURS_MAX
    ):
        raise InvalidArgument(
            f"step {number}'s due time must be between 1 and {DUE_HOURS_MAX} hours, or left "
            "empty for the default.",
            field="steps",
        )
    return due_hours


def _validate_steps(steps: Any) -> list[tuple[str, Group, int, int | None]]:
    """[(name, group, approvals, due_hours)] from [{name, group, approvals, due_hours?}];
    unknown groups refused."""
    if not isinstance(steps, list) or not steps:
        raise InvalidArgument(
            'give at least one step, e.g. [{"name": "Legal", "group": "Legal", "approvals": 2}].',
            field="steps",
        )
    if len(steps) > STEPS_MAX:
        raise InvalidArgument(f"a workflow can have at most {STEPS_MAX} steps.", field="steps")
    wanted = {str(step.get("group", "")).strip() for step in steps if isinstance(step, dict)}
    groups = {group.name: group for group in Group.objects.filter(name__in=wanted)}
    checked = []
    for number, step in enumerate(steps, start=1):
        if not isinstance(step, dict):
            raise InvalidArgument(f"step {number} must be an object.", field="steps")
        group_name = check_text(str(step.get("group") or ""), field="group").strip()
        name = check_text(str(step.get("name") or group_name), field="name").strip()
        if not name or len(name) > STEP_NAME_MAX:
            raise InvalidArgument(
                f"step {number} needs a name of 1 to {STEP_NAME_MAX} characters.", field="steps"
            )
        group = groups.get(group_name)
        if group is None:
            known = ", ".join(Group.objects.order_by("name").values_list("name", flat=True))
            raise NotFound(
                f"step {number} names the group {group_name!r}, which does not exist; "
                f"choose one of: {known or 'none yet'} "
                "(admins make groups under Groups, /groups/).",
            )
        approvals = step.get("approvals", 1)
        if (
            isinstance(approvals, bool)
            or not isinstance(approvals, int)
            or not 1 <= approvals <= APPROVALS_MAX
        ):
            raise InvalidArgument(
                f"step {number} needs between 1 and {APPROVALS_MAX} approvals.", field="steps"
            )
        due_hours = _validate_due_hours(number, step.get("due_hours"))
        checked.append((name, group, approvals, due_hours))
    _check_enough_deciders([(name, group, approvals) for name, group, approvals, _ in checked])
    return checked


def _check_enough_deciders(steps: list[tuple[str, Group, int]]) -> None:
    """Refuse steps nobody could complete: a group with no active member, fewer members
    than the approvals asked of it, or (one person counting once per review) fewer people
    in all the steps' groups than the approvals of the whole workflow."""
    ids = {group.pk for _, group, _ in steps}
    rows = (
        User.objects.filter(is_active=True)
        .filter(Q(groups__in=ids) | Q(is_superuser=True))
        .values_list("pk", "groups", "is_superuser")
    )
    members: dict[int, set[int]] = {pk: set() for pk in ids}
    admins = set()
    for pk, group_id, superuser in rows:
        if group_id in members:
            members[group_id].add(pk)
        if superuser:
            admins.add(pk)
    everyone: set[int] = set()
    for number, (name, group, approvals) in enumerate(steps, start=1):
        people = members[group.pk] | (admins if group.name == REVIEWERS else set())
        everyone |= people
        if not people:
            raise InvalidArgument(
                f"step {number} ({name}) names the group {group.name}, which has no active "
                f"members, so nobody could decide it; add people to {group.name} first (under "
                "Groups, /groups/), or choose another group.",
                field="steps",
            )
        if len(people) < approvals:
            raise InvalidArgument(
                f"step {number} ({name}) asks for {approvals} approvals from {group.name}, "
                f"which has {len(people)} active member{'s' if len(people) != 1 else ''} who "
                f"could give them; ask for at most {len(people)}, or add people to "
                f"{group.name} first.",
                field="steps",
            )
    total = sum(approvals for _, _, approvals in steps)
    if len(everyone) < total:
        raise InvalidArgument(
            f"the steps ask for {total} approvals in all, and one person counts once per "
            f"review, but their groups hold {len(everyone)} people; ask for fewer approvals "
            "or add people to the groups first.",
            field="steps",
        )


def _write_steps(workflow: Workflow, steps: list[tuple[str, Group, int, int | None]]) -> None:
    workflow.steps.all().delete()
    WorkflowStep.objects.bulk_create(
        WorkflowStep(
            workflow=workflow,
            position=i,
            name=name,
            group=group,
            approvals=approvals,
            due_hours=due_hours,
        )
        for i, (name, group, approvals, due_hours) in enumerate(steps)
    )


def _unique_name(name: str, *, besides: Workflow | None = None) -> None:
    taken = Workflow.objects.filter(name=name)
    if besides is not None:
        taken = taken.exclude(pk=besides.pk)
    if taken.exists():
        raise Conflict(f"a workflow named {name!r} exists already; choose another name.")


def _validate_never_in_batch(classes: Any) -> list[str]:
    """Kinds of change (reviews.classify.CLASSES) the workflow keeps out of batches."""
    if not isinstance(classes, list | tuple) or any(
        not isinstance(name, str) or name not in CLASSES for name in classes
    ):
        raise InvalidArgument(
            f"never_in_batch lists kinds of change, each one of {', '.join(CLASSES)}.",
            field="neverInBatch",
        )
    return [name for name in CLASSES if name in classes]


@transaction.atomic
def workflow_create(*, actor: Any, name: Any, steps: Any, never_in_batch: Any = ()) -> Workflow:
    """A new workflow with its steps, in order, and the kinds of change it never lets a
    batch approve."""
    _check_admin(actor)
    name = _validate_name(name)
    checked = _validate_steps(steps)
    kept_out = _validate_never_in_batch(never_in_batch)
    _unique_name(name)
    try:
        with transaction.atomic():
            workflow = Workflow.objects.create(name=name, never_in_batch=kept_out)
    except IntegrityError:
        raise Conflict(f"a workflow named {name!r} exists already; choose another name.") from None
    _write_steps(workflow, checked)
    audit_record(
        action="workflow.create",
        actor=actor,
        data={"name": name, "steps": _described(checked), "never_in_batch": kept_out},
    )
    return workflow_by_id(workflow.pk)


@transaction.atomic
def workflow_update(
    *, actor: Any, workflow: Workflow, name: Any, steps: Any, never_in_batch: Any = None
) -> Workflow:
    """Rename a workflow and replace its steps. Proposals already in review keep the steps
    they started with; new proposals take these. `never_in_batch` (None: as it is) applies
    at once, to proposals in review too."""
    _check_admin(actor)
    name = _validate_name(name)
    checked = _validate_steps(steps)
    workflow = Workflow.objects.select_for_update().get(pk=workflow.pk)
    _unique_name(name, besides=workflow)
    workflow.name = name
    if never_in_batch is not None:
        workflow.never_in_batch = _validate_never_in_batch(never_in_batch)
    workflow.save()
    _write_steps(workflow, checked)
    audit_record(
        action="workflow.update",
        actor=actor,
        data={
            "id": workflow.pk,
            "name": name,
            "steps": _described(checked),
            "never_in_batch": workflow.never_in_batch,
        },
    )
    return workflow_by_id(workflow.pk)


@transaction.atomic
def workflow_delete(*, actor: Any, workflow: Workflow) -> None:
    """Delete a workflow and its assignments; proposals in review keep their steps."""
    _check_admin(actor)
    audit_record(
        action="workflow.delete", actor=actor, data={"id": workflow.pk, "name": workflow.name}
    )
    workflow.delete()


class ReplaceUnconfirmed(Conflict):
    """The page carries another workflow: assigning this one would replace it unasked."""


@transaction.atomic
def workflow_assign(
    *, actor: Any, workflow: Workflow, page: Page, replace: bool = False
) -> WorkflowAssignment:
    """Make `workflow` apply to `page` and its subtree. Another workflow assigned to the page
    is replaced only when the admin said so (`replace`): otherwise refused, naming it."""
    _check_admin(actor)
    current = (
        WorkflowAssignment.objects.select_for_update()
        .select_related("workflow")
        .filter(page=page)
        .first()
    )
    replaced = current.workflow.name if current and current.workflow_id != workflow.pk else None
    if replaced is not None and not replace:
        raise ReplaceUnconfirmed(
            f"{page.path} already goes through the workflow “{replaced}”; assigning "
            f"“{workflow.name}” would replace it there and under it. Confirm that you want to "
            'replace it (over REST: send "replace": true), or assign it to another page.',
            detail={"current": replaced, "currentId": current.workflow_id if current else None},
        )
    assignment, _ = WorkflowAssignment.objects.update_or_create(
        page=page, defaults={"workflow": workflow}
    )
    audit_record(
        action="workflow.assign",
        actor=actor,
        page=page,
        data={"workflow": workflow.name, "replaced": replaced},
    )
    return assignment


@transaction.atomic
def workflow_unassign(*, actor: Any, workflow: Workflow, page: Page) -> None:
    """Take `workflow` off `page`: the page falls back to the assignment above it."""
    _check_admin(actor)
    deleted, _ = WorkflowAssignment.objects.filter(page=page, workflow=workflow).delete()
    if not deleted:
        raise NotFound(f"workflow {workflow.name!r} is not assigned to page {page.public_id}.")
    audit_record(
        action="workflow.unassign", actor=actor, page=page, data={"workflow": workflow.name}
    )


def _described(steps: Iterable[tuple[str, Group, int, int | None]]) -> list[dict[str, Any]]:
    return [
        {"name": name, "group": group.name, "approvals": approvals, "due_hours": due_hours}
        for name, group, approvals, due_hours in steps
    ]
