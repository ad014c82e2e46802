"""Who may do what where, stated once for people and agents: the only answer every door asks.

Three forms of one rule, from the same grants: for one page `can(actor, right, page)` and
`refusal(...)` (the sentence a door shows); which pages, `pages_where(actor, right)` (its SQL
is `held_sql`); who, `people_holding(right, pages)` for many pages at once in two queries
(`people_with(right, page)` for one). tests/test_policy_forms.py checks that they agree.

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

An agent holds a right where its owner holds it and its own flags allow it (it reads; it
proposes if it may edit pages; it never publishes or decides); an agent with no owner holds
only what no grant restricts (`subject_of`).

What a person may read is also a Scope (wiki.scope, `Scope.reader`): the same nearest-grant
rule as SQL, so that search, the tree and an agent's set filter in the database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BooleanField, Expression, F, Q, QuerySet
from django.db.models.sql.compiler import SQLCompiler

from core.actors import is_agent
from core.audit import audit_record
from core.errors import Forbidden, InvalidArgument, NotFound
from wiki.models import RIGHTS, Page, PageGrant
from wiki.roles import EDITORS, REVIEWERS, group_names
from wiki.scope import TREE_KEY_SQL, Scope, tree_key_sql
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
    return accesses_at([page])[page.path]


def accesses_at(pages: Iterable[Page]) -> dict[str, Access]:
    """`access_at` for many pages at once, by path: one query whatever their number."""
    wanted = {page.path for page in pages}
    paths = {above for path in wanted for above in ancestor_paths(path)}
    rows = (
        Page.objects.filter(path__in=paths)
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
    carried: dict[str, tuple[str, str | None, list[tuple[Any, ...]]]] = {}
    for path, public_id, workflow, group, *rights in rows:
        _id, _workflow, grants = carried.setdefault(path, (public_id, workflow, []))
        if group is not None:
            grants.append((group, *rights))
    return {path: _access_from(path, carried) for path in wanted}


def _access_from(
    path: str, carried: dict[str, tuple[str, str | None, list[tuple[Any, ...]]]]
) -> Access:
    """What applies at `path`, from the grants and workflows carried on the pages above it."""
    access = Access()
    # Walk up from the page itself: the nearest grant per right, the nearest workflow.
    for above in reversed(ancestor_paths(path)):
        if above not in carried:
            continue
        public_id, workflow, grants = carried[above]
        access.public_ids[above] = public_id
        if workflow is not None and access.workflow_path is None:
            access.workflow_path, access.workflow_name = above, workflow
        for position, right in enumerate(RIGHTS, start=1):
            if right in access.granted:
                continue
            holders = frozenset(row[0] for row in grants if row[position])
            if holders:
                access.granted[right] = (above, holders)
    return access


# --- who asks: a person, or an agent standing for its owner ---------------------------------


@dataclass(frozen=True)
class Subject:
    """Whose grants answer for an actor: a person's own groups, or an agent's owner's (no
    owner: no group, so only what no grant restricts), and the rights its kind allows."""

    groups: frozenset[str]
    superuser: bool
    # The rights the actor's kind and flags allow at all (an agent never publishes or
    # decides; one that may not edit pages reads only).
    allowed: frozenset[str]
    # The pk whose memberships the SQL form asks for (0: nobody's).
    reader: int
    agent: Any = None

    @property
    def owner(self) -> User | None:
        return getattr(self.agent, "owner", None) if self.agent is not None else None


NOBODY = Subject(frozenset(), False, frozenset(), 0)


def subject_of(actor: Any) -> Subject:
    """The Subject of `actor`: a person (active, signed in), an agent, or nobody."""
    if is_agent(actor):
        if not actor.is_active:
            return replace(NOBODY, agent=actor)
        owner = actor.owner if actor.owner_id is not None else None
        allowed = {READ, PROPOSE} if actor.can_edit_pages else {READ}
        return Subject(
            groups=frozenset(group_names(owner)) if owner is not None else frozenset(),
            # As the reader's SQL: an owner's admin rights hold while the owner is active.
            superuser=owner is not None and owner.is_superuser and owner.is_active,
            allowed=frozenset(allowed),
            reader=actor.owner_id or 0,
            agent=actor,
        )
    if not is_active_person(actor):
        return NOBODY
    return Subject(
        groups=frozenset(group_names(actor)),
        superuser=bool(actor.is_superuser),
        allowed=frozenset(RIGHTS),
        reader=int(actor.pk),
    )


def is_active_person(user: Any) -> bool:
    return (
        user is not None
        and getattr(user, "is_authenticated", False)
        and getattr(user, "is_active", False)
        and isinstance(user, User)
    )


def is_admin(actor: Any) -> bool:
    """Whether `actor` is an admin: an active person who is a superuser (an agent never is,
    whoever owns it). The one statement of it."""
    return is_active_person(actor) and bool(actor.is_superuser)


def admins() -> QuerySet[User]:
    """`is_admin` as a query of people: the active superusers."""
    return User.objects.filter(is_superuser=True, is_active=True)


def _holds(groups: frozenset[str], holders: frozenset[str] | None) -> bool:
    return holders is None or bool(groups & holders)


def grants_give(subject: Subject, right: str, access: Access) -> bool:
    """Whether the grants at `access` give `subject` `right` (reading included)."""
    if right not in subject.allowed:
        return False
    if subject.superuser:
        return True
    if not _holds(subject.groups, access.groups(READ)):
        return False
    return right == READ or _holds(subject.groups, access.groups(right))


def _check_right(right: str) -> None:
    if right not in RIGHTS:
        raise ValueError(f"unknown right {right!r}; the rights are {', '.join(RIGHTS)}")


# --- one page: can, and the refusal sentence ------------------------------------------------


def can(actor: Any, right: str, page: Page | None) -> bool:
    """Whether `actor` (a person or an agent) holds `right` on `page` (None: at the top
    level, for a new top-level page): the module's rule, a review workflow included."""
    _check_right(right)
    subject = subject_of(actor)
    access = access_at(page)
    if right == PUBLISH and access.workflow_path is not None:
        return False  # where a workflow applies, every change is a proposal
    return grants_give(subject, right, access)


