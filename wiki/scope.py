"""What a reader may see, stated once: the `Scope` that search, browse, the picker, link
rendering and every page read take.

Two rules live here and nowhere else:

- readable: a page can be read when it went live and is not archived (`READABLE`, and the
  same as SQL in `READABLE_SQL`). Archiving a page archives the pages under it with it
  (wiki.services.page_archive), so the rule needs no walk up the tree.
- coverage: a root covers its page and everything under it, that is the pages whose tree
  key lies in `subtree_range(root path)` (`covers` says the same in Python).

A Scope is built by wiki/ for a person (`person_scope`: every readable page) and by agents/
for an agent (`agents.selectors.agent_scope`: the roots are its page-set entries, or
everything for an all-pages agent). From one Scope come:

- `scope.q()`: the ORM filter, readable and covered, for Page querysets;
- `scope.sql(alias)`: the same as an SQL condition on a `wiki_page` row, with its parameters;
- `scope.ranges()`: the tree-key ranges [low, high) it covers, in tree order, narrowed to
  `under` (an index range each on `page_readable_tree_key`); `scope.keys()`: the roots that
  have no children, covered by primary key instead (a list of keys the planner counts right);
- `scope.covers(path)`: the same coverage in Python, for rows already read;
- `scope.shown(path, hidden_prefix)` / `root_path()` / `root_path_sql()`: a path as the
  reader sees it, starting at its outermost root (nothing above its own entry shows) or below
  the deepest page on it that the reader's read grants hide, whichever is deeper;
  `hidden_prefix()` / `hidden_prefix_sql()` give that second start for each row, in the
  statement that reads the row (see `hidden_prefix_sql`, the module's function).

`ranges()` lists "" to a key above every key for everything; an empty range ("", "") is a
root outside `under`. Search and browse read the ranges from the index on the tree key
(`tree_key_sql`), keys by primary key.

A Scope whose roots are not loaded (`roots_sql`: a query of the roots' paths) gives the same
SQL as a subquery, for a page read that must cost one query whatever the set's size.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, NamedTuple

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BooleanField, Expression, F, IntegerField, Q, TextField, Value
from django.db.models.sql.compiler import SQLCompiler

from config.postgresql.types import IntArray, int_array

# The one statement of "this page can be read": it went live and is not archived.
READABLE = Q(archived=False, live_version__isnull=False)
# READABLE as SQL; `{p}` is the column prefix ("p." or none).
READABLE_SQL = "{p}live_version_id IS NOT NULL AND NOT {p}archived"


def is_readable(archived: bool, live_version_id: int | None) -> bool:
    """READABLE for a row already read."""
    return not archived and live_version_id is not None


# Tree order is the order of the paths' segment lists: comparing paths byte by byte with a
# character below every other one (never in a path) for "/" gives it, so a parent sorts
# right before its subtree and a subtree is one key range. The partial index
# page_readable_tree_key (migration 0009) holds this key for readable pages.
TREE_KEY_SQL = {
    "postgresql": "replace({path}, '/', chr(1)) COLLATE \"C\"",
    "sqlite": "replace({path}, '/', char(1))",
}
TREE_KEY_SEPARATOR = "\x01"
# Past every key: a subtree's range ends at its key followed by this (above the separator).
_AFTER_SUBTREE = "\x02"
# The root that covers every page (an all-pages agent's entry), and a key above all keys.
EVERY_PAGE = ""
_LAST_KEY = "\U0010ffff"
_AFTER_SUBTREE_SQL = {"postgresql": "chr(2)", "sqlite": "char(2)"}

# Past this many roots the ranges go into the SQL as one array parameter, not spelled out:
# a long OR exceeds SQLite's expression depth limit.
SPELLED_OUT_MAX = 100


def tree_key(path: str) -> str:
    """A path's tree-order key, as TREE_KEY_SQL computes it in the database."""
    return path.replace("/", TREE_KEY_SEPARATOR)


def placed_key(path: str, positions: Mapping[str, int]) -> list[tuple[int, str]]:
    """The tree order with each page's siblings in their places (`Page.position`, by path in
    `positions`; 0 for a page not in it), then by slug: a parent before its subtree."""
    parts = path.split("/")
    return [
        (positions.get("/".join(parts[: depth + 1]), 0), part) for depth, part in enumerate(parts)
    ]


