"""Read queries for the web UI: the page tree, a page with its surroundings, recent changes.

Each selector costs a fixed number of SQL queries whatever the size of the wiki.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Value,
    Window,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Substr

from config.replicas import read_connection
from core.errors import NotFound, QuireError
from wiki import permissions
from wiki.models import (
    SIBLING_ORDER,
    Attachment,
    FormSubmission,
    Page,
    PageQuerySet,
    Version,
    VersionStatus,
)
from wiki.roles import can_publish, can_review
from wiki.scope import EVERY_PAGE, READABLE, Scope, is_readable, person_scope, shown_path
from wiki.search import search_pages

# The sidebar never holds the whole tree: the top level, the path to the current page with
# the siblings along it, and the current page's children, each list cut at SIBLING_LIMIT.
SIBLING_LIMIT = 50
SECTION_PREVIEW = 6
CHILDREN_PER_PAGE = SIBLING_LIMIT
# When the page on the path is past the cap, its list shows this many pages on each side.
NEIGHBOURS = 10

_VISIBLE = READABLE
_HIDDEN = ~READABLE
# Lists are in the siblings' order: the place an editor gave them (wiki.services.page_reorder),
# then slug order (the title, lowercased and simplified), which the index page_sibling_order
# serves without sorting all siblings.
_ORDER = SIBLING_ORDER


@dataclass
class TreeNode:
    id: int
    public_id: str
    title: str
    slug: str
    parent_id: int | None
    position: int = 0
    # Visible pages under it, counting those lifted up from hidden pages below it.
    child_count: int = 0
    children: list[TreeNode] = field(default_factory=list)
    # The children shown start past the first one: they surround the page on the path.
    children_cut: bool = False
    # Set per request: the branch holding the current page is shown unfolded.
    open: bool = False
    current: bool = False

    @property
    def more(self) -> int:
        """Children left out of `children` by the cap."""
        return max(0, self.child_count - len(self.children))


@dataclass
class Ancestor:
    public_id: str
    title: str
    visible: bool
    # False for a page the reader's read grants hide (above a subsection granted back to
    # them): neither its title nor a link is shown.
    in_reach: bool = True


@dataclass
class PageTree:
    """The part of the tree a request shows; every list holds only live, unarchived pages.

    Archived pages and pages with no live version are left out; the visible pages under them
    are shown under the nearest visible ancestor instead, so archiving a page never hides the
    pages under it.
    """

    roots: list[TreeNode]
    ancestors: list[Ancestor]
    # Hidden pages that have children, each with its parent: what lifting needs.
    hidden: dict[int, int | None]
    # Visible children per parent (None: the top level), for the pages in view.
    counts: dict[int | None, int]
    current: TreeNode | None = None
    roots_cut: bool = False

    @property
    def root_count(self) -> int:
        return self.count_under(None)

    @property
    def more_roots(self) -> int:
        return max(0, self.root_count - len(self.roots))

    def lifted_into(self, page_id: int | None) -> list[int | None]:
        """`page_id` and the hidden pages whose visible children are shown under it."""
        return [page_id, *(h for h in self.hidden if h != page_id and self._ends_at(h, page_id))]

    def count_under(self, page_id: int | None) -> int:
        return sum(self.counts.get(source, 0) for source in self.lifted_into(page_id))

    def _ends_at(self, hidden_id: int, target: int | None) -> bool:
        parent = self.hidden[hidden_id]
        seen = {hidden_id}
        while parent != target and parent in self.hidden and parent not in seen:
            seen.add(parent)
            parent = self.hidden[parent]
        return parent == target


class _TreeRow(NamedTuple):
    """A page as the tree's first query reads it."""

    id: int
    public_id: str
    title: str
    slug: str
    path: str
    parent_id: int | None
    position: int
    archived: bool
    live_version_id: int | None
    has_children: bool
    in_reach: bool  # not hidden from the reader by their read grants

    @property
    def is_visible(self) -> bool:
        return self.in_reach and is_readable(self.archived, self.live_version_id)

    def node(self) -> TreeNode:
        return TreeNode(
            id=self.id,
            public_id=self.public_id,
            title=self.title,
            slug=self.slug,
            parent_id=self.parent_id,
            position=self.position,
        )


