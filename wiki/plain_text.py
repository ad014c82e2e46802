"""Markdown reduced to its words, for the search index, excerpts and the chunks the model
reads (wiki.search, wiki.semantic)."""

from __future__ import annotations

import html
import re

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