def subtree_range(path: str) -> tuple[str, str]:
    """The keys [low, high) of the page at `path` and everything under it: what a root
    covers. The root EVERY_PAGE covers every key."""
    if path == EVERY_PAGE:
        return "", _LAST_KEY
    key = tree_key(path)
    return key, key + _AFTER_SUBTREE


def covers(root: str, path: str) -> bool:
    """Whether the root at path `root` covers the page at `path`: `subtree_range` in Python."""
    low, high = subtree_range(root)
    return low <= tree_key(path) < high


def nearest_root(path: str, roots: dict[str, Any]) -> Any:
    """The value of the root nearest above `path` (the page's own first) among `roots` (by
    path), or None: the root whose use-when lines a page carries."""
    cut = len(path)
    while cut > 0:
        if path[:cut] in roots:
            return roots[path[:cut]]
        cut = path.rfind("/", 0, cut)
    return roots.get(EVERY_PAGE)


def shown_path(path: str, root: str, hidden_prefix: int = 0) -> str:
    """`path` as a reader whose outermost root covering it is at `root` sees it: from the
    root's own name down, so that nothing above the root shows, and without its first
    `hidden_prefix` characters, which name pages hidden from the reader (`hidden_prefix_sql`)."""
    start = root.rfind("/") + 1 if root != EVERY_PAGE else 0
    return path[max(start, hidden_prefix or 0) :]


def is_top_shown(shown: str) -> bool:
    """Whether a page whose path is shown as `shown` is the highest its reader may see on its
    path: its parent is outside their set or hidden from them, so not named (parentId null)."""
    return "/" not in shown


def tree_key_sql(alias: str = "p", vendor: str | None = None) -> str:
    """The tree key of the `wiki_page` row `alias` in SQL (the expression the index holds)."""
    return TREE_KEY_SQL[vendor or connection.vendor].format(path=_column(alias, "path"))


def _column(alias: str, name: str) -> str:
    return f"{alias}.{name}" if alias else name


def readable_sql(alias: str = "p") -> str:
    return READABLE_SQL.format(p=f"{alias}." if alias else "")


class Root(NamedTuple):
    """A page a Scope covers with everything under it."""

    page_id: int | None  # None for EVERY_PAGE
    path: str
    # False: known to have no page under it, so it is covered by key alone.
    has_children: bool = True


