"""One page of an agent's `browse`: whole sets up to 200 pages, larger ones 200 at a time.

The set's order is the curated one of `selectors.page_set_rows`; paging keeps always-include
entries first, then cuts it into pages of at most `PAGE_SIZE` entries and `CHARS_MAX`
characters of answer. A cursor names the last page returned (and its position, should that
page have left the set meanwhile), so a continued browse neither repeats nor skips pages.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, replace
from itertools import groupby, pairwise
from typing import Any

from agents.models import Agent, PageSetEntry
from agents.selectors import SetRow, narrow_to, owner_reader, page_set_rows, set_entries
from config.replicas import read_connection
from core.errors import InvalidArgument, NotFound
from core.json_output import pretty_json
from wiki.models import Page
from wiki.scope import (
    Root,
    Scope,
    covers,
    placed_key,
    shown_path,
    tree_key,
    tree_key_sql,
)

PAGE_SIZE = 200
# browse counts at most this many pages past where the answer starts: a larger set's `total`
# is then a lower bound, said by `total_is_lower_bound` (docs/decisions.md).
COUNT_CAP = 10_000
# Every answer stays under 100,000 characters of pretty JSON; the rest is the envelope.
CHARS_MAX = 98_000


@dataclass(frozen=True)
class BrowsePage:
    """The entries to return, and where the agent's set stands around them."""

    entries: list[dict[str, Any]]
    total: int
    next_cursor: str | None
    paged: bool  # False: the whole set, in today's unpaged shape
    total_is_lower_bound: bool = False  # counting stopped: the set holds at least `total`

    def answer(self) -> dict[str, Any]:
        """browse's result: the pages, and for a paged set its total and the cursor on."""
        if not self.paged:
            return {"pages": self.entries}
        result = {"pages": self.entries, "total": self.total, "nextCursor": self.next_cursor}
        if self.total_is_lower_bound:
            result["totalIsLowerBound"] = True
        return result


def entry_json(row: SetRow) -> dict[str, Any]:
    return {
        "pageId": row.public_id,
        "title": row.title,
        "path": row.shown_path,
        "alwaysInclude": row.entry.always_include,
        "useWhen": row.entry.use_when,
    }


def browse_page(agent: Agent, *, cursor: str | None, under: str | None) -> BrowsePage:
    """The part of the agent's set that `browse(cursor, under)` answers with."""
    position = _decode_cursor(cursor) if cursor else None
    if position is not None:
        if under and under != position["under"]:
            raise InvalidArgument(
                "this cursor continues a browse of a different subtree; call browse again "
                "with the same under, or without a cursor to start over."
            )
        under = position["under"]
    entries = set_entries(agent)
    scope = Scope.of((_root(entry) for entry in entries), reader=owner_reader(agent))
    if under:
        scope = narrow_to(scope, under)
    ranked = sorted(entries, key=lambda entry: not entry.always_include)
    # Counted far enough for the window asked for (a cursor's offset plus room for pages
    # added before it meanwhile), never the whole of a large set.
    cap = COUNT_CAP if position is None else max(COUNT_CAP, position["offset"] + 2 * PAGE_SIZE)
    window = SetWindow(ranked, scope, cap=cap)
    if window.nested or (scope.under is not None and window.total == 0):
        return _browse_in_python(agent, position=position, under=under, scope=scope)
    if window.total <= PAGE_SIZE and not under and position is None:
        # A small set comes whole, in the entries' own order (always-include not first), each
        # entry's pages with siblings in their places.
        rows = window.in_order(entries).rows(0, PAGE_SIZE, placed=True)
        whole = [entry_json(row) for row in rows]
        if _size(whole) <= CHARS_MAX:
            return BrowsePage(whole, window.total, None, paged=False)
    start = 0
    if position is not None:
        start = window.position_after(position["after"], int(position["offset"]))
    rows = window.rows(start, PAGE_SIZE)
    shown = _paged(rows, start=start, total=window.total, under=under or "")
    return replace(shown, total_is_lower_bound=window.capped)


