"""Excerpts: the words of a question marked in a hit's text, cut to one line, and the
section they are in."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from wiki.indexed_text import CJK_GAP, MARK_END, MARK_START, NOT_A_MARK, unspace_cjk
from wiki.search.query import STOP_WORDS, WORD_PART, ParsedQuery

EXCERPT_CHARS = 200


def marked_words(parsed: ParsedQuery) -> list[str]:
    words = []
    for group in parsed.groups:
        for phrase in group:
            for word in WORD_PART.findall(phrase.replace(CJK_GAP, "")):
                if word.lower() not in STOP_WORDS:
                    words.append(word)
    return list(dict.fromkeys(words))


def mark_words(text: str, words: Sequence[str]) -> str:
    """`text` with each word starting like one of `words` wrapped in [[[ ]]] (a stand-in for
    stemming: "leave" marks "leaves")."""
    text = NOT_A_MARK.sub(lambda m: m[0][:2], text)
    if not words or not text:
        return text
    stems = sorted({w[:-1] if len(w) > 4 else w for w in words}, key=len, reverse=True)
    pattern = "|".join(re.escape(stem) for stem in stems)
    marked = re.sub(
        rf"(?<![^\W_])(?:{pattern})[^\W_]*" if pattern else r"(?!)",
        lambda m: MARK_START + m[0] + MARK_END,
        text,
        flags=re.IGNORECASE,
    )
    return marked


def section_from(chunks: Any, excerpt: str) -> str | None:
    """The section of a hit whose excerpt is `excerpt`, from its `chunks_sql` column (JSON
    text on SQLite, parsed already on PostgreSQL). The one place a hit's section is derived
    from its page's chunks (wiki/semantic/)."""
    rows = _chunk_rows(chunks)
    return section_of([(heading, text) for _, heading, text, _ in sorted(rows)], excerpt)


def models_from(chunks: Any) -> frozenset[str]:
    """The models that embedded the chunks of a `chunks_sql` column: none for a page whose
    live version waits to be embedded."""
    return frozenset(model for *_, model in _chunk_rows(chunks) if model)


def _chunk_rows(chunks: Any) -> list[Any]:
    rows = json.loads(chunks) if isinstance(chunks, str) else chunks
    return list(rows or [])


def section_of(chunks: Sequence[tuple[str, str]], excerpt: str) -> str | None:
    """The heading of the first chunk holding the excerpt's first marked word (else its
    start), or None when that chunk comes before the first heading."""
    match = _FIRST_MARK.search(excerpt)
    needle = match[1] if match else strip_marks(excerpt).strip("… ")[:40]
    needle = needle.lower()
    for heading, text in chunks:
        if needle and needle in text.lower():
            return heading or None
    return None


_FIRST_MARK = re.compile(re.escape(MARK_START) + "(.*?)" + re.escape(MARK_END))


def with_ellipses(headline: str, head: str, tail: str) -> str:
    """Mark where ts_headline's fragment leaves out the start or the end of the body."""
    plain = " ".join(headline.replace(MARK_START, "").replace(MARK_END, "").split())
    if not plain:
        return headline
    punctuation = ".,;:!?)]}\"' "
    if not " ".join(head.split()).startswith(plain[:20]):
        headline = "…" + headline
    if not " ".join(tail.split()).rstrip(punctuation).endswith(plain[-20:].rstrip(punctuation)):
        headline += "…"
    return headline


def strip_marks(excerpt: str) -> str:
    """The excerpt as plain text, without the `[[[`/`]]]` match markers."""
    return excerpt.replace(MARK_START, "").replace(MARK_END, "")


def tidy_excerpt(raw: str, max_chars: int = EXCERPT_CHARS) -> str:
    """One line of about `max_chars` characters around the first mark, with balanced marks."""
    text = unspace_cjk(" ".join(_WHITESPACE.split(raw)).strip())
    lead = trail = ""
    if text.startswith("…"):
        lead, text = "… ", text[1:].lstrip()
    if text.endswith("…"):
        trail, text = " …", text[:-1].rstrip()
    if len(text) > max_chars:
        first = max(text.find(MARK_START), 0)
        start = max(0, min(first - max_chars // 3, len(text) - max_chars))
        end = start + max_chars
        if start > 0:
            cut = text.find(" ", start, first + 1)
            start = cut + 1 if cut != -1 else start
            lead = "… "
        if end < len(text):
            cut = text.rfind(" ", start, end)
            end = cut if cut > start else end
            trail = " …"
        text = text[start:end]
    return lead + _balance_marks(text) + trail


def _balance_marks(text: str) -> str:
    """Mend a mark cut in half by trimming, so the markers always come in pairs."""
    out: list[str] = []
    is_open = False
    for piece in _MARKS.split(text):
        if piece == MARK_START:
            if not is_open:
                out.append(piece)
            is_open = True
        elif piece == MARK_END:
            if is_open:
                out.append(piece)
            is_open = False
        else:
            out.append(piece)
    if is_open:
        out.append(MARK_END)
    return "".join(out)


_MARKS = re.compile(r"(\[\[\[|\]\]\])")


# Whitespace other than the CJK gap, which excerpts remove by itself.
_WHITESPACE = re.compile(r"[^\S\u2008]+")