@dataclass(frozen=True)
class Scope:
    """The pages one reader may see: readable, and covered by one of `roots` (or by none
    but `everything`), narrowed to the subtree at `under` when given.

    `roots_sql` stands for roots not loaded: an SQL query (and its parameters) of the
    roots' paths; such a Scope gives `sql()` and `q()` only.
    """

    roots: tuple[Root, ...] = ()
    everything: bool = False
    under: tuple[str, ...] | None = None
    roots_sql: tuple[str, tuple[Any, ...]] | None = field(default=None, compare=False)
    # The person whose read grants (wiki.models.PageGrant) restrict the Scope: a person's own
    # pk, an agent's owner's (0: no one's, the sections nobody restricted); None: no grant
    # restricts it (a superuser). See `hidden_sql` (the module's function).
    reader: int | None = None

    # --- building --------------------------------------------------------------------------

    @classmethod
    def of(
        cls,
        roots: Iterable[Root],
        *,
        under: tuple[str, ...] | None = None,
        reader: int | None = None,
    ) -> Scope:
        kept = tuple(roots)
        everything = any(root.path == EVERY_PAGE for root in kept)
        return cls(
            roots=() if everything else kept, everything=everything, under=under, reader=reader
        )

    def read_by(self, reader: int | None) -> Scope:
        """The same Scope, restricted to what the person `reader` may read (None: no one)."""
        return self if reader == self.reader else replace(self, reader=reader)

    @property
    def unrestricted(self) -> bool:
        """Every readable page, with no root, subtree or read grant narrowing it."""
        return self.everything and self.under is None and self.reader is None

    def narrowed(self, under: tuple[str, ...]) -> Scope:
        """The same Scope, only the subtrees at the paths `under` (none: nothing)."""
        return replace(self, under=tuple(path.strip("/") for path in under))

    @property
    def is_empty(self) -> bool:
        return not self.everything and not self.roots and self.roots_sql is None

    # --- in Python ---------------------------------------------------------------------------

    def covers(self, path: str) -> bool:
        """Whether a page at `path` lies in the Scope (readability aside)."""
        assert self.roots_sql is None, "a Scope of roots not loaded answers in SQL only"
        if self.under is not None and not any(covers(under, path) for under in self.under):
            return False
        return self.everything or any(covers(root.path, path) for root in self.roots)

    def root_of(self, path: str) -> str:
        """The path of the outermost root covering `path` (EVERY_PAGE for everything)."""
        assert self.roots_sql is None, "a Scope of roots not loaded answers in SQL only"
        if self.everything:
            return EVERY_PAGE
        # The shortest of the path's prefixes that is a root (a path's own first).
        cut = path.find("/")
        while cut != -1:
            if path[:cut] in self._root_paths:
                return path[:cut]
            cut = path.find("/", cut + 1)
        return path

    @cached_property
    def _root_paths(self) -> frozenset[str]:
        return frozenset(root.path for root in self.roots)

    def shown(self, path: str, hidden_prefix: int = 0) -> str:
        """`path` as this reader sees it: it starts at the reader's own root, or below the
        deepest page on it hidden from them (`hidden_prefix`, from `hidden_prefix_sql`)."""
        return shown_path(path, self.root_of(path), hidden_prefix)

    def real_paths(self, shown: str) -> list[str]:
        """The paths of the covered pages a reader names `shown` (a path as `shown` gives it;
        two roots of the same name make it ambiguous, so there may be several)."""
        shown = shown.strip().strip("/")
        if self.everything:
            return [shown]
        found = []
        for root in self.roots:
            candidate = root.path[: root.path.rfind("/") + 1] + shown
            if covers(root.path, candidate):
                found.append(candidate)
        return list(dict.fromkeys(found))

    def keys(self) -> list[int]:
        """Primary keys of the roots with no pages under them (each covers itself only)."""
        return [root.page_id for root in self.roots if not root.has_children and root.page_id]

    @cached_property
    def keys_array(self) -> IntArray:
        """`keys()` as a PostgreSQL parameter made once per Scope (a scope an agent's kept
        copy holds is sent with every search; see config.postgresql.types)."""
        return int_array(self.keys())

    def ranges(self, roots: Sequence[Root] | None = None) -> list[tuple[str, str]]:
        """The tree-key ranges of `roots` (default: the roots with children, or everything),
        each narrowed to `under`; a root outside `under` gives an empty range ("", "")."""
        if roots is None:
            if self.everything:
                roots = [Root(None, EVERY_PAGE)]
            else:
                roots = [root for root in self.roots if root.has_children]
        ranges = [subtree_range(root.path) for root in roots]
        if self.under is None:
            return ranges
        # Two subtrees are nested or apart, so their intersection is one of them or empty;
        # a root meets at most one of `under`'s disjoint subtrees unless roots are nested.
        narrowed = []
        for lo, hi in ranges:
            met = [
                (max(lo, low), min(hi, high))
                for low, high in map(subtree_range, self.under)
                if lo < high and low < hi
            ]
            narrowed.append(met[0] if met else ("", ""))
        return narrowed

    # --- in SQL ------------------------------------------------------------------------------

    def sql(self, alias: str = "p") -> tuple[str, list[Any]]:
        """An SQL condition true for the readable, covered rows of `wiki_page` `alias`."""
        vendor = connection.vendor
        return self._sql(tree_key_sql(alias, vendor), _column(alias, "id"), alias, vendor)

    def q(self, *, readable: bool = True) -> Q:
        """The ORM filter of the readable, covered pages (`readable=False`: covered only)."""
        covered = Q() if self.unrestricted else Q(_InScope(self))
        return READABLE & covered if readable else covered

    def root_path_sql(self, alias: str = "p") -> tuple[str, list[Any]]:
        """`root_path` in SQL, for the `wiki_page` row `alias`: NULL exactly when the Scope
        does not cover the row, so it is the coverage test too (readability aside)."""
        return self._root_path_sql(tree_key_sql(alias), _column(alias, "id"), connection.vendor)

    def _root_path_sql(self, key: str, pk: str, vendor: str) -> tuple[str, list[Any]]:
        if self.everything:
            sql, params = "%s", [EVERY_PAGE]
        else:
            assert self.roots_sql is not None, "a Scope of loaded roots has `root_of`"
            covering, params = self._covering_roots_sql(key, vendor)
            # The roots covering a page lie on its path, each a prefix of the next: the
            # outermost is the smallest (an aggregate, cheaper to plan than a sort).
            sql = f"(SELECT min(scope_root.path) {covering})"
        if self.reader is None:
            return sql, params
        return f"(CASE WHEN {self.not_hidden_sql(key, vendor)} THEN {sql} END)", params

    def not_hidden_sql(self, key: str, vendor: str | None = None) -> str:
        """The condition that the row whose tree key is `key` is not hidden from the reader
        by their read grants ("" without a reader). See `hidden_sql` for the rule."""
        if self.reader is None:
            return ""
        return f"NOT {hidden_sql(key, str(int(self.reader)), vendor or connection.vendor)}"

    def visible_sql(self, alias: str = "p", vendor: str | None = None) -> str:
        """`readable_sql` and `not_hidden_sql` together, for SQL written by hand."""
        not_hidden = self.not_hidden_sql(tree_key_sql(alias, vendor), vendor)
        return readable_sql(alias) + (f" AND {not_hidden}" if not_hidden else "")

    def visible_page_sql(self, page_id: str, vendor: str | None = None) -> str:
        """The condition that the page whose id the SQL expression `page_id` gives (a search
        document's, say) is not hidden from the reader ("" without a reader): one lookup of
        the page by its key."""
        if self.reader is None:
            return ""
        vendor = vendor or connection.vendor
        return (
            f"EXISTS (SELECT 1 FROM wiki_page shown WHERE shown.id = {page_id} AND "  # noqa: S608
            f"{self.not_hidden_sql(tree_key_sql('shown', vendor), vendor)})"
        )

    def root_path(self) -> Expression:
        """For a Page queryset: the path of the outermost root covering the row (NULL when
        none does), to show its path with `shown_path`."""
        return _RootPath(self)

    def hidden_prefix_sql(self, alias: str = "p", vendor: str | None = None) -> str:
        """How many characters at the start of the path of the `wiki_page` row `alias` name
        pages hidden from the reader (see `hidden_prefix_sql`, the module's function); "0"
        when no read grant can hide a page above one they read (no reader, or nobody's)."""
        if not self.reader:
            return "0"
        vendor = vendor or connection.vendor
        return hidden_prefix_sql(tree_key_sql(alias, vendor), str(int(self.reader)), vendor)

    def hidden_prefix(self, path: str = "path") -> Expression:
        """`hidden_prefix_sql` for a queryset's rows, whose page's path is the field `path`
        ("page__path" for versions), to show it with `shown`: no query of its own."""
        if not self.reader:
            return Value(0, output_field=IntegerField())
        return _HiddenPrefix(self, path)

    def named(self, shown: str) -> Q:
        """The pages this reader might be shown as `shown` (a path as `shown` gives it), as a
        filter of Page rows: under one of its roots, or right under a page hidden from them.
        Each row found is theirs when `shown(path, hidden_prefix)` gives `shown` back."""
        candidates = Q(path__in=self.real_paths(shown))
        if not self.reader:
            return candidates
        return candidates | Q(_ShownUnderHidden(self, shown.strip().strip("/")))

    def under_sql(self, alias: str = "p") -> tuple[str, list[Any]]:
        """The condition of `under` alone on the row `alias` (empty when not narrowed)."""
        if self.under is None:
            return "", []
        return _under_sql(tree_key_sql(alias), self.under)

    def _sql(self, key: str, pk: str, alias: str, vendor: str) -> tuple[str, list[Any]]:
        params: list[Any] = []
        conditions = [readable_sql(alias)]
        if self.under is not None:
            under, under_params = _under_sql(key, self.under)
            conditions.append(under)
            params += under_params
        covered, covered_params = self._covered_sql(key, pk, vendor)
        if covered:
            conditions.append(covered)
            params += covered_params
        return " AND ".join(conditions), params

    def _covering_roots_sql(self, key: str, vendor: str) -> tuple[str, list[Any]]:
        """FROM and WHERE of the roots not loaded (`scope_root`) that cover the row whose tree
        key is `key`: the coverage rule in SQL, root by root."""
        assert self.roots_sql is not None
        roots, params = self.roots_sql
        root_key = TREE_KEY_SQL[vendor].format(path="scope_root.path")
        after = _AFTER_SUBTREE_SQL[vendor]
        return (
            f"FROM ({roots}) scope_root WHERE {key} >= {root_key} "
            f"AND {key} < {root_key} || {after}",
            list(params),
        )

    def _covered_sql(self, key: str, pk: str, vendor: str) -> tuple[str, list[Any]]:
        """The coverage alone, for the row whose tree key is `key` and primary key `pk`:
        the roots, and what the reader's read grants hide."""
        covered, params = self._roots_covered_sql(key, pk, vendor)
        not_hidden = self.not_hidden_sql(key, vendor)
        if not not_hidden:
            return covered, params
        return (f"{covered} AND {not_hidden}" if covered else not_hidden), params

    def _roots_covered_sql(self, key: str, pk: str, vendor: str) -> tuple[str, list[Any]]:
        if self.everything:
            return "", []
        if self.roots_sql is not None:
            covering, roots_params = self._covering_roots_sql(key, vendor)
            return f"EXISTS (SELECT 1 {covering})", roots_params
        keys, ranges = self.keys(), self.ranges()
        if not keys and not ranges:
            return "1 = 0", []
        if len(keys) + len(ranges) <= SPELLED_OUT_MAX:
            parts = [f"({key} >= %s AND {key} < %s)" for _ in ranges]
            params: list[Any] = [bound for pair in ranges for bound in pair]
            if keys:
                parts.append(f"{pk} IN ({', '.join('%s' for _ in keys)})")
                params += keys
            return "(" + " OR ".join(parts) + ")", params
        if vendor == "postgresql":
            return (
                f"({pk} = ANY(%s) OR EXISTS (SELECT 1 FROM unnest(%s::text[], "  # noqa: S608
                f"%s::text[]) r(lo, hi) WHERE {key} >= r.lo AND {key} < r.hi))",
                [self.keys_array, [lo for lo, _ in ranges], [hi for _, hi in ranges]],
            )
        return (
            f"({pk} IN (SELECT value FROM json_each(%s)) OR EXISTS (SELECT 1 FROM "  # noqa: S608
            f"json_each(%s) r WHERE {key} >= json_extract(r.value, '$[0]') "
            f"AND {key} < json_extract(r.value, '$[1]')))",
            [json.dumps(keys), json.dumps(ranges)],
        )


