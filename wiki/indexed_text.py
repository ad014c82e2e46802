"""The text search indexes and embeds: markdown reduced to its words (`plain_text`), the index
row's columns (`document_fields`), and the gaps that make every CJK character a word.

Knows no model: the keyword index (wiki.search) and the vectors (wiki.semantic) both read
pages' text through it.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

# Bounds the tsvector well under PostgreSQL's 1 MB limit and the cost of an excerpt.
BODY_INDEX_MAX = 300_000


MARK_START, MARK_END = "[[[", "]]]"


def document_fields(
    *,
    title: str,
    tags: Sequence[str],
    body: str,
    attachments: Iterable[tuple[str, str]] = (),
) -> tuple[str, str, str]:
    """The (title, tags, body) columns to index: plain text, attachments appended to the body.

    Only the page's own words: a `[[pg_…]]` link is indexed as the page id, never as the
    linked page's title, which a reader of this page may not be allowed to see (and which
    would go stale when that page is renamed).
    """
    parts = [plain_text(body)]
    for name, text in attachments:
        parts.append(f"{name}\n{text}" if text else name)
    full_body = "\n\n".join(p for p in parts if p)[:BODY_INDEX_MAX]
    return index_text(title), index_text(", ".join(tags)), index_text(full_body)


# The indexed text must not contain the excerpt markers themselves.
NOT_A_MARK = re.compile(r"\[{3,}|\]{3,}")


def index_text(text: str) -> str:
    return space_cjk(NOT_A_MARK.sub(lambda m: m[0][:2], text))


_MD_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"<!--.*?-->", re.S), " "),
    (re.compile(r"^\s{0,3}(```|~~~).*$", re.M), ""),  # code fence lines; the code stays
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images: their alt text
    (re.compile(r"\[\[(?:file:)?([^\]\n]+)\]\]"), r"\1"),  # [[pg_...]] and [[file:NAME]]
    (re.compile(r"\[\^[^\]\n]*\]:?"), ""),  # footnote markers
    (re.compile(r"\[([^\]\n]+)\]\([^)\n]*\)"), r"\1"),  # inline links: their text
    (re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]"), r"\1"),  # reference links
    (re.compile(r"^\s{0,3}\[[^\]\n]+\]:\s*\S.*$", re.M), ""),  # link definitions
    (re.compile(r"</?[A-Za-z][^>\n]*>"), " "),  # HTML tags
    (re.compile(r"^\s{0,3}#{1,6}[ \t]+|[ \t]+#+[ \t]*$", re.M), ""),  # heading marks
    (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.M), ""),  # blockquotes
    (re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?", re.M), ""),  # lists
    (re.compile(r"^[ \t]*[-*_=|: \t]{3,}$", re.M), ""),  # rules and table separators
    (re.compile(r"(\*{1,3}|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<!\w)(_{1,3})(?=\S)(.+?)(?<=\S)\1(?!\w)"), r"\2"),
    (re.compile(r"`+"), ""),
    (re.compile(r"\|"), " "),
    (re.compile(r"[ \t]+"), " "),
    (re.compile(r"\n\s*\n\s*"), "\n\n"),
]


def plain_text(markdown: str) -> str:
    """Markdown reduced to its words, for indexing and excerpts (an approximation, not a parser)."""
    text = markdown
    for pattern, replacement in _MD_RULES:
        text = pattern.sub(replacement, text)
    # Entities as the rendered page shows them (`D&iacute;as` is `Días`, issue 37).
    return html.unescape(text).strip() if "&" in text else text.strip()


# Han, kana and Hangul: every character is indexed as a word, split from the next by this
# punctuation space, which both engines read as a separator and no one types; excerpts
# drop it again, so the text's own spaces survive.
CJK_GAP = "\u2008"


# Han, kana and Hangul: scripts written (mostly) without spaces between words.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"


_CJK_GAP = re.compile(f"(?<=[{CJK}])(?=[{CJK}])")


def space_cjk(text: str) -> str:
    return _CJK_GAP.sub(CJK_GAP, text)


def unspace_cjk(text: str) -> str:
    """Drop the gaps `space_cjk` made, keeping the text's own spaces (Korean has them)."""
    text = text.replace(CJK_GAP + MARK_START, MARK_START).replace(MARK_END + CJK_GAP, MARK_END)
    return text.replace(CJK_GAP, "").replace(MARK_END + MARK_START, "")