def holds(actor: Any, right: str, page: Page | None) -> bool:
    """`can`, the grants alone: whether a workflow applies aside. For what has no proposal to
    go through (archiving, attachments, the order of pages), a section's publishers act."""
    _check_right(right)
    return grants_give(subject_of(actor), right, access_at(page))


def refusal(actor: Any, right: str, page: Page | None, *, grants_only: bool = False) -> str | None:
    """Why `actor` may not use `right` on `page` (None when it may), saying what to do: the
    one wording every door shows. `grants_only`: as `holds`, a workflow aside."""
    _check_right(right)
    subject = subject_of(actor)
    access = access_at(page)
    if right == PUBLISH and not grants_only and access.workflow_path is not None:
        return (
            f"the “{access.workflow_name}” review workflow applies here, so every change is "
            "reviewed, an editor's too; submit a proposal instead."
        )
    if grants_give(subject, right, access):
        return None
    if subject.agent is not None:
        return _agent_refusal(subject, right, access)
    if right not in subject.allowed:
        return kind_refusal(actor, right)
    if not _holds(subject.groups, access.groups(READ)):
        return "you may not read this page; ask an admin if you need to."
    instead = "ask one of them if it needs doing." if grants_only else _INSTEAD[right]
    return _members_only(right, access, instead=instead)


# What a person refused a right is told to do instead.
_INSTEAD = {
    READ: "ask an admin if you need to.",
    PROPOSE: "ask an admin if you need to.",
    PUBLISH: "submit a proposal instead.",
    DECIDE: "ask one of them to decide it.",
}
_DOING = {
    READ: "read this page",
    PROPOSE: "propose changes here",
    PUBLISH: "publish here without review",
    DECIDE: "decide proposals here",
}


def holders_of(page: Page | None, *rights: str) -> str:
    """The groups holding any of `rights` at `page`, named for a refusal ("Editors, Reviewers")."""
    access = access_at(page)
    names = {group for right in rights for group in access.groups(right) or ()}
    return ", ".join(sorted(names)) or "nobody"


def _who(right: str, access: Access) -> str:
    return ", ".join(sorted(access.groups(right) or ())) or "nobody"


def _members_only(right: str, access: Access, *, instead: str) -> str:
    return f"only members of {_who(right, access)} can {_DOING[right]}; {instead}"


