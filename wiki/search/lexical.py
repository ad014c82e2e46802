"""The keyword ranking: one pipeline for both databases. The engine's backend
(wiki.search.backends) writes the statement; this module runs it, turns its rows into hits
and adds the partial hits when few pages hold every term."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from config.replicas import read_connection
from wiki.indexed_text import index_text
from wiki.language import UNKNOWN
from wiki.search.backends import BACKENDS, Ask, Backend, most_of
from wiki.search.hits import SearchHit
from wiki.search.query import CONTROL_CHARS, ParsedQuery
from wiki.search.rarity import rarest
from wiki.search.snippets import models_from, section_from
from wiki.search.sql import Params, Within
from wiki.search_limits import search_rows

# Below this many hits holding every term, hits holding most terms follow.
PARTIAL_BELOW = 8


def keyword_search(
    query: str, parsed: ParsedQuery, within: Within, limit: int, *, language: str = UNKNOWN
) -> list[SearchHit]:
    """The keyword ranking alone (see RANKING): full hits, then partial ones when few;
    `language` is the query's (wiki.language), preferred among otherwise equal hits."""
    backend = BACKENDS[read_connection().vendor]
    title = index_text(" ".join(CONTROL_CHARS.sub(" ", query).split()))
    ask = Ask(parsed, within, limit, title=title, partial=False, language=language)
    hits = lexical_hits(backend, ask)
    if len(hits) < min(limit, PARTIAL_BELOW) and ask.terms >= 3:
        partial = replace(ask, limit=limit - len(hits), partial=True)
        if read_connection().vendor == "postgresql":
            # Every partial hit holds one of the n - most_of(n) + 1 rarest terms: the index
            # looks those up only (wiki.search.rarity).
            fewest = most_of(ask.terms - ask.parsed.spanning, loose=ask.parsed.loose)
            misses = ask.terms - fewest
            looked_up = rarest(ask.parsed.groups, misses + 1)
            partial = replace(partial, looked_up=looked_up)
        hits += [replace(hit, every_term=False) for hit in lexical_hits(backend, partial)]
    return hits


def lexical_hits(backend: Backend, ask: Ask) -> list[SearchHit]:
    """The hits of one keyword statement, written by the engine's `backend`, in one query."""
    params = Params()
    rows = search_rows(backend.statement(ask, params), params)
    return [keyword_hit(ask.terms, row, backend.excerpt(*row[4:7])) for row in rows]


def keyword_score(
    terms: int,
    title_equals: bool,
    matched: int,
    title_hits: int,
    rank: float,
    same_language: bool = False,
) -> float:
    """One number in [0, 1) that orders hits as RANKING does, so `score` follows the list."""
    place = (int(title_equals) * (terms + 1) + matched) * (terms + 1) + title_hits
    place = 2 * place + int(same_language)
    squashed = rank / (1.0 + rank) if rank > 0 else 0.0
    return round((place + squashed) / (4 * (terms + 1) ** 2), 4)


def keyword_hit(terms: int, row: Sequence[Any], excerpt: str) -> SearchHit:
    """One keyword hit from a row of either database's statement (wiki.search.backends'
    columns) and its excerpt."""
    page_id, public_id, title, path, *_, equals, matched, in_title, rank, same = row[:12]
    language, page_fingerprint, chunks = row[12:]
    return SearchHit(
        page_id=page_id,
        public_id=public_id,
        title=title,
        path=path,
        excerpt=excerpt,
        score=keyword_score(terms, equals, matched, in_title, float(rank), bool(same)),
        section=section_from(chunks, excerpt),
        exact_title=bool(equals),
        language=language or UNKNOWN,
        embedded_by=models_from(chunks),
        fingerprint=page_fingerprint,
    )
