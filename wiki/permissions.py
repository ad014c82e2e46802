"""Who may do what where, stated once: `can(person, right, page)` and `people_with(right, page)`.

A grant (wiki.models.PageGrant) gives a group rights on a page and everything under it:

- `read`: see the page anywhere (tree, search, history, diffs, mail, REST, an agent's set);
- `propose`: propose a change, which a reviewer decides;
- `publish`: change it without review;
- `decide`: review proposals (where a review workflow applies, its steps name who decides).

For each right the nearest grant on the page or above it wins: the groups granted that right
there hold it, nobody else (superusers aside). A page with no such grant above it keeps the
default, today's behaviour: every active person reads and proposes, `Editors` publish,
`Reviewers` decide. Superusers hold every right.

Two rules tie the rights together:

- every right needs `read`: nobody changes or decides what they may not read;
- where a review workflow is assigned (on the page or above), nobody publishes: a change
  there is a proposal like anyone's, which the workflow's steps decide. (The assignment is
  read through the page's `workflow_assignment` relation: wiki does not import reviews.)

What a person may read is also a Scope (wiki.scope, `Scope.reader`): the same nearest-grant
rule as SQL, so that search, the tree and an agent's set filter in the database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import Q, QuerySet

from core.audit import audit_record
from core.errors import Forbidden, InvalidArgument, NotFound
from wiki.models import RIGHTS, Page, PageGrant
from wiki.roles import EDITORS, REVIEWERS, group_names
from wiki.scope import Scope
from wiki.validators import check_text

READ, PROPOSE, PUBLISH, DECIDE = RIGHTS
# The groups that hold a right where no grant says otherwise; None: every active person.
DEFAULT_HOLDERS: dict[str, str | None] = {
    READ: None,
    PROPOSE: None,
    PUBLISH: EDITORS,
    DECIDE: REVIEWERS,
}


def ancestor_paths(path: str) -> list[str]:
    """The paths of the page at `path` and of every page above it, the top first."""
    parts = path.split("/")
    return ["/".join(parts[: depth + 1]) for depth in range(len(parts))]


@dataclass
class Access:
    """What applies at one page: for each right, the groups of the nearest grant (and the
    path of the page carrying it), and whether a review workflow is assigned on or above."""

    # right -> (path of the page whose grant decides it, the groups it names); a right
    # missing here keeps its default.
    granted: dict[str, tuple[str, frozenset[str]]] = field(default_factory=dict)
    workflow_path: str | None = None
    workflow_name: str | None = None
    # The public ids of the pages carrying a grant or a workflow, by path.
    public_ids: dict[str, str] = field(default_factory=dict)

    def groups(self, right: str) -> frozenset[str] | None:
        """The groups holding `right` here; None for every active person."""
        if right in self.granted:
            return self.granted[right][1]
        default = DEFAULT_HOLDERS[right]
        return None if default is None else frozenset({default})

    def source(self, right: str) -> str | None:
        """The path of the page whose grant decides `right` here (None: the default)."""
        return self.granted[right][0] if right in self.granted else None


# The top level: no grant and no workflow applies above a top-level page.
TOP_LEVEL = Access()


def access_at(page: Page | None) -> Access:
    """The grants and workflow that apply at `page` (None: the top level, where a new
    top-level page goes), in one query. Not kept on the page object: a grant or workflow
    changed since must count at once."""
    if page is None:
        return TOP_LEVEL
    rows = (
        Page.objects.filter(path__in=ancestor_paths(page.path))
        .filter(Q(grants__isnull=False) | Q(workflow_assignment__isnull=False))
        .order_by()
        .values_list(
            "path",
            "public_id",
            "workflow_assignment__workflow__name",
            "grants__group__name",
            *(f"grants__{right}" for right in RIGHTS),
        )
    )
    by_path: dict[str, list[tuple[Any, ...]]] = {}
    access = Access()
    for path, public_id, workflow, group, *rights in rows:
        access.public_ids[path] = public_id
        if workflow is not None and (
            access.workflow_path is None or len(path) > len(access.workflow_path)
        ):
            access.workflow_path, access.workflow_name = path, workflow
        if group is not None:
            by_path.setdefault(path, []).append((group, *rights))
    # The nearest grant per right: walk up from the page itself.
    for path in reversed(ancestor_paths(page.path)):
        for position, right in enumerate(RIGHTS, start=1):
            if right in access.granted:
                continue
            holders = frozenset(row[0] for row in by_path.get(path, ()) if row[position])
            if holders:
                access.granted[right] = (path, holders)
    return access


def _is_active_person(user: Any) -> bool:
    return (
        user is not None
        and getattr(user, "is_authenticated", False)
        and getattr(user, "is_active", False)
        and isinstance(user, User)
    )


def _holds(user: Any, groups: frozenset[str] | None) -> bool:
    return groups is None or bool(groups & group_names(user))


def can(user: Any, right: str, page: Page | None) -> bool:
    """Whether `user` (a person; an agent is never asked here) holds `right` on `page`
    (None: at the top level, for a new top-level page)."""
    if right == PUBLISH and access_at(page).workflow_path is not None:
        return False  # where a workflow applies, every change is a proposal
    return holds(user, right, page)


def holds(user: Any, right: str, page: Page | None) -> bool:
    """`can`, the grants alone: whether a workflow applies aside. For what has no proposal to
    go through (archiving, attachments, the order of pages), a section's publishers act."""
    if right not in RIGHTS:
        raise ValueError(f"unknown right {right!r}; the rights are {', '.join(RIGHTS)}")
    if not _is_active_person(user):
        return False
    if user.is_superuser:
        return True
    access = access_at(page)
    if not _holds(user, access.groups(READ)):
        return False
    return right == READ or _holds(user, access.groups(right))


