"""Word-level diffs for reviewers (side by side and inline) and unified diffs for the API.

Lines are matched first, then the words of each changed line pair, as Wagtail's compare.py
does. Every piece of text is escaped here; invisible and bidirectional-control characters
are shown as visible badges and letters of another script hiding in a word (Unicode's
confusables data, through confusable_homoglyphs) are marked, since a reviewer must see
exactly what goes live.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import groupby
from typing import NamedTuple

from confusable_homoglyphs import categories, confusables
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from lxml import html as etree_html

from core.characters import DEFAULT_IGNORABLE_CODES

EMPTY = SafeString("")

CONTEXT_LINES = 3
# Below this similarity a changed line is shown as removed and added, not word by word.
PAIR_SIMILARITY = 0.3

_TOKEN = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)

# Characters that render as nothing (core/characters.py).
_IGNORABLE = DEFAULT_IGNORABLE_CODES
# Blank without being ignorable: the Braille blank, and every space but the ASCII one (no-break,
# en, em, thin, ideographic...) and the line and paragraph separators, which pass for spaces.
_BLANK_CATEGORIES = frozenset({"Zs", "Zl", "Zp"})
_BRAILLE_BLANK = "\u2800"

# Letters only: digits and underscores join words in code (ip_адрес, x86) without mixing them.
_WORD = re.compile(r"[^\W\d_]+")
_NOT_A_SCRIPT = frozenset({"COMMON", "INHERITED"})
# Scripts that one language writes together (Japanese, Korean, Chinese): not a mix.
_SCRIPT_FAMILY = {"HIRAGANA": "HAN", "KATAKANA": "HAN", "HANGUL": "HAN", "BOPOMOFO": "HAN"}


def is_invisible(char: str) -> bool:
    """True for a character a reader cannot see, or sees as a plain space when it is not one."""
    if ord(char) in _IGNORABLE or char == _BRAILLE_BLANK:
        return True
    category = unicodedata.category(char)
    if category == "Cf":
        return True
    if category in _BLANK_CATEGORIES:
        return char != " "
    return category == "Cc" and char not in "\n\t"


@dataclass(frozen=True)
class Lookalike:
    """A letter of another script that passes for one of the word's own script."""

    char: str
    like: str  # the letter it passes for
    script: str  # that letter's script, as Unicode names it ("LATIN")
    word: str

    @property
    def label(self) -> str:
        return (
            f"{_label(self.char)} looks like {self.script.title()} \u201c{self.like}\u201d "
            f"in \u201c{self.word}\u201d"
        )


@lru_cache(maxsize=8192)
def _script(char: str) -> str:
    # The library looks each character up afresh (microseconds); texts repeat their letters.
    return str(categories.aliases_categories(char)[0])


def _word_lookalikes(word: str) -> list[Lookalike]:
    """Homoglyphs in a word that mixes scripts: letters outside the word's main script that
    Unicode's confusables data says can pass for a letter of it."""
    scripts = [_script(char) for char in word]
    counts = Counter(
        _SCRIPT_FAMILY.get(script, script) for script in scripts if script not in _NOT_A_SCRIPT
    )
    if len(counts) < 2:
        return []
    # The main script is the word's most frequent one; Latin wins a tie.
    main = max(counts, key=lambda script: (counts[script], script == "LATIN"))
    found = confusables.is_confusable(word, greedy=True, preferred_aliases=[main]) or []
    out = []
    for item in found:
        char = item["character"]
        if _script(char) in _NOT_A_SCRIPT or _SCRIPT_FAMILY.get(_script(char)) == main:
            continue
        like = next(
            (g["c"] for g in item["homoglyphs"] if len(g["c"]) == 1 and _script(g["c"]) == main),
            None,
        )
        if like is not None:
            out.append(Lookalike(char=char, like=like, script=main, word=word))
    return out


def _is_cjk(char: str) -> bool:
    script = _script(char)
    return _SCRIPT_FAMILY.get(script, script) == "HAN"


def _words(text: str) -> Iterator[tuple[int, str]]:
    """The words of `text` that go beyond ASCII, with their offsets. Chinese, Japanese and
    Korean write Latin words against their own without a space ("OSに関連する"), so a run
    of those scripts is a word of its own."""
    for match in _WORD.finditer(text):
        word = match.group()
        if word.isascii():
            continue
        offset = match.start()
        for _, run in groupby(word, key=_is_cjk):
            part = "".join(run)
            yield offset, part
            offset += len(part)


def lookalikes(text: str) -> dict[int, Lookalike]:
    """The homoglyphs of `text` by position, word by word (only words beyond ASCII can mix)."""
    if text.isascii():
        return {}
    positions: dict[int, Lookalike] = {}
    for start, word in _words(text):
        suspects = {item.char: item for item in _word_lookalikes(word)}
        for offset, char in enumerate(word):
            if char in suspects:
                positions[start + offset] = suspects[char]
    return positions


