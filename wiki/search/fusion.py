"""Hybrid ranking: the keyword hits and the pages of the nearest chunks fused by score."""

from __future__ import annotations

import math
from dataclasses import replace

from wiki.language import UNKNOWN
from wiki.search.hits import SearchHit
from wiki.search.query import ParsedQuery
from wiki.search.snippets import mark_words, marked_words, tidy_excerpt
from wiki.semantic import ChunkHit, Embedder, embedder


def similarity_floor(language: str) -> float:
    """The model's similarity floor (see fuse) for a question in `language`, the likeliest
    among the languages the wiki holds pages in (wiki.language.query_language): none for a
    language the model was not trained on, whose similarities are all lower, so that its
    nearest pages are still the best it has.

    Not the language identifier's own first guess: a short question is read as a language
    nobody wrote it in ("purple elephant" as Xhosa, "zzzxqy" as no language), and nonsense
    then found the 8 least unrelated pages (issue 49)."""
    model = embedder()
    if model is None or not model.similarity_floor:
        return 0.0
    if model.languages is not None and language and language not in model.languages:
        return 0.0
    return model.similarity_floor


# Keyword hits and semantic pages each ranked this deep before they are fused.
FUSION_DEPTH = 24


# Fusion by score: a page scores the cosine similarity of its best chunk to the query, plus
# a bonus for its place in the keyword ranking, KEYWORD_BONUS / (KEYWORD_K + rank), so that
# the words decide between pages of close meaning. A page only the keyword ranking found
# starts from the similarity of the last chunk read. Tuned on the question sets
# (tests/question_sets.py, with all-MiniLM-L6-v2): reciprocal rank fusion, which weighs
# the keyword ranking's noise (pages that merely hold the words) as much as its hits, did
# worse than the semantic ranking alone on both sets.
KEYWORD_BONUS = 0.1


KEYWORD_K = 3


# A keyword hit holding only most of the terms counts this much of a full one.
PARTIAL_WEIGHT = 0.5


# Above this many terms the keyword bonus falls in proportion.
LONG_QUERY_TERMS = 8


# Exact titles come first, scored from this down (above any similarity plus bonus).
EXACT_TITLE_SCORE = 3.0


# Added to the score of a page in the query's language (wiki.language), or in none that
# could be told: enough to put a page above its translations, which an English model finds
# about as near (they hold the same commands and title), not enough to lift an unrelated
# page above a relevant one. Tuned on the question sets' pages in every language they are
# translated into (bench/search_quality.py --corpus translations): 0.05 left 4 of 29
# English questions with a translation first, 0.1 one.
LANGUAGE_BONUS = 0.1


# The keyword bonus is this many times larger for a query in a language the model does not
# know (Spanish or French for the English default): its similarities there are little more
# than noise, so its words (matched by their stems: wiki.search.query.with_stems) order the
# pages, and meaning breaks ties and adds pages found by meaning alone. Tuned on the tldr
# pages in 40 languages (bench/search_quality.py --corpus translations, issue 49 point 4):
# Spanish MRR 0.571, 0.599, 0.655, 0.664 and French 0.635, 0.614, 0.592, 0.731 at 4, 8, 12 and
# 32 (with stems); at most 0.8 is added to a page (the first keyword hit's 32 * 0.1 / 4), so
# exact titles (EXACT_TITLE_SCORE, 2 at least) stay above any.
FOREIGN_KEYWORD_WEIGHT = 32.0


def fuse(
    parsed: ParsedQuery,
    keyword: list[SearchHit],
    chunks: list[ChunkHit],
    limit: int,
    *,
    language: str = UNKNOWN,
    similarity_floor: float = 0.0,
) -> list[SearchHit]:
    """Keyword hits and the pages of the nearest chunks, fused by score (see KEYWORD_BONUS),
    pages in the query's `language` (or in none that could be told) raised by LANGUAGE_BONUS;
    a page found by meaning alone below `similarity_floor` is left out.

    Exact titles stay first, as in the keyword ranking. A page's excerpt and section come
    from its best chunk, with the query's words marked; a page that only the keyword
    ranking found keeps its keyword excerpt.
    """
    best_chunk = _best_chunks(keyword, chunks, similarity_floor)
    scores = {page_id: chunk.similarity for page_id, chunk in best_chunk.items()}
    floor = min(scores.values(), default=0.0)
    model = embedder()
    bonus = _keyword_bonus(len(parsed.groups), language, model)
    for rank, hit in enumerate(keyword[:FUSION_DEPTH]):
        share = 1.0 if hit.every_term else PARTIAL_WEIGHT
        scores[hit.page_id] = scores.get(hit.page_id, floor) + bonus * share / (
            KEYWORD_K + rank + 1
        )
    if language:
        languages = {hit.page_id: hit.language for hit in keyword}
        languages.update((page_id, chunk.language) for page_id, chunk in best_chunk.items())
        for page_id in scores:
            if languages.get(page_id, UNKNOWN) in (language, UNKNOWN):
                scores[page_id] += LANGUAGE_BONUS
    exact = {hit.page_id for hit in keyword if hit.exact_title}
    # Exact titles first, in the keyword ranking's order; then by fused score.
    keyword_rank = {hit.page_id: rank for rank, hit in reversed(list(enumerate(keyword)))}
    ranked = sorted(
        scores,
        key=lambda pk: (0, keyword_rank[pk], 0.0) if pk in exact else (1, 0, -scores[pk]),
    )
    pending = _pending(keyword, model.name if model is not None else "", exact)
    ranked, values = _place_pending(
        ranked, scores, pending, floor + bonus / KEYWORD_K, limit, first=exact
    )
    by_page = {hit.page_id: hit for hit in keyword}
    words = marked_words(parsed)
    hits = []
    for position, page_id in enumerate(ranked):
        score = round(
            max(2.0, EXACT_TITLE_SCORE - position / 100) if page_id in exact else values[position],
            4,
        )
        best = best_chunk.get(page_id)
        if best is None:
            hits.append(replace(by_page[page_id], score=score))
        else:
            hits.append(_chunk_hit(best, words, score=score, exact=page_id in exact))
    return hits