# The pages above the subsections granted to one of the reader's groups (the parameter: their
# pk), found by walking up the parent links from each: grants are few, and so are these.
_ABOVE_GRANTED_SQL = (
    "WITH RECURSIVE above_granted(id) AS ("
    "SELECT granted.parent_id FROM wiki_pagegrant granted_read "
    "INNER JOIN auth_user_groups member ON member.group_id = granted_read.group_id "
    "INNER JOIN wiki_page granted ON granted.id = granted_read.page_id "
    "WHERE granted_read.read AND member.user_id = %s AND granted.parent_id IS NOT NULL "
    "UNION SELECT up.parent_id FROM wiki_page up "
    "INNER JOIN above_granted ON up.id = above_granted.id WHERE up.parent_id IS NOT NULL"
    ") SELECT id FROM above_granted"
)


def _above_granted(reader: int) -> RawSQL:
    """The condition that a `wiki_page` row lies above a subsection granted to `reader`. On
    PostgreSQL the ids are one array worked out once, so the row is found by primary key
    beside the statement's other index scans (`IN (subquery)` would be checked on every
    row of the table)."""
    if connection.vendor == "postgresql":
        sql = f'"wiki_page"."id" = ANY(ARRAY({_ABOVE_GRANTED_SQL}))'
    else:
        sql = f'"wiki_page"."id" IN ({_ABOVE_GRANTED_SQL})'
    return RawSQL(sql, [reader], output_field=BooleanField())  # noqa: S611 (constant SQL)


def _ancestor_paths(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:depth]) for depth in range(1, len(parts))]


def _sort_key(node: TreeNode) -> tuple[int, str, int]:
    return (node.position, node.slug, node.id)


# A list's rows in the siblings' order, or backwards from a page (its earlier neighbours);
# each one ordered range of the index page_sibling_order, read no further than its LIMIT.
_ARM_SQL = (
    "SELECT * FROM (SELECT p.id, p.public_id, p.title, p.slug, p.parent_id, p.position "
    "FROM wiki_page p WHERE {parent} AND {visible}{bound} ORDER BY {order} LIMIT %s) AS a{n}"
)
_FORWARD = "p.position, p.slug, p.id"
_BACKWARD = "p.position DESC, p.slug DESC, p.id DESC"


def _children_lists(
    tree: PageTree, holders: dict[int | None, TreeNode | None], limit: int, reader: Scope
) -> dict[int | None, tuple[list[TreeNode], bool]]:
    """For each holder, its visible children (lifted ones included) in one query: the first
    `limit`, or, when the page on the path (the holder's value) comes later, the NEIGHBOURS
    on each side of it. The flag says the list starts past the first child."""
    visible, visible_params = reader.sql("p")
    arms: list[str] = []
    params: list[Any] = []
    owner: dict[int | None, int | None] = {}

    def arm(source: int | None, bound: str, order: str, after: list[Any], rows: int) -> None:
        parent = "p.parent_id IS NULL" if source is None else "p.parent_id = %s"
        arms.append(
            _ARM_SQL.format(parent=parent, visible=visible, bound=bound, order=order, n=len(arms))
        )
        params.extend([*([] if source is None else [source]), *visible_params, *after, rows])

    for holder, keep in holders.items():
        for source in tree.lifted_into(holder):
            owner[source] = holder
            arm(source, "", _FORWARD, [], limit)
            if keep is not None:
                at = [keep.position, keep.slug, keep.id]
                arm(source, f" AND ({_FORWARD}) < (%s, %s, %s)", _BACKWARD, at, NEIGHBOURS)
                arm(source, f" AND ({_FORWARD}) > (%s, %s, %s)", _FORWARD, at, NEIGHBOURS)
    found: dict[int | None, list[TreeNode]] = {holder: [] for holder in holders}
    if not arms:  # no holders: the home page's previews of an empty top level
        return {}
    seen: set[int] = set()
    with read_connection().cursor() as cursor:
        cursor.execute(" UNION ALL ".join(arms), params)
        for row in cursor.fetchall():
            node = TreeNode(*row)
            if node.id not in seen:  # a neighbour may be among the first ones too
                seen.add(node.id)
                found[owner[node.parent_id]].append(node)
    return {holder: _cut(nodes, holders[holder], limit) for holder, nodes in found.items()}