def _under_sql(key: str, under: tuple[str, ...]) -> tuple[str, list[Any]]:
    if not under:
        return "1 = 0", []
    parts = " OR ".join(f"({key} >= %s AND {key} < %s)" for _ in under)
    return f"({parts})", [bound for path in under for bound in subtree_range(path)]


# The read rule's two lists of tree keys, for the reader whose pk the SQL expression {reader}
# gives: the pages carrying a read grant to none of their groups ("denied"), and those carrying
# one to one of their groups ("allowed"). Neither depends on the row asked about, so each is
# worked out once per statement (grants are few), and the row is then compared in memory.
_DENIED_SQL = (
    "SELECT {aggregate} FROM wiki_pagegrant denied_grant INNER JOIN wiki_page denied_root "
    "ON denied_root.id = denied_grant.page_id WHERE denied_grant.read "
    "AND NOT EXISTS (SELECT 1 FROM auth_user superuser WHERE superuser.id = {reader} "
    "AND superuser.is_superuser AND superuser.is_active) "
    "AND NOT EXISTS (SELECT 1 FROM wiki_pagegrant own INNER JOIN auth_user_groups own_member "
    "ON own_member.group_id = own.group_id WHERE own.page_id = denied_root.id AND own.read "
    "AND own_member.user_id = {reader})"
)
_ALLOWED_SQL = (
    "SELECT {aggregate} FROM wiki_pagegrant allowed_grant INNER JOIN auth_user_groups member "
    "ON member.group_id = allowed_grant.group_id INNER JOIN wiki_page allowed_root "
    "ON allowed_root.id = allowed_grant.page_id WHERE allowed_grant.read "
    "AND member.user_id = {reader}"
)


