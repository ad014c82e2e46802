"""Python-Markdown's processors whose scans cost time quadratic in what a writer types, put
back in linear-time form with the same output (an Extension, `LinearTime`).

Python-Markdown tries every `[` of a paragraph as the start of a link, an image, a
reference and a footnote, and each try read on to the end of the paragraph for its `]`: a
paragraph of 4,000 `[` took seven seconds. Here the `]` closing each `[` is looked up in a
table built once per paragraph; the `(...)` of a link is read only as far as the `)` that
closes it; a table's test reads the block's first lines, not all of them, each time a list
or heading takes one line off the block.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as etree
from collections.abc import Iterator

import markdown
from markdown.blockprocessors import (
    BlockProcessor,
    BlockQuoteProcessor,
    HashHeaderProcessor,
    HRProcessor,
    ReferenceProcessor,
    SetextHeaderProcessor,
)
from markdown.extensions import Extension
from markdown.extensions.footnotes import (
    FootnoteBlockProcessor,
    FootnoteExtension,
    FootnoteInlineProcessor,
)
from markdown.extensions.tables import TableProcessor
from markdown.inlinepatterns import (
    ImageInlineProcessor,
    ImageReferenceInlineProcessor,
    LinkInlineProcessor,
    ReferenceInlineProcessor,
    ShortImageReferenceInlineProcessor,
    ShortReferenceInlineProcessor,
)
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor
from markdown.util import AtomicString, nearing_recursion_limit

# How many characters past a link's closing `)` may be read in all, per rendering, when its
# `(...)` holds a quote: Python-Markdown then reads on to the end of the paragraph, in case
# a title closes later, so each such link could cost a paragraph. Past this, such a link is
# read up to the `)` that closes it, as one without a quote is (which is what Python-Markdown
# decides for it anyway unless a later quote closes its title).
QUOTED_SCAN_BUDGET = 20_000


class Closers:
    """Where the bracket that closes a scan starting at a position is, in one text.

    `closing(text, i)` answers what reading `text` from `i` with one `opener` open, counting
    nested pairs, finds: the position of the `closer` that closes it, or -1. The answers
    depend only on `text[i:]`, so they are kept by distance from the end of the text: when
    the inline processor replaces a match before `i` with a placeholder, the same table
    still answers for the rest, and it is built once per paragraph, not once per match.
    """

    def __init__(self, opener: str, closer: str) -> None:
        self.opener = opener
        self.closer = closer
        self.text = ""
        self.checked = 0  # how many characters at the end of `text` the table is known for
        self.table: list[int] = [0]
        self.steps = 0  # characters looked at in all (tests count them)

    def closing(self, text: str, index: int) -> int:
        distance = len(text) - index
        if text is not self.text or distance > self.checked:
            self._adopt(text, distance)
        closes_at = self.table[distance]
        return -1 if closes_at == 0 else len(text) - closes_at

    def _adopt(self, text: str, distance: int) -> None:
        # The same tail as the text the table was built for: keep the table (a C compare).
        tail = len(text) - distance
        if distance <= len(self.text) and self.text.endswith(text[tail:]):
            self.text, self.checked = text, distance
            return
        self._build(text)

    def _build(self, text: str) -> None:
        # table[d]: for a scan from d characters before the end, how far before the end its
        # closer is (0: none). Read right to left, one step a character.
        table = [0] * (len(text) + 1)
        opener, closer = self.opener, self.closer
        for distance in range(1, len(text) + 1):
            char = text[-distance]
            if char == closer:
                table[distance] = distance
            elif char == opener:
                inner = table[distance - 1]
                table[distance] = table[inner - 1] if inner else 0
            else:
                table[distance] = table[distance - 1]
        self.steps += len(text)
        self.text, self.checked, self.table = text, len(text), table


class _LinearText:
    """`getText` (the `[...]` after a `[`) by table, not by reading to the paragraph's end."""

    brackets: Closers

    def getText(self, data: str, index: int) -> tuple[str, int, bool]:
        end = self.brackets.closing(data, index)
        if end < 0:
            return "", len(data), False  # callers read nothing else of a miss
        return data[index:end], end + 1, True