def _cut(nodes: list[TreeNode], keep: TreeNode | None, limit: int) -> tuple[list[TreeNode], bool]:
    ordered = _keep(sorted(nodes, key=_sort_key), keep)
    at = next((i for i, n in enumerate(ordered) if keep is not None and n.id == keep.id), 0)
    if at < limit:
        return ordered[:limit], False
    return ordered[at - NEIGHBOURS : at + NEIGHBOURS + 1], True


def _keep(nodes: list[TreeNode], keep: TreeNode | None) -> list[TreeNode]:
    """`nodes` with the page on the path in it, even when it is past the cap."""
    if keep is None:
        return nodes
    if any(n.id == keep.id for n in nodes):
        return [keep if n.id == keep.id else n for n in nodes]
    return sorted([*nodes, keep], key=_sort_key)


def page_tree(
    current: Page | None = None, *, reader: Scope, unfold_top_level: bool = False
) -> PageTree:
    """The tree around `current`, or just the top level, in three queries (four with
    `unfold_top_level`, which gives every top-level page its first SECTION_PREVIEW children
    for the home page), as the person whose Scope is `reader` (`person_scope`) may see it:
    a section their read grants hide is not in it, nor counted. Each query reads index
    ranges only (the siblings' order, the parent, archived and unpublished pages, the
    path), so its cost follows what is shown, not the size of the wiki."""
    paths = _ancestor_paths(current.path) if current is not None else []
    tree, chain, hidden_children = _tree_around(_hidden_and_path_rows(paths, reader), paths)
    path_nodes = [r.node() for r in chain if r.is_visible]
    if current is not None and is_readable(current.archived, current.live_version_id):
        tree.current = TreeNode(
            id=current.pk,
            public_id=current.public_id,
            title=current.title,
            slug=current.slug,
            parent_id=current.parent_id,
            position=current.position,
            current=True,
        )
        path_nodes.append(tree.current)
    _unfold_path(tree, path_nodes, reader)
    previews: dict[int | None, tuple[list[TreeNode], bool]] = {}
    if unfold_top_level:
        roots: dict[int | None, TreeNode | None] = dict.fromkeys(n.id for n in tree.roots)
        previews = _children_lists(tree, roots, SECTION_PREVIEW, reader)
    _count_children(tree, current, reader, hidden_children)
    for root in tree.roots:
        if root.id in previews:
            root.children = previews[root.id][0]
    return tree


def _hidden_and_path_rows(paths: list[str], reader: Scope) -> list[_TreeRow]:
    """The tree's first query: hidden pages (archived, or new and still in review: usually
    few), the ancestors of the current page, by the prefixes of its path, and the pages the
    reader's read grants hide above a subsection granted back to them (its pages are lifted
    into the hidden section's place, as under an archived page)."""
    shown = reader.q(readable=False)
    wanted = (_HIDDEN & shown) | Q(path__in=paths)
    if reader.reader:
        wanted |= Q(_above_granted(reader.reader)) & ~shown
    in_reach = ExpressionWrapper(shown, output_field=BooleanField()) if shown else Value(True)
    return [
        _TreeRow(*row)
        for row in Page.objects.annotate(
            has_children=Exists(Page.objects.filter(parent_id=OuterRef("pk"))),
            in_reach=in_reach,
        )
        .filter(wanted)
        .order_by()
        .values_list(*_TreeRow._fields)
    ]