def _paged(rows: list[SetRow], *, start: int, total: int, under: str) -> BrowsePage:
    """At most PAGE_SIZE rows from `start`, cut to fit CHARS_MAX, and the cursor after them."""
    entries: list[dict[str, Any]] = []
    size = 0
    for row in rows[:PAGE_SIZE]:
        entry = entry_json(row)
        size += _size([entry])
        if entries and size > CHARS_MAX:
            break
        entries.append(entry)
    end = start + len(entries)
    next_cursor = (
        _encode_cursor(after=entries[-1]["pageId"], offset=end, under=under)
        if end < total
        else None
    )
    return BrowsePage(entries, total, next_cursor, paged=True)


def _root(entry: PageSetEntry) -> Root:
    return Root(entry.page_id, entry.page.path)


def _browse_in_python(
    agent: Agent, *, position: dict[str, Any] | None, under: str | None, scope: Scope
) -> BrowsePage:
    """The general case (entries nested in other entries' subtrees): the whole set is
    ordered here, as `page_set_rows` does for the screens."""
    rows = page_set_rows(agent)
    whole_set = len(rows)
    if under:
        rows = [row for row in rows if scope.covers(row.path)]
        if not rows:
            raise NotFound(
                f"no page you can browse is {under!r} or lies under it. Give a pageId or a "
                "path as browse shows them (like 'tools/slack'); call browse without under "
                "to see them, or search_pages."
            )
    if whole_set <= PAGE_SIZE and not under and position is None:
        entries = [entry_json(row) for row in rows]
        if _size(entries) <= CHARS_MAX:
            return BrowsePage(entries, len(rows), None, paged=False)
    # Always-include entries first; sorted() is stable, so the curated order stays within.
    rows = sorted(rows, key=lambda row: not row.entry.always_include)
    start = _start(rows, position) if position is not None else 0
    return _paged(rows[start:], start=start, total=len(rows), under=under or "")


