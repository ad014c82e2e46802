"""The text the search indexes: the index row's columns (`document_fields`, markdown reduced
to its words by wiki.plain_text), the excerpts' marks, and the gaps that make every CJK
character a word. Knows no model."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from wiki.plain_text import plain_text

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