def _tree_around(
    rows: list[_TreeRow], paths: list[str]
) -> tuple[PageTree, list[_TreeRow], Counter[int | None]]:
    """The tree with its ancestors and hidden pages set from the first query's rows; the
    rows on the path, top first; and per parent the hidden children the counts take off."""
    hidden: dict[int, int | None] = {}
    hidden_children: Counter[int | None] = Counter()
    by_path: dict[str, _TreeRow] = {}
    for row in rows:
        if not row.is_visible:
            if row.in_reach:  # counted below with the reader's pages: taken off again
                hidden_children[row.parent_id] += 1
            if row.has_children:
                hidden[row.id] = row.parent_id
        if row.path in paths:
            by_path[row.path] = row
    chain = [by_path[p] for p in paths if p in by_path]
    ancestors = [
        Ancestor(r.public_id, r.title, visible=r.is_visible)
        if r.in_reach
        else Ancestor("", "…", visible=False, in_reach=False)
        for r in chain
    ]
    tree = PageTree(roots=[], ancestors=ancestors, hidden=hidden, counts={})
    return tree, chain, hidden_children


def _unfold_path(tree: PageTree, path_nodes: list[TreeNode], reader: Scope) -> None:
    """The first children of the top level and of every page on the path, in one query;
    each unfolded list holds the next page on the path."""
    holders: dict[int | None, TreeNode | None] = {None: path_nodes[0] if path_nodes else None}
    for depth, node in enumerate(path_nodes):
        holders[node.id] = path_nodes[depth + 1] if depth + 1 < len(path_nodes) else None
    lists = _children_lists(tree, holders, SIBLING_LIMIT, reader)
    tree.roots, tree.roots_cut = lists[None]
    for node in path_nodes:
        node.open = True
        node.children, node.children_cut = lists[node.id]


def _count_children(
    tree: PageTree, current: Page | None, reader: Scope, hidden_children: Counter[int | None]
) -> None:
    """How many visible children each page in view has, and the top level in all: every
    child, counted from the parent index alone, less the hidden ones found first."""
    in_view = {n.id for n in _walk(tree.roots)}
    if current is not None:
        in_view.add(current.pk)
    counts = (
        Page.objects.filter(reader.q(readable=False))
        .filter(Q(parent__isnull=True) | Q(parent_id__in=in_view | set(tree.hidden)))
        .order_by()
        .values("parent_id")
        .annotate(n=Count("id"))
        .values_list("parent_id", "n")
    )
    tree.counts = {parent: n - hidden_children[parent] for parent, n in counts}
    for node in _walk(tree.roots):
        node.child_count = tree.count_under(node.id)


def _walk(nodes: list[TreeNode]) -> list[TreeNode]:
    found: list[TreeNode] = []
    for node in nodes:
        found.append(node)
        found.extend(_walk(node.children))
    return found


def page_children(
    page: Page, tree: PageTree, number: int, *, reader: Scope
) -> tuple[list[TreeNode], int]:
    """One page (1-based) of the visible pages under `page`, and how many there are in all
    (counted by `page_tree`); one query, none for the first page of the current page."""
    shown = tree.current
    if number <= 1 and shown is not None and shown.id == page.pk:
        if CHILDREN_PER_PAGE <= SIBLING_LIMIT and not shown.children_cut:
            return shown.children[:CHILDREN_PER_PAGE], shown.child_count
    offset = (max(1, number) - 1) * CHILDREN_PER_PAGE
    rows = (
        Page.objects.filter(
            _VISIBLE, reader.q(readable=False), parent_id__in=tree.lifted_into(page.pk)
        )
        .order_by(*_ORDER)
        .values_list("id", "public_id", "title", "slug", "parent_id", "position")[
            offset : offset + CHILDREN_PER_PAGE
        ]
    )
    children = [
        TreeNode(
            id=pk,
            public_id=public_id,
            title=title,
            slug=slug,
            parent_id=parent_id,
            position=position,
        )
        for pk, public_id, title, slug, parent_id, position in rows
    ]
    return children, tree.count_under(page.pk)