class Flag(NamedTuple):
    """A suspicious character for the reviewer's warning: its label, and whether it is a
    look-alike letter (else it is invisible)."""

    label: str
    lookalike: bool


def _marks(text: str) -> dict[int, Lookalike | None]:
    """The positions in `text` a reviewer must see: None for an invisible character, the
    Lookalike for a homoglyph. Checks each distinct character once, not each position."""
    hidden = [char for char in set(text) if is_invisible(char)]
    marks: dict[int, Lookalike | None] = dict(lookalikes(text))
    if hidden:
        pattern = re.compile("|".join(re.escape(char) for char in hidden))
        marks.update((match.start(), None) for match in pattern.finditer(text))
    return marks


def _flags(text: str) -> list[Flag]:
    """A flag for each suspicious character occurrence in `text`, in order."""
    marks = _marks(text)
    return [
        Flag(_label(text[index]), lookalike=False)
        if mark is None
        else Flag(mark.label, lookalike=True)
        for index, mark in sorted(marks.items())
    ]


def suspicious_characters(texts: Iterable[str], *, before: Iterable[str] = ()) -> list[Flag]:
    """The invisible and look-alike characters in `texts` that `before` does not already hold
    as often: what a proposal adds, each once, labelled like "U+202E RIGHT-TO-LEFT…"."""
    added = Counter(flag for text in texts for flag in _flags(text))
    added.subtract(flag for text in before for flag in _flags(text))
    return [flag for flag, count in added.items() if count > 0]


def invisible_characters(*texts: str) -> list[str]:
    """The labels of the distinct invisible and look-alike characters in `texts`."""
    return [flag.label for flag in suspicious_characters(texts)]


def _code(char: str) -> str:
    return f"U+{ord(char):04X}"


def _label(char: str) -> str:
    return f"{_code(char)} {unicodedata.name(char, 'CONTROL CHARACTER')}"


def show(text: str) -> str:
    """Escape `text` for HTML, replace each invisible character with a visible badge and
    underline each look-alike letter, naming it."""
    marks = _marks(text)
    if not marks:
        return escape(text)
    parts: list[str] = []
    start = 0
    for index, mark in sorted(marks.items()):
        parts.append(escape(text[start:index]))
        char = text[index]
        if mark is None:
            parts.append(
                f'<span class="invisible-char" title="{escape(_label(char))}">'
                f"\u27e6{_code(char)}\u27e7</span>"
            )
        else:
            parts.append(
                f'<span class="lookalike-char" title="{escape(mark.label)}">{escape(char)}</span>'
            )
        start = index + 1
    parts.append(escape(text[start:]))
    return "".join(parts)


def _badge(char: str, mark: Lookalike | None) -> etree_html.HtmlElement:
    if mark is None:
        badge = etree_html.Element("span", {"class": "invisible-char", "title": _label(char)})
        badge.text = f"\u27e6{_code(char)}\u27e7"
    else:
        badge = etree_html.Element("span", {"class": "lookalike-char", "title": mark.label})
        badge.text = char
    return badge


def _badged(text: str | None) -> tuple[str, list[etree_html.HtmlElement]] | None:
    """`text` cut at its suspicious characters: the text before the first, and a badge for
    each with the text that follows it as its tail. None when there is nothing to mark."""
    marks = _marks(text or "")
    if not text or not marks:
        return None
    lead, start = "", 0
    badges: list[etree_html.HtmlElement] = []
    for index, mark in sorted(marks.items()):
        if badges:
            badges[-1].tail = text[start:index]
        else:
            lead = text[start:index]
        badges.append(_badge(text[index], mark))
        start = index + 1
    badges[-1].tail = text[start:]
    return lead, badges


def show_html(html: str) -> str:
    """Sanitised HTML (a rendered page or rendered diff) with the same badges as `show` puts
    in text: every invisible character and look-alike letter in its text is marked, so the
    rendered panes hide nothing the markdown diff shows. Tags and attributes are kept."""
    if not html or not _marks(html):
        return html
    root = etree_html.fragment_fromstring(html, create_parent="div")
    for element in list(root.iter()):
        if not isinstance(element.tag, str):
            continue  # a comment (the sanitiser leaves none)
        inside = _badged(element.text)
        if inside is not None:
            element.text = inside[0]
            for position, badge in enumerate(inside[1]):
                element.insert(position, badge)
        after = _badged(element.tail) if element is not root else None
        if after is not None:
            parent = element.getparent()
            element.tail = after[0]
            at = parent.index(element) + 1
            for position, badge in enumerate(after[1]):
                parent.insert(at + position, badge)
    inner = [escape(root.text or "")]
    inner += [etree_html.tostring(child, encoding="unicode") for child in root]
    return "".join(inner)


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