class _Quotes(Closers):
    """Whether a quote stands between two positions of a text, by a table of where the next
    quote is, kept like the brackets' (by distance from the end): asking at each `(` of a
    paragraph reads it once, not once per link."""

    def __init__(self) -> None:
        super().__init__("'", '"')

    def between(self, text: str, start: int, end: int) -> bool:
        found = self.closing(text, start)
        return 0 <= found < end

    def _build(self, text: str) -> None:
        # table[d]: how far before the end the first quote at or after d before the end is.
        table = [0] * (len(text) + 1)
        for distance in range(1, len(text) + 1):
            char = text[-distance]
            table[distance] = distance if char in "'\"" else table[distance - 1]
        self.steps += len(text)
        self.text, self.checked, self.table = text, len(text), table


class _LinearLink(_LinearText):
    """`getLink` (the `(...)` after `[...]`) read only as far as its closing `)`."""

    parens: Closers
    quotes: _Quotes
    quoted_budget: int

    def getLink(self, data: str, index: int) -> tuple[str, str | None, int, bool]:
        if index >= len(data) or data[index] != "(":
            return "", None, index, False
        end = self.parens.closing(data, index + 1)
        reach = len(data) if end < 0 else end + 1
        if not self.quotes.between(data, index, reach):
            if end < 0:
                return "", None, index, False  # no `)` closes it: not a link
            return super().getLink(data, index)  # type: ignore[misc]
        # A title: Python-Markdown's own reading, which may go on past the `)`, within budget.
        window = len(data) - index
        if window > self.quoted_budget:
            if end < 0:
                return "", None, index, False
            window = reach - index
        else:
            self.quoted_budget -= window
        href, title, stop, handled = super().getLink(data[index : index + window], 0)  # type: ignore[misc]
        # Python-Markdown may answer -1 (its scan's fallback): the window's end, as the text's.
        return href, title, index + stop if stop >= 0 else index + window + stop, handled


def _bracket_table() -> Closers:
    return Closers("[", "]")