def siblings_in_order(page: Page, *, reader: Scope) -> list[Page]:
    """`page` and the pages beside it (same parent) that `reader` sees, in the tree's order:
    one query."""
    same_parent = Q(parent__isnull=True) if page.parent_id is None else Q(parent_id=page.parent_id)
    return list(
        Page.objects.filter(same_parent & ((_VISIBLE & reader.q(readable=False)) | Q(pk=page.pk)))
        .order_by(*_ORDER)
        .only("pk", "public_id", "title")
    )


PAGE_ID = re.compile(r"^pg_[a-z2-7]{8}$")


def path_shown_to(user: Any, page: Page) -> str:
    """`page`'s path as `user` is shown it (wiki.scope.shown_path): without the pages above it
    hidden from them. One query, none for a top-level page or a reader no grant restricts."""
    scope = person_scope(user)
    if "/" not in page.path or not scope.reader:
        return page.path
    hidden = (
        Page.objects.filter(pk=page.pk)
        .annotate(hidden_prefix=scope.hidden_prefix())
        .values_list("hidden_prefix", flat=True)
        .first()
    )
    return shown_path(page.path, EVERY_PAGE, hidden or 0)


def may_see_archived(user: Any) -> bool:
    """Editors restore archived pages and reviewers decide on them: they see them, with a
    banner; for everyone else an archived page does not exist."""
    return can_publish(user) or can_review(user)


def pages_readable_by(user: Any) -> PageQuerySet:
    """The pages `user` may read whole: live, and not archived (archived too for editors and
    reviewers), and not hidden by their read grants (wiki.permissions). The one rule for
    people, as agents/selectors.py has the one for agents."""
    pages = Page.objects.filter(person_scope(user).q(readable=False))
    return pages if may_see_archived(user) else pages.filter(archived=False)


def page_for_person(user: Any, public_id: str, *, live_only: bool = False) -> Page:
    """The page `public_id` as `user` may see it, with its live version and parent.

    Any logged-in person sees a live page; a page not live yet shows as "waiting for review"
    to whoever may read its proposal (`unapproved_text_readable_by`; nobody with
    `live_only`); archived pages follow `may_see_archived`. NotFound says
    what to check, and never tells a hidden page from a missing one.
    """
    if not PAGE_ID.match(public_id or ""):
        raise NotFound(f"{public_id!r} is not a page id; page ids look like pg_abcd2345.")
    pages = pages_readable_by(user)
    if live_only:
        pages = pages.filter(READABLE)
    page = (
        pages.select_related("live_version", "parent")
        # How its path is shown to them (wiki.scope.shown_path): in the same statement.
        .annotate(hidden_prefix=person_scope(user).hidden_prefix())
        .filter(public_id=public_id)
        .first()
    )
    # A page not live yet is text no reviewer approved: only for those who may read that.
    if page is None or (
        page.live_version_id is None
        and not Version.objects.filter(unapproved_text_readable_by(user), page=page).exists()
    ):
        raise NotFound(f"there is no page {public_id}; check the id in the page's address.")
    return page


def may_read_all_unapproved(user: Any) -> bool:
    """Reviewers decide proposals and editors publish: they read any text in review."""
    return can_review(user) or can_publish(user)


def unapproved_text_readable_by(user: Any) -> Q:
    """The versions of a page `user` may read: the approved ones, which were live; the text
    no reviewer approved (waiting, rejected, withdrawn) only as a reviewer, an editor, its
    author, or the owner of the agent that wrote it."""
    if may_read_all_unapproved(user):
        return Q()
    if user is None or not user.is_authenticated:
        return Q(status=VersionStatus.APPROVED)
    return Q(status=VersionStatus.APPROVED) | Q(author_user=user) | Q(author_agent__owner=user)


