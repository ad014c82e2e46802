"""A page's markdown as its headings and sections, so a long page can be read part by part.

Headings follow python-markdown's rules (the renderer Quire uses): ATX headings (`# Title`,
at the start of a line) and setext headings (a block's first line underlined with `=` or
`-`), never inside fenced or indented code.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

_ATX = re.compile(r"^(#{1,6})(.*?)#*\s*$")
_SETEXT_UNDERLINE = re.compile(r"^[=-]+ *$")
_FENCE = re.compile(r"^(`{3,}|~{3,})")
_INDENTED = re.compile(r"^(?: {4}|\t)")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int
    line: int  # 1-based line of the heading (of its text, for a setext heading)
    start: int  # offset of that line in the markdown


@dataclass(frozen=True)
class Section:
    """A heading and everything under it, down to the next heading of its level or above."""

    heading: Heading
    start: int
    end: int
    last_line: int

    @property
    def chars(self) -> int:
        return self.end - self.start


def _fenced_lines(lines: list[str]) -> set[int]:
    """Indexes of the lines inside a closed fenced code block, its fences included."""
    inside: set[int] = set()
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence = opening.group(1)
        close = next(
            (n for n in range(index + 1, len(lines)) if lines[n].rstrip(" ") == fence), None
        )
        if close is None:  # an unclosed fence is plain text to python-markdown
            index += 1
            continue
        inside.update(range(index, close + 1))
        index = close + 1
    return inside


def headings(markdown: str) -> list[Heading]:
    """The page's headings in order."""
    lines = markdown.split("\n")
    offsets, offset = [], 0
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    fenced = _fenced_lines(lines)
    found: list[Heading] = []
    # A setext heading is the first line of a block: after a blank line, the start of the
    # page, a heading or a fence.
    block_start = True
    for index, line in enumerate(lines):
        if index in fenced:
            block_start = True
            continue
        if not line.strip():
            block_start = True
            continue
        atx = _ATX.match(line)
        if atx is not None:
            # As the rendered page reads it: `Pol&iacute;tica` is `Política` (issue 37).
            text = html.unescape(atx.group(2).strip())
            if text:
                found.append(Heading(text, len(atx.group(1)), index + 1, offsets[index]))
            block_start = True
            continue
        if (
            block_start
            and not _INDENTED.match(line)
            and index + 1 < len(lines)
            and index + 1 not in fenced
            and _SETEXT_UNDERLINE.match(lines[index + 1])
        ):
            level = 1 if lines[index + 1].startswith("=") else 2
            found.append(Heading(html.unescape(line.strip()), level, index + 1, offsets[index]))
        block_start = False
    return found


def sections(markdown: str) -> list[Section]:
    """Every heading's section, in page order; a section holds its subsections."""
    found = headings(markdown)
    result = []
    for n, heading in enumerate(found):
        following = next((h for h in found[n + 1 :] if h.level <= heading.level), None)
        end = following.start if following is not None else len(markdown)
        last_line = markdown.count("\n", 0, max(end - 1, heading.start)) + 1
        result.append(Section(heading, heading.start, end, last_line))
    return result


def lead(markdown: str, max_chars: int) -> str:
    """The text before the first heading, cut at a line end to at most `max_chars`."""
    found = headings(markdown)
    text = markdown[: found[0].start] if found else markdown
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[: cut + 1 if cut > 0 else max_chars]


def find_section(markdown: str, wanted: str) -> list[Section]:
    """The sections whose heading is `wanted` (exact, else ignoring case), or, for a number,
    the one whose heading is on that line."""
    every = sections(markdown)
    name = html.unescape(wanted.strip())
    exact = [s for s in every if s.heading.text == name]
    if exact:
        return exact
    folded = [s for s in every if s.heading.text.casefold() == name.casefold()]
    if folded:
        return folded
    if name.isdigit():
        return [s for s in every if s.heading.line == int(name)]
    return []
