"""What a search returns: a hit, and the copies a folded hit stands for."""

from __future__ import annotations

from dataclasses import dataclass

from wiki.language import UNKNOWN


@dataclass(frozen=True)
class SearchHit:
    page_id: int
    public_id: str
    title: str
    path: str
    excerpt: str  # plain text, with the matched terms wrapped in [[[ and ]]]
    score: float
    section: str | None = None  # the heading above the best match, None above the first
    exact_title: bool = False  # the title is the query itself
    every_term: bool = True  # False for a keyword hit holding only most of the terms
    language: str = UNKNOWN  # the page's (wiki.language)
    # The models whose vectors the page's live version has (a keyword hit's; see fuse): a
    # page published since, or while the worker is down, has none yet.
    embedded_by: frozenset[str] = frozenset()
    # How much of `path` names pages hidden from the searching reader (wiki.scope): shown
    # to them as `scope.shown(path, hidden_prefix)`.
    hidden_prefix: int = 0
    fingerprint: int | None = None  # of the page's text (wiki.copies); EMPTY with no text
    # With `fold_copies`: the other pages this one's text was copied to, this hit standing
    # for them all.
    copies: tuple[Copy, ...] = ()


@dataclass(frozen=True)
class Copy:
    """A page whose fingerprint equals a hit's (`copies_of`), or a hit as one of the copies of
    the hit standing for them (`SearchHit.copies`)."""

    page_id: int
    public_id: str
    title: str
    path: str
    fingerprint: int | None
    hidden_prefix: int = 0  # as SearchHit's