def hidden_sql(key: str, reader: str, vendor: str) -> str:
    """The condition that the row whose tree key is `key` is hidden from the person whose pk
    the SQL expression `reader` gives (a literal pk, or a column such as "auth_user.id" to
    ask for each person of a list): the rule of wiki.permissions in SQL.

    A page is hidden when a page on its path carries a read grant to none of the reader's
    groups (a denied root) and no page between that one and the page itself (or the page)
    carries a read grant to one of them (an allowed root deeper than the denied one: below it
    on the same path, so its key is the greater). An active superuser is denied nothing."""
    after = _AFTER_SUBTREE_SQL[vendor]
    if vendor == "postgresql":
        denied = _DENIED_SQL.format(
            aggregate=f"coalesce(array_agg({tree_key_sql('denied_root', vendor)}), '{{}}')",
            reader=reader,
        )
        allowed = _ALLOWED_SQL.format(
            aggregate=f"coalesce(array_agg({tree_key_sql('allowed_root', vendor)}), '{{}}')",
            reader=reader,
        )
        # The two lists as arguments of one function (wiki migration 0021): worked out once
        # per statement, not priced again for every row; none at all costs a comparison.
        return (
            f"(cardinality(({denied})) > 0 AND quire_read_hidden({key}, ({denied}), ({allowed})))"
        )
    denied = _DENIED_SQL.format(
        aggregate=f"json_group_array({tree_key_sql('denied_root', vendor)})", reader=reader
    )
    allowed = _ALLOWED_SQL.format(
        aggregate=f"json_group_array({tree_key_sql('allowed_root', vendor)})", reader=reader
    )
    return (
        f"EXISTS (SELECT 1 FROM json_each(({denied})) AS denied "  # noqa: S608
        f"WHERE {key} >= denied.value AND {key} < denied.value || {after} "
        f"AND NOT EXISTS (SELECT 1 FROM json_each(({allowed})) AS allowed "
        f"WHERE allowed.value > denied.value AND {key} >= allowed.value "
        f"AND {key} < allowed.value || {after}))"
    )


