"""Long pages for agents: a long page comes as its outline, a section or a range of lines
alone on request (a long section as its own outline, or its first lines), so that reading it
costs what the change needs, not the whole page.

get_page and get_page_source shape their text here (get_page within its maxChars,
get_page_source within SOURCE_BUDGET); edit_page reports the lines it changed.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, NotRequired

from typing_extensions import TypedDict

from core.errors import InvalidArgument
from wiki.outline import Section, find_section, lead, sections

# get_page's default budget for its whole answer (maxChars).
OUTLINE_CHARS = 24_000
# get_page_source: a page longer than this comes as its outline, a section longer than
# SECTION_CHARS as its own outline (or its first lines), so that a one-line fix (the outline,
# the section holding the line, edit_page) costs at most 12,000 characters of answers.
SOURCE_PAGE_CHARS = 10_000
SECTION_CHARS = 6_000
LEAD_CHARS = 1_500
# What an outline (the lead and the headings) may take, whatever the budget.
OUTLINE_ROOM = 3_500
# An outline listing more headings than this keeps the upper levels only.
OUTLINE_HEADINGS_MAX = 40
CHANGED_MAX = 20
CHANGED_TEXT_MAX = 2_000


class SectionOut(TypedDict):
    heading: str
    level: int
    line: int
    chars: int


class SectionShownOut(TypedDict):
    heading: str
    level: int
    line: int
    lastLine: int
    chars: int


class ChangedOut(TypedDict):
    line: int
    before: str
    after: str


class LinesOut(TypedDict):
    line: int
    lastLine: int
    # Where the text goes on, when it does: pass it as section to read on.
    next: NotRequired[str]


@dataclass
class Shown:
    """The text a read tool returns, and the fields that say which part of the page it is."""

    text: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Budget:
    """The characters (as JSON) a read tool's text may take: the whole page, and one section
    or range of lines; a longer text comes as its outline or its first lines."""

    page: int
    section: int


SOURCE_BUDGET = Budget(SOURCE_PAGE_CHARS, SECTION_CHARS)
_LINES = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")


def cost(text: str) -> int:
    """What a text costs inside a JSON answer (quotes, escaped line breaks)."""
    return len(json.dumps(text, ensure_ascii=False))


def _outline(markdown: str, base: int, offset: int, room: int) -> list[SectionOut]:
    """The headings of `markdown` (a part of the page starting at line `base`) with their
    sizes; the deepest levels are left out of a list longer than 40 headings or `room`."""
    found = [s for s in sections(markdown) if s.start >= offset]
    levels = sorted({s.heading.level for s in found})
    outline = [_entry(s, base) for s in found]
    while len(levels) > 1 and (len(outline) > OUTLINE_HEADINGS_MAX or _size(outline) > room):
        levels.pop()
        outline = [_entry(s, base) for s in found if s.heading.level in levels]
    while outline and _size(outline) > room:
        outline.pop()
    return outline


def _entry(found: Section, base: int) -> SectionOut:
    return {
        "heading": found.heading.text,
        "level": found.heading.level,
        "line": found.heading.line + base - 1,
        "chars": found.chars,
    }


def _size(outline: list[SectionOut]) -> int:
    # As pretty_json writes it three levels deep in the answer.
    return len(json.dumps(outline, ensure_ascii=False, indent=2)) + 6 * 6 * len(outline)


def _as_outline(markdown: str, room: int, *, base: int = 1, skip_heading: bool = False) -> Shown:
    """A long text as the words before its first (sub)heading and the list of its sections."""
    offset = 0
    room = min(room, OUTLINE_ROOM)
    lead_max = min(LEAD_CHARS, room // 3)
    if skip_heading:
        # A section's own heading is not one of its subsections.
        offset = markdown.find("\n") + 1 if "\n" in markdown else len(markdown)
        heading_line, rest = markdown[:offset], markdown[offset:]
        text = heading_line + lead(rest, max(lead_max - len(heading_line), 0))
    else:
        text = lead(markdown, lead_max)
    outline = _outline(markdown, base, offset, room - cost(text))
    return Shown(text, {"truncated": True, "sections": outline})


def shown_text(markdown: str, section: str | None, budget: Budget) -> Shown:
    """What a read tool returns of `markdown`: all of it, its outline when it is long, the
    one section asked for (itself as an outline, or its first lines, when even that is long),
    or a range of lines ("120-160")."""
    if section is None:
        if cost(markdown) <= budget.page:
            return Shown(markdown)
        return _as_outline(markdown, budget.page)
    span = _LINES.match(section)
    if span is not None:
        return _lines(markdown, int(span[1]), int(span[2]), budget.section)
    chosen = _one_section(markdown, section)
    text = markdown[chosen.start : chosen.end]
    about: SectionShownOut = {
        "heading": chosen.heading.text,
        "level": chosen.heading.level,
        "line": chosen.heading.line,
        "lastLine": chosen.last_line,
        "chars": chosen.chars,
    }
    if cost(text) <= budget.section:
        shown = Shown(text)
    elif len(sections(text)) > 1:
        shown = _as_outline(text, budget.section, base=chosen.heading.line, skip_heading=True)
    else:
        shown = _lines(markdown, chosen.heading.line, chosen.last_line, budget.section)
    shown.fields["section"] = about
    return shown


def _lines(markdown: str, first: int, last: int, room: int) -> Shown:
    """Lines `first` to `last` of the page, as many as fit in `room` (at least one, cut if it
    alone is longer)."""
    every = markdown.split("\n")
    if not 1 <= first <= last or first > len(every):
        raise InvalidArgument(
            f"lines {first}-{last} are not in this page, which has {len(every)} lines. Pass a "
            "range like '120-160' within it, or a heading from sections."
        )
    last = min(last, len(every))
    shown, used = [every[first - 1]], cost(every[first - 1])
    for line in every[first:last]:
        used += cost(line)
        if used > room:
            break
        shown.append(line)
    text = "\n".join(shown)
    shown_last = first + len(shown) - 1
    text = text if cost(text) <= room else text[: room // 2]
    lines: LinesOut = {"line": first, "lastLine": shown_last}
    fields: dict[str, Any] = {"lines": lines}
    if shown_last < last:
        lines["next"] = f"{shown_last + 1}-{last}"
        fields["truncated"] = True
    return Shown(text + ("\n" if shown_last < len(every) else ""), fields)


def _one_section(markdown: str, wanted: str) -> Section:
    found = find_section(markdown, wanted)
    if len(found) == 1:
        return found[0]
    if not found:
        raise InvalidArgument(
            f"this page has no section headed {wanted!r}. Call again without section to see "
            "its headings (sections), and pass one of them exactly."
        )
    lines = ", ".join(str(s.heading.line) for s in found[:10])
    raise InvalidArgument(
        f"{len(found)} sections are headed {wanted!r} (at lines {lines}); pass the line "
        f"number of the one you want as section, e.g. section='{found[0].heading.line}'."
    )


def changed_lines(before: str, after: str) -> list[ChangedOut]:
    """The lines an edit changed: where (line in the new text), what they were and are."""
    old, new = before.split("\n"), after.split("\n")
    # The lines alike at both ends are skipped first: a long page costs no more to compare
    # than the stretch its edits span.
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    old_middle, new_middle = old[head : len(old) - tail], new[head : len(new) - tail]
    matcher = difflib.SequenceMatcher(a=old_middle, b=new_middle, autojunk=False)
    changed: list[ChangedOut] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed.append(
            {
                "line": head + j1 + 1,
                "before": _capped("\n".join(old_middle[i1:i2])),
                "after": _capped("\n".join(new_middle[j1:j2])),
            }
        )
    return changed[:CHANGED_MAX]


def _capped(text: str) -> str:
    if len(text) <= CHANGED_TEXT_MAX:
        return text
    return text[:CHANGED_TEXT_MAX] + f"… ({len(text):,} characters)"