def publish_refusal(user: Any, page: Page | None) -> str | None:
    """Why `user` may not change `page` without review (None when they may), saying what to
    do instead: the one wording for every door."""
    access = access_at(page)
    if access.workflow_path is not None:
        return (
            f"the “{access.workflow_name}” review workflow applies here, so every change is "
            "reviewed, an editor's too; submit a proposal instead."
        )
    if holds(user, PUBLISH, page):
        return None
    groups = access.groups(PUBLISH)
    who = ", ".join(sorted(groups or ())) or "nobody"
    return f"only members of {who} can publish here without review; submit a proposal instead."


def move_refusal(user: Any, page: Page, parent: Page | None) -> str | None:
    """Why `user` may not move `page` under `parent` (None: the top level) without review, or
    None. A move needs the publish right at both places; a move across a review workflow's
    border (into, out of, or between workflows) changes who reviews the page, so it is a
    proposal the stricter workflow reviews (reviews.workflows.stricter), never a direct move.
    A page that carries its own workflow takes it along: it crosses no border."""
    if not (holds(user, PUBLISH, page) and holds(user, PUBLISH, parent)):
        return "moving a page needs the right to publish both where it is and where it goes."
    if crosses_workflow_border(page, parent):
        names = [
            f"“{access.workflow_name}”"
            for access in (access_at(page), access_at(parent))
            if access.workflow_name is not None
        ]
        return (
            f"this move crosses the border of the {' and '.join(names)} review workflow, so "
            "it is a change that workflow reviews; propose the move instead (Propose this "
            "move), and a reviewer of the stricter workflow decides it."
        )
    return None


def crosses_workflow_border(page: Page, parent: Page | None) -> bool:
    """Whether moving `page` under `parent` changes the review workflow that applies to it
    (into, out of, or between workflows); a page carrying its own takes it along."""
    here = access_at(page)
    if here.workflow_path == page.path:
        return False
    return here.workflow_path != access_at(parent).workflow_path


def reads(user_id: int | None, page_id: int) -> bool:
    """Whether the person `user_id` may read the page `page_id` (its read grants; live or
    not), in one query: for those known by id, as mail's recipients are."""
    if user_id is None:
        return False
    scope = Scope(everything=True, reader=int(user_id))
    return Page.objects.filter(scope.q(readable=False), pk=page_id).exists()


def people_with(right: str, page: Page) -> QuerySet[User]:
    """The active people who hold `right` on `page` (`can` as one query of users)."""
    if right not in RIGHTS:
        raise ValueError(f"unknown right {right!r}; the rights are {', '.join(RIGHTS)}")
    access = access_at(page)
    people = User.objects.filter(is_active=True)
    if right == PUBLISH and access.workflow_path is not None:
        return people.none()
    # Each right needed is its own membership test (one join would ask one group for both).
    condition = Q()
    for needed in sorted({READ, right}):
        groups = access.groups(needed)
        if groups is not None:
            condition &= Q(
                pk__in=User.groups.through.objects.filter(group__name__in=groups).values("user_id")
            )
    if not condition:
        return people
    return people.filter(Q(is_superuser=True) | condition)


# --- what applies at a page, for the admin's screen and REST's /access ---------------------


@dataclass(frozen=True)
class RightHolders:
    """Who holds one right at a page, and from where: the groups of the nearest grant (the
    page `source_path` carries it) or the default (`source_path` None)."""

    right: str
    groups: list[str] | None  # None: every active person
    source_path: str | None
    source_page_id: str | None
    blocked_by_workflow: str | None = None  # publish: the name of the workflow that applies