class SetWindow:
    """The agent's set in browse order, read a window at a time by index, not whole.

    For entries none of which lies inside another's subtree (the usual set), every page
    belongs to exactly one entry, so the order is: entries by rank, each one's pages in
    tree order. Two queries whatever the set's size: the pages per entry (counted by index
    ranges, each up to `cap` + 1: enough to place any window that ends by `cap`), then the
    window's rows, entry by entry. `capped`: some entry holds more than was counted.
    """

    def __init__(
        self,
        ranked: list[PageSetEntry],
        scope: Scope,
        counts: list[int] | None = None,
        *,
        cap: int = COUNT_CAP,
    ) -> None:
        self.entries = ranked
        self.scope = scope
        self.cap = cap
        paths = sorted({entry.page.path for entry in ranked}, key=tree_key)
        # In tree order a root's subtree follows it, so a nested entry follows the one above.
        self.nested = any(covers(a, b) for a, b in pairwise(paths))
        if counts is None:
            counts = [] if self.nested or not ranked else self._counts()
        self.counts = counts
        self.total = sum(self.counts)
        self.capped = any(count > cap for count in self.counts)

    def in_order(self, entries: list[PageSetEntry]) -> SetWindow:
        """The same set with its entries in another order (no query)."""
        count_of = {entry.pk: count for entry, count in zip(self.entries, self.counts, strict=True)}
        counts = [count_of[entry.pk] for entry in entries]
        return SetWindow(entries, self.scope, counts, cap=self.cap)

    def _ranges(self, entries: list[PageSetEntry]) -> list[tuple[str, str]]:
        """Each entry's tree-key range, narrowed to the scope's `under` (empty outside it)."""
        return self.scope.ranges([_root(entry) for entry in entries])

    def _counts(self) -> list[int]:
        # Each entry is one range of the readable pages' tree-key index: counted from it.
        key, readable = tree_key_sql("p"), self.scope.visible_sql("p")
        ranges = self._ranges(self.entries)
        # Up to cap + 1 index entries each: the count of a huge entry stops there.
        count = (
            f"SELECT count(*) FROM (SELECT 1 FROM wiki_page p WHERE {key} >= e.lo "  # noqa: S608
            f"AND {key} < e.hi AND {readable} LIMIT {int(self.cap) + 1}) AS counted"
        )
        connection = read_connection()
        if connection.vendor == "postgresql":
            sql = (
                f"SELECT ({count}) FROM unnest(%s::text[], %s::text[]) "  # noqa: S608
                "WITH ORDINALITY AS e(lo, hi, n) ORDER BY e.n"
            )
            params: list[Any] = [[lo for lo, _ in ranges], [hi for _, hi in ranges]]
        else:
            sql = (
                f"SELECT ({count}) FROM (SELECT key AS n, "  # noqa: S608
                "json_extract(value, '$[0]') AS lo, json_extract(value, '$[1]') AS hi "
                "FROM json_each(%s)) AS e ORDER BY e.n"
            )
            params = [json.dumps(ranges)]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return [int(count) for (count,) in cursor.fetchall()]

    def rows(self, start: int, limit: int, *, placed: bool = False) -> list[SetRow]:
        """The rows at positions [start, start + limit) of the browse order (by address within
        an entry). `placed`, for a window holding whole entries: each entry's pages in tree
        order with siblings in their places (`Page.position`), read from the table."""
        spanned: list[tuple[PageSetEntry, int]] = []  # entry, rows of it to skip
        seen = 0
        for entry, count in zip(self.entries, self.counts, strict=True):
            if seen + count > start and seen < start + limit:
                spanned.append((entry, max(0, start - seen)))
            seen += count
        if not spanned:
            return []
        if read_connection().vendor != "postgresql":
            found = self._rows_sqlite(spanned, limit, placed)
        else:
            found = self._rows_postgresql(spanned, limit, placed)
        rows = [
            _row(spanned[n][0], pk, public_id, title, path, hidden_prefix)
            for n, pk, public_id, title, path, _, hidden_prefix in found
        ]
        if not placed:
            return rows
        positions = {path: position for _, _, _, _, path, position, _ in found}
        by_entry = groupby(rows, key=lambda row: row.entry.pk)
        return [
            row
            for _, group in by_entry
            for row in sorted(group, key=lambda row: placed_key(row.path, positions))
        ]

    def _rows_postgresql(
        self, spanned: list[tuple[PageSetEntry, int]], limit: int, placed: bool
    ) -> list[tuple[Any, ...]]:
        key, readable = tree_key_sql("p"), self.scope.visible_sql("p")
        hidden_prefix = self.scope.hidden_prefix_sql("p")
        # Without `placed`, the rows come from the tree-key index alone.
        position = "p.position" if placed else "0"
        ranges = self._ranges([entry for entry, _ in spanned])
        # One ordered index range per spanned entry; OFFSET 0 keeps each lateral as written.
        inner = (
            f"SELECT p.id, p.public_id, p.title, p.path, {position} AS position, "  # noqa: S608
            f"{key} AS tree_key, {hidden_prefix} AS hidden_prefix "
            f"FROM wiki_page p WHERE {key} >= e.lo AND {key} < e.hi AND {readable} "
            "ORDER BY tree_key LIMIT %s OFFSET e.skip"
        )
        sql = (
            "SELECT e.n - 1, x.id, x.public_id, x.title, x.path, x.position, "  # noqa: S608
            "x.hidden_prefix "
            "FROM unnest(%s::text[], "
            "%s::text[], %s::int[]) WITH ORDINALITY AS e(lo, hi, skip, n) "
            f"CROSS JOIN LATERAL ({inner}) x ORDER BY e.n, x.tree_key LIMIT %s"
        )
        params: list[Any] = [
            [lo for lo, _ in ranges],
            [hi for _, hi in ranges],
            [skip for _, skip in spanned],
            limit,
            limit,
        ]
        with read_connection().cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()

    def _rows_sqlite(
        self, spanned: list[tuple[PageSetEntry, int]], limit: int, placed: bool
    ) -> list[tuple[Any, ...]]:
        # SQLite has no LATERAL: one UNION ALL arm per spanned entry (a window spans few).
        key, readable = tree_key_sql("p"), self.scope.visible_sql("p")
        hidden_prefix = self.scope.hidden_prefix_sql("p")
        position = "p.position" if placed else "0"
        ranges = self._ranges([entry for entry, _ in spanned])
        arms: list[str] = []
        params: list[Any] = []
        for n, ((lo, hi), (_, skip)) in enumerate(zip(ranges, spanned, strict=True)):
            arms.append(
                f"SELECT * FROM (SELECT {n} AS n, p.id, p.public_id, p.title, p.path, "  # noqa: S608
                f"{position} AS position, {key} AS tree_key, {hidden_prefix} AS hidden_prefix "
                "FROM wiki_page p "
                f"WHERE {key} >= %s AND {key} < %s AND {readable} "
                "ORDER BY tree_key LIMIT %s OFFSET %s)"
            )
            params += [lo, hi, limit, skip]
        sql = (
            "SELECT n, id, public_id, title, path, position, hidden_prefix FROM ("  # noqa: S608
            + " UNION ALL ".join(arms)
            + ") ORDER BY n, tree_key LIMIT %s"
        )
        with read_connection().cursor() as cursor:
            cursor.execute(sql, [*params, limit])
            return cursor.fetchall()

    def position_after(self, page_id: str, offset: int) -> int:
        """Where the browse continues after `page_id`; `offset` if it left the set."""
        if offset > 0:
            before = self.rows(offset - 1, 1)
            if before and before[0].public_id == page_id:
                return offset
        path = Page.objects.filter(public_id=page_id).values_list("path", flat=True).first()
        if path is None:
            return min(offset, self.total)
        seen = 0
        for entry, count in zip(self.entries, self.counts, strict=True):
            if covers(entry.page.path, path):
                key = tree_key(path)
                earlier = sum(1 for other in self.rows(seen, count) if tree_key(other.path) <= key)
                return seen + earlier
            seen += count
        return min(offset, self.total)