def pending_versions(page: Page) -> list[Version]:
    """The proposals waiting for review on `page`, oldest first, in one query."""
    return list(
        Version.objects.filter(page=page, status=VersionStatus.IN_REVIEW)
        .select_related("author_user", "author_agent")
        .only(
            "id",
            "page_id",
            "number",
            "kind",
            "title",
            "change_summary",
            "created_at",
            "base_version_id",
            "author_user__username",
            "author_agent__name",
        )
        .order_by("number")
    )


def own_pending_version(page: Page, user: Any) -> Version | None:
    return (
        Version.objects.filter(page=page, status=VersionStatus.IN_REVIEW, author_user=user)
        .select_related("base_version")
        .first()
    )


def person_by_username(username: str) -> User | None:
    return User.objects.filter(username=username).first()


def first_superuser() -> User | None:
    """The oldest active superuser: who acts for a command given no one else."""
    return User.objects.filter(is_superuser=True, is_active=True).order_by("pk").first()


def pages_from_source(prefix: str) -> dict[str, Page]:
    """Imported pages whose source path starts with `prefix`, by source path, with their
    live versions."""
    pages = Page.objects.filter(source_path__startswith=prefix).select_related("live_version")
    return {page.source_path or "": page for page in pages}


def newest_version(page: Page) -> Version:
    return Version.objects.filter(page=page).latest("number")


def pages_by_public_id(public_ids: Iterable[str]) -> dict[str, Page]:
    return Page.objects.in_bulk(list(public_ids), field_name="public_id")


def page_attachment(page: Page, attachment_id: int) -> Attachment | None:
    attachment = Attachment.objects.filter(page=page, pk=attachment_id).first()
    if attachment is not None:
        attachment.page = page
    return attachment


def page_attachments(page: Page) -> list[Attachment]:
    return list(
        Attachment.objects.filter(page=page).only(
            "id", "page_id", "name", "content_type", "size", "created_at"
        )
    )


def in_scope(reader: Scope) -> Q:
    """For a queryset of rows with a `page`: those on pages `reader` covers (readability
    aside), as a subquery; nothing to filter for an unrestricted Scope."""
    if reader.unrestricted:
        return Q()
    return Q(page_id__in=Page.objects.filter(reader.q(readable=False)).values("pk"))


def hidden_among(reader: Scope, pages: Iterable[Page | None]) -> set[int]:
    """The pks of those of `pages` that `reader` may not read (their read grants): pages a
    door names by title or id only when readable, such as an older version's parent (the
    page has moved out of a hidden section since). One query; none for an unrestricted
    reader or no page."""
    wanted = {page.pk for page in pages if page is not None}
    if not wanted or reader.unrestricted:
        return set()
    readable = Page.objects.filter(reader.q(readable=False), pk__in=wanted).values_list(
        "pk", flat=True
    )
    return wanted - set(readable)


def recent_changes(limit: int = 15, *, reader: Scope) -> QuerySet[Version]:
    """The newest versions that went live, on pages still visible to `reader`."""
    return (
        Version.objects.filter(
            in_scope(reader),
            status=VersionStatus.APPROVED,
            page__archived=False,
            decided_at__isnull=False,
        )
        .select_related("page", "author_user", "author_agent")
        # Only what the list shows: the sort then moves small rows, not every body.
        .only(
            "id",
            "page_id",
            "number",
            "change_summary",
            "decided_at",
            "author_user_id",
            "author_agent_id",
            "page__public_id",
            "page__title",
            "author_user__username",
            "author_agent__name",
        )
        .order_by("-decided_at", "-id")[:limit]
    )


def archived_pages(user: Any, limit: int = SIBLING_LIMIT) -> tuple[list[Page], int]:
    """The most recently changed archived pages `user` may restore (they hold `publish` on
    them, a workflow aside: wiki.permissions), and how many there are in all, in one query;
    each with `shown_path`, its path as they are shown it (wiki.scope)."""
    pages: list[Page] = list(
        permissions.pages_where(user, permissions.PUBLISH, grants_only=True)
        .filter(archived=True)
        .annotate(total=Window(Count("id")), hidden_prefix=person_scope(user).hidden_prefix())
        .order_by("-updated_at", "-id")
        .only("id", "public_id", "title", "path")[:limit]
    )
    for page in pages:
        page.shown_path = shown_path(page.path, EVERY_PAGE, page.hidden_prefix)  # type: ignore[attr-defined]
    return pages, (getattr(pages[0], "total", 0) if pages else 0)