def _best_chunks(
    keyword: list[SearchHit], chunks: list[ChunkHit], similarity_floor: float
) -> dict[int, ChunkHit]:
    """Each page's best chunk, FUSION_DEPTH pages at most. A page found by meaning alone, and
    not near enough, is not about the question: a question the wiki cannot answer finds
    nothing rather than the 8 least unrelated pages."""
    found_by_words = {hit.page_id for hit in keyword}
    best_chunk: dict[int, ChunkHit] = {}
    for chunk in chunks:
        if chunk.similarity < similarity_floor and chunk.page_id not in found_by_words:
            continue
        if chunk.page_id not in best_chunk and len(best_chunk) < FUSION_DEPTH:
            best_chunk[chunk.page_id] = chunk
    return best_chunk


def _keyword_bonus(terms: int, language: str, model: Embedder | None) -> float:
    """The keyword ranking's weight. Words weigh less as the query grows: in a paragraph of
    context most of them are not what the question is about, while its meaning is still one
    vector; more in a language the model was not trained on, whose words say more."""
    bonus = KEYWORD_BONUS * min(1.0, LONG_QUERY_TERMS / max(terms, 1))
    if language and model is not None and model.languages and language not in model.languages:
        bonus *= FOREIGN_KEYWORD_WEIGHT
    return bonus


def _chunk_hit(best: ChunkHit, words: list[str], *, score: float, exact: bool) -> SearchHit:
    """The hit of a page found by meaning: its best chunk's excerpt (the query's words
    marked) and section."""
    return SearchHit(
        page_id=best.page_id,
        public_id=best.public_id,
        title=best.title,
        path=best.path,
        excerpt=tidy_excerpt(mark_words(best.text, words) or best.title),
        score=score,
        section=best.heading,
        exact_title=exact,
        language=best.language,
        fingerprint=best.fingerprint,
    )


def _pending(keyword: list[SearchHit], model: str, exact: set[int]) -> dict[int, int]:
    """The keyword hits whose live version `model` has not embedded yet (published since
    the last run of the task, or while the worker is down), by their place in the keyword
    ranking; exact titles come first anyway."""
    pending: dict[int, int] = {}
    seen: set[int] = set()
    for rank, hit in enumerate(keyword):
        if hit.page_id in seen:
            continue
        seen.add(hit.page_id)
        if model not in hit.embedded_by and hit.page_id not in exact:
            pending[hit.page_id] = rank
    return pending


def _place_pending(
    ranked: list[int],
    scores: dict[int, float],
    pending: dict[int, int],
    default: float,
    limit: int,
    *,
    first: set[int],
) -> tuple[list[int], list[float]]:
    """The `limit` best of `ranked` (by fused score), with each page whose vectors are
    `pending` at its place in the keyword ranking when that is better: until its vectors
    exist, such a page is missing from the semantic ranking through no fault of its own, so
    it ranks as it would with no model (a newly published page holding every word of the
    question is not pushed below pages that are merely near it). Returns the pages and their
    scores, descending (the pages put `first`, exact titles, score above any): a placed page
    scores between its neighbours."""
    position = {pk: n for n, pk in enumerate(ranked)}
    placed = sorted(
        (min(rank, position.get(pk, rank)), pk) for pk, rank in pending.items() if rank < limit
    )
    moved = {pk for _, pk in placed}
    order = [pk for pk in ranked if pk not in moved]
    for target, pk in placed:
        order.insert(min(target, len(order)), pk)
    order = order[:limit]
    values = [math.inf if pk in first else scores.get(pk, default) for pk in order]
    for n in reversed(range(len(order) - 1)):
        if order[n] in moved:
            values[n] = max(values[n], values[n + 1])
    for n in range(1, len(order)):
        if order[n] in moved:
            values[n] = min(values[n], values[n - 1])
    return order, values