def kind_refusal(actor: Any, right: str) -> str | None:
    """Why `actor` may not use `right` anywhere, whatever the page (None: it may somewhere):
    nobody signed in, a revoked agent, an agent's kind or flags."""
    _check_right(right)
    subject = subject_of(actor)
    if right in subject.allowed:
        return None
    if subject.agent is None:
        return f"log in to {_DOING[right].removesuffix(' here').removesuffix(' this page')}."
    if not subject.agent.is_active:
        return "this agent is revoked; ask an admin for a new token."
    if right == PUBLISH:
        return "agents propose changes; a reviewer decides them."
    if right == DECIDE:
        return "only people can approve or reject proposals."
    return "this agent may read pages but not propose changes."


def _agent_refusal(subject: Subject, right: str, access: Access) -> str:
    kind = kind_refusal(subject.agent, right)
    if kind is not None:
        return kind
    needed = READ if not _holds(subject.groups, access.groups(READ)) else right
    who = _who(needed, access)
    owner = subject.owner
    if owner is None:
        return (
            "this agent has no owner, so it holds only what no grant restricts, and only "
            f"members of {who} can {_DOING[needed]}; ask an admin to give it an owner in {who}."
        )
    return (
        f"this agent acts for its owner ({owner.username}), who may not {_DOING[needed]}: only "
        f"members of {who} can; ask an admin to add {owner.username} to {who}, or to give "
        "this agent an owner who is in it."
    )


def publish_refusal(user: Any, page: Page | None) -> str | None:
    """Why `user` may not change `page` without review (None when they may)."""
    return refusal(user, PUBLISH, page)


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


def group_holds(group: str, right: str, access: Access) -> bool:
    """Whether the group `group` itself, as a grantee, holds `right` where `access` applies:
    what a group's chat may be told (its members beyond the grant read the chat too)."""
    names = frozenset({group})
    return _holds(names, access.groups(READ)) and _holds(names, access.groups(right))


# --- which pages: the queryset form, and its SQL -------------------------------------------


def pages_where(actor: Any, right: str, *, grants_only: bool = False) -> QuerySet[Page]:
    """The pages (live or not, archived or not) on which `actor` holds `right`: `can` as one
    query of pages, its SQL `held_sql` (the reader's read rule is also wiki.scope's);
    `grants_only`: `holds`, a workflow aside."""
    _check_right(right)
    subject = subject_of(actor)
    if right not in subject.allowed:
        return Page.objects.none()
    return Page.objects.filter(_Held(subject.reader, right, grants_only=grants_only))


def held_sql(
    key: str, reader: str, right: str, vendor: str, *, grants_only: bool = False
) -> tuple[str, list[Any]]:
    """The condition that the person whose pk the SQL expression `reader` gives (0: nobody's
    groups) holds `right` on the row whose tree key is `key`, by the grants (and, for
    publish, no workflow on or above it): the rule of `can` in SQL. For each right needed
    (read, and the right), the nearest page on the row's path carrying a grant of it must
    name one of the reader's groups, or no page does and the default holds. `grants_only`:
    the grants alone, a workflow aside (`holds`)."""
    vendor_key = tree_key_sql("{alias}", vendor)
    after = "chr(2)" if vendor == "postgresql" else "char(2)"

    def covering(alias: str) -> str:
        root = vendor_key.replace("{alias}", alias)
        return f"{key} >= {root} AND {key} < {root} || {after}"

    params: list[Any] = []

    def nearest(needed: str) -> str:
        granted = (
            f"SELECT 1 FROM wiki_pagegrant g_{needed} INNER JOIN wiki_page p_{needed} "  # noqa: S608
            f"ON p_{needed}.id = g_{needed}.page_id WHERE g_{needed}.{needed} "
            f"AND {covering(f'p_{needed}')}"
        )
        deeper = (
            f"SELECT 1 FROM wiki_pagegrant d_{needed} INNER JOIN wiki_page dp_{needed} "  # noqa: S608
            f"ON dp_{needed}.id = d_{needed}.page_id WHERE d_{needed}.{needed} "
            f"AND {covering(f'dp_{needed}')} "
            f"AND length(dp_{needed}.path) > length(p_{needed}.path)"
        )
        mine = (
            f"{granted} AND EXISTS (SELECT 1 FROM auth_user_groups m_{needed} WHERE "  # noqa: S608
            f"m_{needed}.group_id = g_{needed}.group_id AND m_{needed}.user_id = {reader}) "
            f"AND NOT EXISTS ({deeper})"
        )
        default = DEFAULT_HOLDERS[needed]
        if default is None:
            by_default = "1 = 1"
        else:
            by_default = (
                "EXISTS (SELECT 1 FROM auth_user_groups dm INNER JOIN auth_group dg "  # noqa: S608
                f"ON dg.id = dm.group_id WHERE dm.user_id = {reader} AND dg.name = %s)"
            )
            params.append(default)
        return f"((NOT EXISTS ({granted}) AND {by_default}) OR EXISTS ({mine}))"

    superuser = (
        f"EXISTS (SELECT 1 FROM auth_user su WHERE su.id = {reader} "  # noqa: S608
        "AND su.is_superuser AND su.is_active)"
    )
    rule = nearest(READ) if right == READ else f"{nearest(READ)} AND {nearest(right)}"
    sql = f"({superuser} OR ({rule}))"
    if right == PUBLISH and not grants_only:
        sql += (
            " AND NOT EXISTS (SELECT 1 FROM reviews_workflowassignment wa INNER JOIN "  # noqa: S608
            f"wiki_page wp ON wp.id = wa.page_id WHERE {covering('wp')})"
        )
    return sql, params