class _Link(_LinearLink, LinkInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets, self.parens, self.quotes = _bracket_table(), Closers("(", ")"), _Quotes()
        self.quoted_budget = QUOTED_SCAN_BUDGET


class _Image(_LinearLink, ImageInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets, self.parens, self.quotes = _bracket_table(), Closers("(", ")"), _Quotes()
        self.quoted_budget = QUOTED_SCAN_BUDGET


class _Reference(_LinearText, ReferenceInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets = _bracket_table()


class _ShortReference(_LinearText, ShortReferenceInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets = _bracket_table()


class _ImageReference(_LinearText, ImageReferenceInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets = _bracket_table()


class _ShortImageReference(_LinearText, ShortImageReferenceInlineProcessor):
    def __init__(self, pattern: str, md: markdown.Markdown) -> None:
        super().__init__(pattern, md)
        self.brackets = _bracket_table()


# Name: (replacement, Python-Markdown's priority for it, markdown.inlinepatterns).
_LINK_PROCESSORS: dict[str, tuple[type[LinkInlineProcessor], int]] = {
    "reference": (_Reference, 170),
    "link": (_Link, 160),
    "image_link": (_Image, 150),
    "image_reference": (_ImageReference, 140),
    "short_reference": (_ShortReference, 130),
    "short_image_ref": (_ShortImageReference, 125),
}
_TABLE_PRIORITY = 75  # markdown.extensions.tables
_FOOTNOTE_PRIORITY = 175  # markdown.extensions.footnotes
_FOOTNOTE_BLOCK_PRIORITY = 17
_FOOTNOTE_RE = r"\[\^([^\]\[]*)\]"


class _LinearTable(TableProcessor):
    """The tables extension's test, reading the lines it needs instead of splitting the
    whole block each time a heading or list item takes one line off it."""

    def test(self, parent: etree.Element, block: str) -> bool:
        first = block.split("\n", 2)
        if len(first) < 2:
            return False
        # A one-column table needs a pipe on every line: only then the whole block is read.
        lines = block.split("\n") if _one_column(first[0]) else first[:2]
        return bool(super().test(parent, "\n".join(lines)))


def _one_column(header: str) -> bool:
    header = header.strip(" ")
    bordered = header.startswith("|") or TableProcessor.RE_END_BORDER.search(header) is not None
    return bordered and "|" not in header.strip("|")


def _tail_of(text: str, block: str) -> bool:
    """Whether `block` is `text` or the lines at its end."""
    if len(block) > len(text) or not text.endswith(block):
        return False
    return len(block) == len(text) or text[-len(block) - 1] == "\n"


class Footnotes(FootnoteExtension):
    """The footnotes extension, giving the n-th reference to a footnote its id without
    trying the n - 1 taken before it each time (a footnote referred to 16,000 times took
    minutes)."""

    def reset(self) -> None:
        super().reset()
        self.last_ref: dict[str, str] = {}

    def unique_ref(self, reference: str, found: bool = False) -> str:
        if not found:
            return reference
        # Every id up to the one last given for this reference is taken: start there.
        start = self.last_ref.get(reference, reference)
        unique: str = super().unique_ref(start, found)
        if start != reference:
            # Counted under `start` by Python-Markdown: the count belongs to the reference.
            self.found_refs[start] -= 1
            if not self.found_refs[start]:
                del self.found_refs[start]
            self.found_refs[reference] = self.found_refs.get(reference, 0) + 1
        self.last_ref[reference] = unique
        return unique


class _SearchedOnce:
    """A block processor that searches its whole block for its line (a heading, a rule, a
    quote, a definition) and finds nothing is not made to search again what is left of that
    block when another processor takes one line off it (a block of 4,000 setext headings was
    searched 4,000 times by each). What is left is a tail of lines of the block searched."""

    # The last few blocks in which the search found nothing (a few: the lines before a rule
    # or a heading are parsed on their own in between, and must not push the block out).
    cleared: tuple[str, ...] = ()

    def _nothing_in(self, block: str) -> bool:
        return any(_tail_of(clear, block) for clear in self.cleared)

    def _clear(self, block: str) -> None:
        self.cleared = (block, *self.cleared[:3])

    def test(self, parent: etree.Element, block: str) -> bool:
        if self._nothing_in(block):
            return False
        found = bool(super().test(parent, block))  # type: ignore[misc]
        if not found:
            self._clear(block)
        return found


class _SearchedOnceInRun(_SearchedOnce):
    """The same for processors that search in `run` (their test is always true)."""

    def test(self, parent: etree.Element, block: str) -> bool:
        return not self._nothing_in(block)

    def run(self, parent: etree.Element, blocks: list[str]) -> bool | None:
        block = blocks[0]
        done: bool | None = super().run(parent, blocks)  # type: ignore[misc]
        if done is False:
            self._clear(block)
        return done


class _HashHeader(_SearchedOnce, HashHeaderProcessor):
    pass


class _Rule(_SearchedOnce, HRProcessor):
    pass


class _Quote(_SearchedOnce, BlockQuoteProcessor):
    pass


class _Definitions(_SearchedOnceInRun, ReferenceProcessor):
    pass


class _FootnoteDefinitions(_SearchedOnceInRun, FootnoteBlockProcessor):
    pass


class _Setext(SetextHeaderProcessor):
    """A setext heading takes its two lines off the block without splitting all the others
    into a list and joining them again, once for each heading."""

    def run(self, parent: etree.Element, blocks: list[str]) -> None:
        lines = blocks[0].split("\n", 2)
        if len(lines) > 2:
            blocks[0:1] = ["\n".join(lines[:2]), lines[2]]
        super().run(parent, blocks)


class _ShallowEnough:
    """A list (or a list item's indented continuation) nested so deep that parsing it would
    pass Python's recursion limit is read as the code block or paragraph it also is, as
    Python-Markdown already does for block quotes: 310 nested lists (193,000 characters)
    stopped the page with a RecursionError."""

    def test(self, parent: etree.Element, block: str) -> bool:
        return not nearing_recursion_limit() and bool(super().test(parent, block))  # type: ignore[misc]


def _shallow(processor: BlockProcessor) -> BlockProcessor:
    """`processor`'s own class (the sane_lists extension's lists, say), kept shallow."""
    kind = type(f"Shallow{type(processor).__name__}", (_ShallowEnough, type(processor)), {})
    shallow: BlockProcessor = kind(processor.parser)
    return shallow


# The list processors and Python-Markdown's priorities for them (markdown.blockprocessors).
_NESTING_BLOCKS = {"indent": 90, "olist": 40, "ulist": 30}

# Name: (replacement, Python-Markdown's priority for it, markdown.blockprocessors).
_SEARCHING_BLOCKS: dict[str, tuple[type[BlockProcessor], int]] = {
    "hashheader": (_HashHeader, 70),
    "setextheader": (_Setext, 60),
    "hr": (_Rule, 50),
    "quote": (_Quote, 20),
    "reference": (_Definitions, 15),
}


# The farthest a raw HTML tag's `>` may be from its `<` (`<a href="..." title="...">`).
TAG_CHARS = 4096
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


class _UnclosedTags(Preprocessor):
    """A `<` that starts a tag whose `>` is not within TAG_CHARS characters is written as
    `&lt;`, which shows the same. Python-Markdown's HTML reader (the standard library's)
    reads each such tag on to the next `>`: a page of `<a ` repeated took minutes."""

    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "<" not in text:
            return lines
        parts: list[str] = []
        done = 0
        closer = -1  # the first `>` at or after the last `<` looked at
        for match in _TAG_START.finditer(text):
            start = match.start()
            if closer < start:
                closer = text.find(">", start)
            if closer < 0 or closer - start > TAG_CHARS:
                parts += [text[done:start], "&lt;"]
                done = start + 1
        if not parts:
            return lines
        return "".join([*parts, text[done:]]).split("\n")


# The most places an inline pattern can start at (`[`, `*`, `_`, a backtick, `<`, `&`, `\`, two
# spaces ending a line) that one paragraph, list item, heading or table cell may hold and still
# be formatted. Each link, emphasis or escape Python-Markdown finds makes it copy the whole text
# of its block again (a paragraph of 33,000 `[a](b)` links took 5 seconds): past this many, the
# block's text is shown as written. The 18F handbook's busiest block holds 33.
INLINE_MARKS = 1_000
_MARKS = "[*_`<&\\"


def inline_marks(text: str) -> int:
    """How many places of `text` an inline pattern could start at (see INLINE_MARKS)."""
    return sum(text.count(mark) for mark in _MARKS) + text.count("  \n")  # a line break


class _FewMarksOnly(Treeprocessor):
    """Texts with more than INLINE_MARKS marks kept as written (escaped, unformatted), so
    the inline patterns' work stays within INLINE_MARKS copies of each text."""

    def run(self, root: etree.Element) -> None:
        for element in root.iter():
            text, tail = element.text, element.tail
            if text is not None and _too_marked(text):
                element.text = AtomicString(text)
            if tail is not None and _too_marked(tail):
                element.tail = AtomicString(tail)


def _too_marked(text: str) -> bool:
    return not isinstance(text, AtomicString) and inline_marks(text) > INLINE_MARKS


class LinearTime(Extension):
    """Put the linear-time processors in place of Python-Markdown's own (same names,
    priorities and output). Listed after the extensions it replaces processors of."""

    def extendMarkdown(self, md: markdown.Markdown) -> None:
        for name, (processor, priority) in _LINK_PROCESSORS.items():
            pattern = md.inlinePatterns[name].getCompiledRegExp().pattern
            md.inlinePatterns.register(processor(pattern, md), name, priority)
        if "footnote" in md.inlinePatterns:
            # Its id is read up to the next `]`, and, here, never across a `[`: from each `[^`
            # of a paragraph with no `]` the expression read on to the paragraph's end.
            footnotes = md.inlinePatterns["footnote"].footnotes  # type: ignore[attr-defined]
            marker = FootnoteInlineProcessor(_FOOTNOTE_RE, footnotes)
            md.inlinePatterns.register(marker, "footnote", _FOOTNOTE_PRIORITY)
        # Before the HTML block reader (20), after fenced code (25) has put code aside.
        md.preprocessors.register(_UnclosedTags(md), "quire_unclosed_tags", 21)
        # Just before the inline patterns (20).
        md.treeprocessors.register(_FewMarksOnly(md), "quire_few_marks_only", 21)
        blocks = md.parser.blockprocessors
        for name, (block_processor, priority) in _SEARCHING_BLOCKS.items():
            blocks.register(block_processor(md.parser), name, priority)
        for name, priority in _NESTING_BLOCKS.items():
            blocks.register(_shallow(blocks[name]), name, priority)
        if "footnote" in blocks:
            footnotes = blocks["footnote"].footnotes  # type: ignore[attr-defined]
            blocks.register(_FootnoteDefinitions(footnotes), "footnote", _FOOTNOTE_BLOCK_PRIORITY)
        if "table" in md.parser.blockprocessors:
            config = md.parser.blockprocessors["table"].config  # type: ignore[attr-defined]
            table = _LinearTable(md.parser, config)
            md.parser.blockprocessors.register(table, "table", _TABLE_PRIORITY)


def closers_of(md: markdown.Markdown) -> Iterator[Closers]:
    """The bracket tables of a converter's processors (tests count the steps they took)."""
    for name in _LINK_PROCESSORS:
        processor = md.inlinePatterns[name]
        yield from (
            getattr(processor, attr)
            for attr in ("brackets", "parens", "quotes")
            if hasattr(processor, attr)
        )
