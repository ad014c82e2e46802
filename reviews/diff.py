"""Word-level diffs for reviewers (side by side and inline) and unified diffs for the API.

Lines are matched first, then the words of each changed line pair, as Wagtail's compare.py
does. Every piece of text is escaped here; invisible and bidirectional-control characters
are shown as visible badges, since a reviewer must see exactly what goes live.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

EMPTY = SafeString("")

CONTEXT_LINES = 3
# Below this similarity a changed line is shown as removed and added, not word by word.
PAIR_SIMILARITY = 0.3

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)
_ALWAYS_FLAGGED = {
    *range(0x200B, 0x2010),  # zero-width space/joiners, LRM, RLM
    *range(0x202A, 0x202F),  # bidi embeddings and overrides
    *range(0x2066, 0x206A),  # bidi isolates
    0xFEFF,  # zero-width no-break space (BOM)
    0x00AD,  # soft hyphen
}


def is_invisible(char: str) -> bool:
    code = ord(char)
    if code in _ALWAYS_FLAGGED:
        return True
    category = unicodedata.category(char)
    if category == "Cf":
        return True
    return category == "Cc" and char not in "\n\t"


def _plainly_visible(text: str) -> bool:
    """A fast check (in C) that `text` holds no invisible character: every character
    `is_invisible` flags is also one that `str.isprintable` refuses."""
    return text.replace("\n", "").replace("\t", "").isprintable()


def invisible_characters(*texts: str) -> list[str]:
    """The distinct invisible characters in `texts`, as labels like "U+202E RIGHT-TO-LEFT…"."""
    found: dict[str, None] = {}
    for text in texts:
        if _plainly_visible(text):
            continue
        for char in text:
            if is_invisible(char):
                found[_label(char)] = None
    return list(found)


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _label(char: str) -> str:
    return f"{_code(char)} {unicodedata.name(char, 'CONTROL CHARACTER')}"


def show(text: str) -> str:
    """Escape `text` for HTML and replace each invisible character with a visible badge."""
    if _plainly_visible(text):
        return escape(text)
    parts: list[str] = []
    plain: list[str] = []
    for char in text:
        if is_invisible(char):
            if plain:
                parts.append(escape("".join(plain)))
                plain = []
            parts.append(
                f'<span class="invisible-char" title="{escape(_label(char))}">'
                f"\u27e6{_code(char)}\u27e7</span>"
            )
        else:
            plain.append(char)
    if plain:
        parts.append(escape("".join(plain)))
    return "".join(parts)


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side diff; `kind` is equal, changed, deleted, inserted or skip."""

    kind: str
    old_number: int | None = None
    old_html: SafeString = EMPTY
    new_number: int | None = None
    new_html: SafeString = EMPTY
    skipped: int = 0
    # A skip row keeps the unchanged rows it stands for, so the reviewer can unfold them.
    hidden: tuple[Row, ...] = ()


@dataclass(frozen=True)
class InlineLine:
    """One line of an inline diff; `kind` as in Row."""

    kind: str
    html: SafeString = EMPTY
    skipped: int = 0
    hidden: tuple[InlineLine, ...] = ()


@dataclass(frozen=True)
class Diff:
    rows: list[Row]
    inline: list[InlineLine]
    added: int
    removed: int

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed)


def _word_pair(old: str, new: str) -> tuple[str, str, str]:
    """Old line with <del> marks, new line with <ins> marks, and the merged inline line."""
    old_tokens, new_tokens = _TOKEN.findall(old), _TOKEN.findall(new)
    matcher = difflib.SequenceMatcher(None, old_tokens, new_tokens, autojunk=False)
    left: list[str] = []
    right: list[str] = []
    inline: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        removed = show("".join(old_tokens[i1:i2]))
        added = show("".join(new_tokens[j1:j2]))
        if tag == "equal":
            left.append(removed)
            right.append(added)
            inline.append(added)
            continue
        if removed:
            left.append(f"<del>{removed}</del>")
            inline.append(f"<del>{removed}</del>")
        if added:
            right.append(f"<ins>{added}</ins>")
            inline.append(f"<ins>{added}</ins>")
    return "".join(left), "".join(right), "".join(inline)


def _similar(old: str, new: str) -> bool:
    matcher = difflib.SequenceMatcher(None, _TOKEN.findall(old), _TOKEN.findall(new))
    return matcher.ratio() >= PAIR_SIMILARITY