def _row(
    entry: PageSetEntry, pk: int, public_id: str, title: str, path: str, hidden_prefix: int
) -> SetRow:
    # Entries of a window are not nested: each page's outermost entry is its own.
    shown = shown_path(path, entry.page.path, hidden_prefix)
    return SetRow(pk, public_id, title, path, entry, shown)


def _size(entries: list[dict[str, Any]]) -> int:
    # The entries as they appear indented in the pretty-printed answer, with their commas.
    text = pretty_json(entries)
    return len(text) + 2 * text.count("\n") + 4


def _start(rows: list[SetRow], position: dict[str, Any]) -> int:
    for index, row in enumerate(rows):
        if row.public_id == position["after"]:
            return index + 1
    return min(int(position["offset"]), len(rows))


def _encode_cursor(*, after: str, offset: int, under: str) -> str:
    raw = json.dumps({"after": after, "offset": offset, "under": under}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_cursor(cursor: str) -> dict[str, Any]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        position = json.loads(raw)
        if (
            isinstance(position, dict)
            and isinstance(position.get("after"), str)
            and isinstance(position.get("offset"), int)
            and position["offset"] >= 0
            and isinstance(position.get("under"), str)
        ):
            return position
    except (binascii.Error, ValueError, UnicodeDecodeError):
        pass
    raise InvalidArgument(
        "cursor is not one that browse gave. Pass the nextCursor of the previous browse "
        "answer unchanged, or call browse without a cursor to start from the beginning."
    )