def sibling_titled(
    parent: Page | None, title: str, *, other_than: Page | None = None
) -> Page | None:
    """A page (live or waiting, not archived) under `parent` already titled `title`, any case
    (`other_than` not counted: the page being renamed or moved)."""
    siblings = Page.objects.filter(archived=False, title__iexact=title.strip())
    if other_than is not None:
        siblings = siblings.exclude(pk=other_than.pk)
    return (
        siblings.filter(parent__isnull=True) if parent is None else siblings.filter(parent=parent)
    ).first()


def submitted_form(user: Any, token: str) -> FormSubmission | None:
    """The earlier save of the form with this one-time token, if it was saved."""
    if not token or not getattr(user, "is_authenticated", False):
        return None
    return FormSubmission.objects.filter(token=token, user=user).first()


# --- the page picker of the editing screens ---------------------------------------------------

PICK_LIMIT = 12
# At most this many typed words narrow the part-of-a-word match, over this many candidates.
PICK_WORDS = 5
PICK_SCAN = 200
_WORD = re.compile(r"\w+")


def pickable_pages(query: str, scope: Scope, *, limit: int = PICK_LIMIT) -> list[Page]:
    """Pages for a picker within the reader's `scope`, so the picker shows nobody a page they
    could not open: those whose title or path holds every typed word as part of one of its
    words ("revi" finds "Code reviews"), title and path prefixes first, then the wiki's search
    hits for what is left. The path is the one the reader is shown (`shown_path` on each
    page), so that nobody finds a page by the name of a section hidden from them.
    """
    shown = Substr("path", F("hidden_prefix") + 1) if scope.reader else F("path")
    live = (
        Page.objects.filter(scope.q())
        .annotate(hidden_prefix=scope.hidden_prefix(), shown_path=shown)
        .only("public_id", "title", "path")
    )
    query = query.strip()
    if not query:
        return list(live.filter(parent__isnull=True).order_by("title")[:limit])
    prefix = query.strip("/").lower()
    found: list[Page] = list(
        live.filter(Q(title__istartswith=query) | Q(shown_path__startswith=prefix)).order_by(
            "shown_path"
        )[:limit]
    )
    if len(found) < limit:
        found.extend(
            _part_matches(live, query, exclude={page.pk for page in found})[: limit - len(found)]
        )
    if len(found) < limit:
        try:
            hits = search_pages(query, scope=scope, limit=limit, semantic=False)
        except QuireError:
            hits = []
        seen = {page.pk for page in found}
        wanted = [hit.page_id for hit in hits if hit.page_id not in seen]
        by_id = live.in_bulk(wanted)
        found.extend(by_id[pk] for pk in wanted if pk in by_id)
    return found[:limit]


def _part_matches(live: QuerySet[Any], query: str, *, exclude: set[int]) -> list[Page]:
    """Pages whose title or path holds each word of `query` somewhere, those where a word of
    the title starts with it first. Titles and paths only, never bodies: the search does those."""
    words = query.lower().split()[:PICK_WORDS]
    where = Q()
    for word in words:
        where &= Q(title__icontains=word) | Q(shown_path__icontains=word)
    matching = live.filter(where).exclude(pk__in=exclude).order_by("shown_path")
    candidates: list[Page] = list(matching[:PICK_SCAN])

    def rank(page: Page) -> tuple[int, str]:
        title_words = _WORD.findall(page.title.lower())
        starts = all(any(w.startswith(word) for w in title_words) for word in words)
        return (0 if starts else 1, page.shown_path)  # type: ignore[attr-defined]

    return sorted(candidates, key=rank)