def _lines(text: str) -> list[str]:
    lines = text.replace("\r\n", "\n").split("\n") if text else []
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it is not a line of its own
    return lines


def _full_rows(old_lines: list[str], new_lines: list[str]) -> list[tuple[Row, InlineLine]]:
    out: list[tuple[Row, InlineLine]] = []

    def deleted(i: int) -> None:
        html = mark_safe(f"<del>{show(old_lines[i])}</del>")
        out.append((Row("deleted", i + 1, html), InlineLine("deleted", html)))

    def inserted(j: int) -> None:
        html = mark_safe(f"<ins>{show(new_lines[j])}</ins>")
        out.append((Row("inserted", new_number=j + 1, new_html=html), InlineLine("inserted", html)))

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1):
                html = mark_safe(show(old_lines[i1 + offset]))
                out.append(
                    (
                        Row("equal", i1 + offset + 1, html, j1 + offset + 1, html),
                        InlineLine("equal", html),
                    )
                )
            continue
        pairs = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for offset in range(pairs):
            old, new = old_lines[i1 + offset], new_lines[j1 + offset]
            if not _similar(old, new):
                deleted(i1 + offset)
                inserted(j1 + offset)
                continue
            left, right, inline = _word_pair(old, new)
            out.append(
                (
                    Row(
                        "changed",
                        i1 + offset + 1,
                        mark_safe(left),
                        j1 + offset + 1,
                        mark_safe(right),
                    ),
                    InlineLine("changed", mark_safe(inline)),
                )
            )
        for i in range(i1 + pairs, i2):
            deleted(i)
        for j in range(j1 + pairs, j2):
            inserted(j)
    return out


def _collapse(rows: list[tuple[Row, InlineLine]], context: int) -> list[tuple[Row, InlineLine]]:
    """Keep `context` unchanged lines around each change; fold the rest into skip rows."""
    changed = [i for i, (row, _) in enumerate(rows) if row.kind != "equal"]
    if not changed:
        return rows
    keep: set[int] = set()
    for i in changed:
        keep.update(range(max(0, i - context), min(len(rows), i + context + 1)))
    out: list[tuple[Row, InlineLine]] = []
    folded: list[tuple[Row, InlineLine]] = []

    def fold() -> None:
        count = len(folded)
        out.append(
            (
                Row("skip", skipped=count, hidden=tuple(row for row, _ in folded)),
                InlineLine("skip", skipped=count, hidden=tuple(line for _, line in folded)),
            )
        )
        folded.clear()

    for i, pair in enumerate(rows):
        if i in keep:
            if folded:
                fold()
            out.append(pair)
        else:
            folded.append(pair)
    if folded:
        fold()
    return out


def diff_text(old: str, new: str, *, context: int | None = CONTEXT_LINES) -> Diff:
    """A word-level diff of two markdown texts; `context=None` keeps every unchanged line."""
    rows = _full_rows(_lines(old), _lines(new))
    added = sum(1 for row, _ in rows if row.kind in ("inserted", "changed"))
    removed = sum(1 for row, _ in rows if row.kind in ("deleted", "changed"))
    if context is not None:
        rows = _collapse(rows, context)
    return Diff(
        rows=[row for row, _ in rows],
        inline=[line for _, line in rows],
        added=added,
        removed=removed,
    )


def diff_words(old: str, new: str) -> SafeString:
    """An inline word diff of a short value (a title, a tag list)."""
    return mark_safe(_word_pair(old, new)[2])


def unified_diff(old: str, new: str, *, old_name: str, new_name: str) -> str:
    """A plain unified diff, for the API and for email summaries."""
    return "".join(
        difflib.unified_diff(
            _with_newlines(old), _with_newlines(new), fromfile=old_name, tofile=new_name
        )
    )


def _with_newlines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


def tag_changes(old: Iterable[str], new: Iterable[str]) -> tuple[list[str], list[str], list[str]]:
    """Tags (removed, added, kept), each in their list order."""
    old_list, new_list = list(old), list(new)
    removed = [tag for tag in old_list if tag not in new_list]
    added = [tag for tag in new_list if tag not in old_list]
    kept = [tag for tag in new_list if tag in old_list]
    return removed, added, kept
