"""Partial edits for `edit_page`: replace texts that occur exactly once, in order.

An edit that cannot be placed is refused with how many times its oldText occurs and the
line that comes nearest, so the agent can correct it without reading the page again.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from core.errors import InvalidArgument

EDITS_MAX = 50
LINE_SHOWN_MAX = 160
LINES_LISTED_MAX = 10


def apply_edits(source: str, edits: Sequence[Any]) -> str:
    """`source` with each edit's oldText replaced by its newText, one edit after the other."""
    if not edits:
        raise InvalidArgument("edits is empty; give at least one {oldText, newText} pair.")
    if len(edits) > EDITS_MAX:
        raise InvalidArgument(
            f"edits has {len(edits)} items; at most {EDITS_MAX} fit in one call. "
            "Split them, or send the whole page with update_page."
        )
    text = source
    for number, edit in enumerate(edits, start=1):
        old, new = _pair(edit, number)
        where = _occurrences(text, old)
        if len(where) != 1:
            raise InvalidArgument(_misplaced(text, old, where, number, len(edits)))
        start = where[0]
        text = text[:start] + new + text[start + len(old) :]
    return text


def _pair(edit: Any, number: int) -> tuple[str, str]:
    old = getattr(edit, "oldText", None) if not isinstance(edit, dict) else edit.get("oldText")
    new = getattr(edit, "newText", None) if not isinstance(edit, dict) else edit.get("newText")
    if not isinstance(old, str) or not isinstance(new, str):
        raise InvalidArgument(f"edit {number} needs oldText and newText, both strings.")
    if not old:
        raise InvalidArgument(
            f"edit {number} has an empty oldText; quote the text to replace, or use "
            "append_to_page to add at the end."
        )
    return old, new


def _occurrences(text: str, old: str) -> list[int]:
    """Where `old` starts in `text`, overlapping occurrences included."""
    found, start = [], text.find(old)
    while start != -1:
        found.append(start)
        start = text.find(old, start + 1)
    return found


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _shown(line: str) -> str:
    line = line.strip()
    return line if len(line) <= LINE_SHOWN_MAX else line[:LINE_SHOWN_MAX] + "…"


def _lines_listed(numbers: list[int]) -> str:
    """Each line an oldText occurs on, once, with how often when more than once; the first
    ten lines, then how many more."""
    counted = Counter(numbers)
    shown = [
        f"{line} ({times} times)" if times > 1 else str(line)
        for line, times in list(counted.items())[:LINES_LISTED_MAX]
    ]
    more = len(counted) - len(shown)
    return ", ".join(shown) + (f" and {more} more lines ({len(counted)} in all)" if more else "")


def _misplaced(text: str, old: str, where: list[int], number: int, count: int) -> str:
    which = f"edit {number} of {count}" if count > 1 else "the edit"
    earlier = " (after the edits before it were applied)" if number > 1 else ""
    lines = text.splitlines()
    if where:
        numbers = [_line_of(text, start) for start in where]
        return (
            f"the oldText of {which} occurs {len(where)} times in the page{earlier}, at lines "
            f"{_lines_listed(numbers)}; nearest line {numbers[0]}: "
            f"{_shown(lines[numbers[0] - 1])!r}. "
            "Add some surrounding text to oldText so that it occurs exactly once. "
            "Nothing was stored."
        )
    wanted = next((line for line in old.splitlines() if line.strip()), old).strip()
    best, best_ratio = 0, -1.0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)
    for index, line in enumerate(lines):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best, best_ratio = index, ratio
    nearest = (
        f"; nearest line {best + 1}: {_shown(lines[best])!r}" if lines and best_ratio > 0 else ""
    )
    return (
        f"the oldText of {which} occurs 0 times in the page{earlier}{nearest}. "
        "Copy oldText exactly from get_page_source (spaces and line breaks count). "
        "Nothing was stored."
    )