# The pages hidden from the reader (the SQL expression {reader}: their pk) right above a page
# granted back to them: its parent, when it carries a read grant to one of their groups and
# their read grants hide its parent. A page they may read lies under no other hidden page
# than these (its nearest hidden ancestor's child on its path is visible, so granted back),
# and the path they are shown starts below the deepest of them on it. Grants are few, and so
# are these: worked out once per statement, as the denied and allowed roots are. The parents
# of the reader's granted pages are found first, from the grants (OFFSET 0 keeps PostgreSQL
# from testing every page of the table for the rule instead), then kept when hidden.
_HIDDEN_ABOVE_SQL = (
    "SELECT {aggregate} FROM (SELECT granted_above.path FROM wiki_pagegrant back_grant "
    "INNER JOIN auth_user_groups back_member ON back_member.group_id = back_grant.group_id "
    "INNER JOIN wiki_page back_root ON back_root.id = back_grant.page_id "
    "INNER JOIN wiki_page granted_above ON granted_above.id = back_root.parent_id "
    "WHERE back_grant.read AND back_member.user_id = {reader}{fence}) back_above "
    "WHERE {above_hidden}"
)
_SEPARATOR_SQL = {"postgresql": "chr(1)", "sqlite": "char(1)"}
_FENCE_SQL = {"postgresql": " OFFSET 0", "sqlite": ""}


def _hidden_above_rows(reader: str, vendor: str) -> tuple[str, str]:
    """A FROM item of the tree keys of the pages `_HIDDEN_ABOVE_SQL` lists, aliased
    `hidden_above`, and the column holding the key."""
    above_key = tree_key_sql("back_above", vendor)
    above_hidden = hidden_sql(above_key, reader, vendor)
    if vendor == "postgresql":
        keys = _HIDDEN_ABOVE_SQL.format(
            aggregate=f"coalesce(array_agg({above_key}), '{{}}')",
            reader=reader,
            above_hidden=above_hidden,
            fence=_FENCE_SQL[vendor],
        )
        return f"unnest(({keys})) AS hidden_above(key)", "hidden_above.key"
    keys = _HIDDEN_ABOVE_SQL.format(
        aggregate=f"json_group_array({above_key})",
        reader=reader,
        above_hidden=above_hidden,
        fence=_FENCE_SQL[vendor],
    )
    return f"json_each(({keys})) AS hidden_above", "hidden_above.value"