def holders_at(page: Page) -> list[RightHolders]:
    """For each right, who holds it at `page` and whence (superusers always do)."""
    access = access_at(page)
    shown = []
    for right in RIGHTS:
        groups = access.groups(right)
        shown.append(
            RightHolders(
                right=right,
                groups=None if groups is None else sorted(groups),
                source_path=access.source(right),
                source_page_id=access.public_ids.get(access.source(right) or ""),
                blocked_by_workflow=access.workflow_name if right == PUBLISH else None,
            )
        )
    return shown


def grants_on(page: Page) -> list[PageGrant]:
    """The grants carried by `page` itself, by group name."""
    return list(PageGrant.objects.filter(page=page).select_related("group").order_by("group__name"))


def grants_applying(page: Page) -> list[PageGrant]:
    """The grants on `page` and on every page above it, nearest first."""
    paths = ancestor_paths(page.path)
    grants = PageGrant.objects.filter(page__path__in=paths).select_related("group", "page")
    return sorted(grants, key=lambda grant: (-len(grant.page.path), grant.group.name))


# --- admin writes ----------------------------------------------------------------------------


def _check_admin(actor: Any) -> User:
    if not _is_active_person(actor) or not actor.is_superuser:
        raise Forbidden("only admins can change who may read, propose, publish or decide.")
    return actor  # type: ignore[no-any-return]


def checked_rights(rights: Any) -> list[str]:
    """`rights` as a list of known rights, in their order; a clear error otherwise."""
    if isinstance(rights, str):
        rights = [rights]
    if not isinstance(rights, list | tuple) or not all(isinstance(r, str) for r in rights):
        raise InvalidArgument(
            'give rights as a list, e.g. ["read", "decide"]; the rights are '
            + ", ".join(RIGHTS)
            + ".",
            field="rights",
        )
    unknown = [right for right in rights if right not in RIGHTS]
    if unknown:
        raise InvalidArgument(
            f"{', '.join(map(repr, unknown))} is not a right; the rights are {', '.join(RIGHTS)}.",
            field="rights",
        )
    if not rights:
        raise InvalidArgument(
            "give at least one right; to take a group's rights away, delete its grant.",
            field="rights",
        )
    return [right for right in RIGHTS if right in rights]


def group_names_all() -> list[str]:
    """Every group's name, for the screen that grants them rights."""
    return list(Group.objects.order_by("name").values_list("name", flat=True))


def group_named(name: Any) -> Group:
    if not isinstance(name, str):
        raise InvalidArgument('name the group, e.g. {"group": "Legal"}.', field="group")
    group = Group.objects.filter(name=check_text(name.strip(), field="group")).first()
    if group is None:
        # not_found, as a workflow step naming a missing group: the request is well formed,
        # the group it names is not there (REST answers 404, as the schema says).
        known = ", ".join(Group.objects.order_by("name").values_list("name", flat=True))
        raise NotFound(
            f"there is no group {name.strip()!r}; choose one of: {known or 'none yet'} "
            "(admins make groups under Groups, /groups/)."
        )
    return group


@transaction.atomic
def grant_set(*, actor: Any, page: Page, group: Group, rights: Any) -> PageGrant:
    """Give `group` exactly `rights` on `page` and everything under it (replacing what it had
    on this page), with an audit row."""
    _check_admin(actor)
    kept = checked_rights(rights)
    grant, created = PageGrant.objects.update_or_create(
        page=page, group=group, defaults={right: right in kept for right in RIGHTS}
    )
    audit_record(
        action="grant.set",
        actor=actor,
        page=page,
        data={"group": group.name, "rights": kept, "created": created},
    )
    return grant


@transaction.atomic
def grants_set(*, actor: Any, page: Page, grants: list[tuple[Any, Any]]) -> list[PageGrant]:
    """`grant_set` for several groups at once, all or none: [(group name, rights)]."""
    _check_admin(actor)
    checked = [(group_named(name), checked_rights(rights)) for name, rights in grants]
    return [
        grant_set(actor=actor, page=page, group=group, rights=rights) for group, rights in checked
    ]


@transaction.atomic
def grant_delete(*, actor: Any, page: Page, grant_id: Any) -> None:
    """Take a grant off `page`: its rights fall back to the grant above, or the default."""
    _check_admin(actor)
    try:
        grant = PageGrant.objects.select_related("group").get(page=page, pk=int(grant_id))
    except (PageGrant.DoesNotExist, TypeError, ValueError):
        raise NotFound(
            f"page {page.public_id} has no grant {grant_id}; list them at "
            f"/api/v1/pages/{page.public_id}/grants/."
        ) from None
    audit_record(
        action="grant.delete",
        actor=actor,
        page=page,
        data={"group": grant.group.name, "rights": grant.rights},
    )
    grant.delete()
