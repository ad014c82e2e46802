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
from dataclasses import dataclass
from typing import Any

from agents.models import Agent
from agents.selectors import SetRow, page_set_rows
from wiki.errors import InvalidArgument, NotFound

PAGE_SIZE = 200
# Every answer stays under 100,000 characters of pretty JSON; the rest is the envelope.
CHARS_MAX = 98_000
PAGE_ID_PREFIX = "pg_"


@dataclass(frozen=True)
class BrowsePage:
    """The entries to return, and where the agent's set stands around them."""

    entries: list[dict[str, Any]]
    total: int
    next_cursor: str | None
    paged: bool  # False: the whole set, in today's unpaged shape


def entry_json(row: SetRow) -> dict[str, Any]:
    return {
        "pageId": row.public_id,
        "title": row.title,
        "path": row.path,
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
    rows = page_set_rows(agent)
    whole_set = len(rows)
    if under:
        rows = _under(rows, under)
    if whole_set <= PAGE_SIZE and not under and position is None:
        entries = [entry_json(row) for row in rows]
        if _size(entries) <= CHARS_MAX:
            return BrowsePage(entries, len(rows), None, paged=False)
    # Always-include entries first; sorted() is stable, so the curated order stays within.
    rows = sorted(rows, key=lambda row: not row.entry.always_include)
    start = _start(rows, position) if position is not None else 0
    entries, size = [], 0
    for row in rows[start : start + PAGE_SIZE]:
        entry = entry_json(row)
        size += _size([entry])
        if entries and size > CHARS_MAX:
            break
        entries.append(entry)
    end = start + len(entries)
    next_cursor = (
        _encode_cursor(after=rows[end - 1].public_id, offset=end, under=under or "")
        if end < len(rows)
        else None
    )
    return BrowsePage(entries, len(rows), next_cursor, paged=True)


def _under(rows: list[SetRow], under: str) -> list[SetRow]:
    """The rows of the subtree that `under` names: a page id, or a path (prefix of segments)."""
    under = under.strip()
    if under.startswith(PAGE_ID_PREFIX):
        root = next((row for row in rows if row.public_id == under), None)
        if root is None:
            raise NotFound(
                f"page {under} is not among the pages you can browse. Call browse without "
                "under to list them, or pass a path such as 'tools/slack'."
            )
        prefix = root.path
    else:
        prefix = under.strip("/")
    inside = [row for row in rows if row.path == prefix or row.path.startswith(prefix + "/")]
    if not inside:
        raise NotFound(
            f"no page you can browse has the path {prefix!r} or lies under it. Paths look "
            "like 'tools/slack'; call browse without under to see them, or search_pages."
        )
    return inside


def _size(entries: list[dict[str, Any]]) -> int:
    # The entries as they appear indented in the pretty-printed answer, with their commas.
    text = json.dumps(entries, indent=2, ensure_ascii=False)
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