def hidden_prefix_sql(key: str, reader: str, vendor: str) -> str:
    """How many characters at the start of the path of the row whose tree key is `key` name
    pages hidden from the person whose pk the SQL expression `reader` gives: the length of
    the path of the deepest hidden page above the row, and its "/" (0 when none is). A path
    shown to that person starts after them, so that a section hidden from them is never named
    through the pages granted back inside it."""
    rows, above = _hidden_above_rows(reader, vendor)
    separator, after = _SEPARATOR_SQL[vendor], _AFTER_SUBTREE_SQL[vendor]
    return (
        f"coalesce((SELECT max(length({above})) + 1 FROM {rows} "  # noqa: S608
        f"WHERE {key} >= {above} || {separator} AND {key} < {above} || {after}), 0)"
    )


class _HiddenPrefix(Expression):
    """`Scope.hidden_prefix_sql` on a queryset's rows, whose page path is a field."""

    output_field = IntegerField()

    def __init__(self, scope: Scope, path: str) -> None:
        super().__init__()
        self.scope = scope
        self.path: Any = F(path)

    def get_source_expressions(self) -> list[Any]:
        return [self.path]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        (self.path,) = exprs

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        path_sql, params = compiler.compile(self.path)
        key = TREE_KEY_SQL[connection.vendor].format(path=path_sql)
        reader = str(int(self.scope.reader or 0))
        return hidden_prefix_sql(key, reader, connection.vendor), list(params)


class _ShownUnderHidden(_HiddenPrefix):
    """The condition that the row lies right under a page hidden from the reader (one that
    `_HIDDEN_ABOVE_SQL` lists) by the path `shown`: a path the reader is shown as `shown`."""

    output_field = BooleanField()  # type: ignore[assignment]
    conditional = True

    def __init__(self, scope: Scope, shown: str) -> None:
        super().__init__(scope, "path")
        self.shown = shown

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        path_sql, params = compiler.compile(self.path)
        key = TREE_KEY_SQL[connection.vendor].format(path=path_sql)
        rows, above = _hidden_above_rows(str(int(self.scope.reader or 0)), connection.vendor)
        return (
            f"{key} IN (SELECT {above} || %s FROM {rows})",  # noqa: S608
            [*params, TREE_KEY_SEPARATOR + tree_key(self.shown)],
        )


class _InScope(Expression):
    """`Scope.sql()` as an ORM condition on the queryset's own page row."""

    output_field = BooleanField()
    conditional = True

    def __init__(self, scope: Scope) -> None:
        super().__init__()
        self.scope = scope
        # Resolved by the query into its own columns for the page row.
        self.path: Any = F("path")
        self.pk: Any = F("pk")

    def get_source_expressions(self) -> list[Any]:
        return [self.path, self.pk]

    def set_source_expressions(self, exprs: Sequence[Any]) -> None:
        self.path, self.pk = exprs

    def _key_and_pk(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, str]:
        """The page row's tree key and primary key, as this query's SQL."""
        path_sql, _ = compiler.compile(self.path)
        pk_sql, _ = compiler.compile(self.pk)
        return TREE_KEY_SQL[connection.vendor].format(path=path_sql), pk_sql

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        key, pk_sql = self._key_and_pk(compiler, connection)
        covered, params = self.scope._covered_sql(key, pk_sql, connection.vendor)
        if self.scope.under is not None:
            under, under_params = _under_sql(key, self.scope.under)
            covered = f"{covered or '1 = 1'} AND {under}"
            params = [*params, *under_params]
        return covered or "1 = 1", params


class _RootPath(_InScope):
    output_field = TextField()  # type: ignore[assignment]
    conditional = False

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        key, pk_sql = self._key_and_pk(compiler, connection)
        return self.scope._root_path_sql(key, pk_sql, connection.vendor)


EVERYTHING = Scope(everything=True)


def person_scope(user: Any) -> Scope:
    """What a signed-in person may find and list: every readable page their read grants
    leave them (wiki.permissions; a superuser's are all). (Editors and reviewers may also
    open archived pages, to restore or decide on them: wiki.selectors.)"""
    return EVERYTHING.read_by(reader_of(user))


def reader_of(user: Any) -> int | None:
    """`Scope.reader` for `user`: None for an active superuser (no grant restricts them), 0
    for nobody signed in (the sections no grant restricts), else their pk."""
    if user is None or not getattr(user, "is_authenticated", False):
        return 0
    if not getattr(user, "is_active", False):
        return 0
    return None if getattr(user, "is_superuser", False) else int(user.pk)