class _Held(Expression):
    """`held_sql` as an ORM condition on the queryset's own page row."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, reader: int, right: str, *, grants_only: bool = False) -> None:
        super().__init__()
        self.reader, self.right, self.grants_only = int(reader), right, grants_only
        self.path: Any = F("path")

    def get_source_expressions(self) -> list[Any]:
        return [self.path]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        (self.path,) = exprs

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        path_sql, path_params = compiler.compile(self.path)
        assert not path_params
        key = TREE_KEY_SQL[connection.vendor].format(path=path_sql)
        return held_sql(
            key, str(self.reader), self.right, connection.vendor, grants_only=self.grants_only
        )


# --- who: the users form, for many pages at once -------------------------------------------


def people_in(
    groups: Iterable[str], *, among: Iterable[int] | None = None, everyone: bool = False
) -> dict[int, Subject]:
    """The active people in any of `groups` and every active admin (or, with `among`, those
    of these pks; `everyone`: every active person), each as the Subject the rule asks about:
    one query."""
    people = User.objects.filter(is_active=True)
    if among is not None:
        people = people.filter(pk__in=list(among))
    elif not everyone:
        people = people.filter(Q(is_superuser=True) | Q(groups__name__in=set(groups)))
    found: dict[int, tuple[set[str], bool]] = {}
    for pk, group, superuser in people.values_list("pk", "groups__name", "is_superuser").order_by():
        names, _ = found.setdefault(pk, (set(), superuser))
        if group is not None:
            names.add(group)
    return {
        pk: Subject(frozenset(names), superuser, frozenset(RIGHTS), pk)
        for pk, (names, superuser) in found.items()
    }


def people_holding(
    right: str, pages: Sequence[Page], *, among: Iterable[int] | None = None
) -> dict[int, set[int]]:
    """For each page (by pk), the active people (pks) who hold `right` there: `can` asked of
    them all in two queries whatever the number of pages and people (the grants above the
    pages, and the people with their groups). Where a right is every active person's, pass
    `among` (the people in question), or every active person is loaded."""
    _check_right(right)
    if not pages:
        return {}
    accesses = accesses_at(pages)
    needed = [access.groups(held) for access in accesses.values() for held in {READ, right}]
    named = {group for groups in needed for group in groups or ()}
    everyone = any(groups is None for groups in needed)
    people = people_in(named, among=among, everyone=everyone)
    found: dict[int, set[int]] = {}
    for page in pages:
        access = accesses[page.path]
        if right == PUBLISH and access.workflow_path is not None:
            found[page.pk] = set()
            continue
        found[page.pk] = {pk for pk, person in people.items() if grants_give(person, right, access)}
    return found


def people_with(right: str, page: Page) -> QuerySet[User]:
    """The active people who hold `right` on `page` (`can` as one query of users)."""
    _check_right(right)
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
    if not is_admin(actor):
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
