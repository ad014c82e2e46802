"""Long pages for agents: a page over 24,000 characters comes as its outline, a section alone
on request, so reading it costs what the change needs, not the whole page.

get_page and get_page_source shape their text here; edit_page reports the lines it changed.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import TypedDict

from core.errors import InvalidArgument
from wiki.outline import Section, find_section, lead, sections

OUTLINE_CHARS = 24_000
LEAD_CHARS = 2_000
# An outline listing more headings than this keeps the upper levels only.
OUTLINE_HEADINGS_MAX = 300
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


@dataclass
class Shown:
    """The text a read tool returns, and the fields that say which part of the page it is."""

    text: str
    fields: dict[str, Any] = field(default_factory=dict)


def _outline(markdown: str, base: int, offset: int) -> list[SectionOut]:
    """The headings of `markdown` (a part of the page starting at line `base`) with their
    sizes; the deepest levels are left out of a very long list."""
    found = sections(markdown)
    levels = sorted({s.heading.level for s in found})
    while len(found) > OUTLINE_HEADINGS_MAX and len(levels) > 1:
        levels.pop()
        found = [s for s in found if s.heading.level in levels]
    return [
        {
            "heading": s.heading.text,
            "level": s.heading.level,
            "line": s.heading.line + base - 1,
            "chars": s.chars,
        }
        for s in found
        if s.start >= offset
    ]


def _as_outline(markdown: str, *, base: int = 1, skip_heading: bool = False) -> Shown:
    """A long text as the words before its first (sub)heading and the list of its sections."""
    offset = 0
    if skip_heading:
        # A section's own heading is not one of its subsections.
        offset = markdown.find("\n") + 1 if "\n" in markdown else len(markdown)
        heading_line, rest = markdown[:offset], markdown[offset:]
        text = heading_line + lead(rest, LEAD_CHARS - len(heading_line))
    else:
        text = lead(markdown, LEAD_CHARS)
    return Shown(
        text,
        {
            "truncated": True,
            "sections": _outline(markdown, base, offset),
        },
    )


def shown_text(markdown: str, section: str | None) -> Shown:
    """What a read tool returns of `markdown`: all of it, its outline when it is long, or the
    one section asked for (itself as an outline when even that is long)."""
    if section is None:
        if len(markdown) <= OUTLINE_CHARS:
            return Shown(markdown)
        return _as_outline(markdown)
    chosen = _one_section(markdown, section)
    text = markdown[chosen.start : chosen.end]
    about: SectionShownOut = {
        "heading": chosen.heading.text,
        "level": chosen.heading.level,
        "line": chosen.heading.line,
        "lastLine": chosen.last_line,
        "chars": chosen.chars,
    }
    if len(text) <= OUTLINE_CHARS:
        return Shown(text, {"section": about})
    shown = _as_outline(text, base=chosen.heading.line, skip_heading=True)
    shown.fields["section"] = about
    return shown


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
