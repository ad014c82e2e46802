"""Full-text search over the live version of every page, for the web UI and the MCP tools.

One index table (`SearchDocument`); PostgreSQL searches it as a weighted tsvector, SQLite as
an FTS5 table. Both take the same query syntax and rank title above tags above body.

Choices, so that both databases behave alike:

- Text is indexed as plain text (markdown syntax removed) with English stemming: the
  PostgreSQL `english` configuration and SQLite's `porter` tokenizer, so "running" finds
  "runs". Words in other alphabets (Russian, Arabic, Greek...) are not stemmed but are
  found as whole words. Chinese, Japanese and Korean have no spaces between words, so every
  CJK character is indexed as a word of its own and a CJK query term is searched as a
  phrase of its characters: "世界" finds "你好世界". Accents: SQLite folds them ("cafe" finds
  "café"), PostgreSQL (without the unaccent extension) does not.
- Query syntax is web-search style, the syntax of PostgreSQL's `websearch_to_tsquery`:
  words must all appear, except English stop words (`STOP_WORDS`, dropped here for both
  engines); `"quoted words"` is a phrase; `-word` or `-"a phrase"` excludes; `OR` (any case)
  between two terms accepts either. The query is parsed here, once, and translated for each
  engine with every term quoted, so no input can cause a syntax error. Punctuation-only or
  exclusion-only queries find nothing. When fewer than 8 pages hold every term, pages
  holding most of them follow (see `RANKING`, the one ordering both engines use).
- Ranking: PostgreSQL `ts_rank` with weights A (title) 1.0, B (tags) 0.4, C (body) 0.1,
  which puts any page with a single-word query in its title above pages that have it only
  in their body. FTS5's `bm25` adds its column weights into one term frequency, so many
  body mentions can outweigh a title; on SQLite the score is therefore 2 for a match in the
  title, plus 1 for a match in the tags, plus bm25 squashed into [0, 1).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from wiki.indexed_text import CJK as _CJK
from wiki.indexed_text import CJK_GAP, MARK_END, MARK_START, document_fields
from wiki.language import UNKNOWN, query_language, wiki_languages
from wiki.models import Page
from wiki.plain_text import plain_text
from wiki.scope import Scope
from wiki.search.folding import copies_of, fold, names_title
from wiki.search.fusion import FUSION_DEPTH, LANGUAGE_BONUS, fuse, similarity_floor
from wiki.search.hits import Copy, SearchHit
from wiki.search.indexing import (
    index_new_pages,
    index_page,
    queue_embedding,
    reindex_all,
    remove_page,
    remove_pages,
)
from wiki.search.lexical import keyword_search
from wiki.search.query import ParsedQuery, cjk_terms, for_language, fts5_match, parse_query
from wiki.search.snippets import strip_marks, tidy_excerpt
from wiki.search.sql import Params, Within, covered_sql
from wiki.search.warmup import embedding_pool as _embedding_pool
from wiki.search.warmup import status, wait_for_warm_up, warm_up
from wiki.search_limits import time_limit
from wiki.semantic import embedder, nearest_chunks, query_vectors

__all__ = [
    "CJK_GAP",
    "MARK_END",
    "MARK_START",
    "_CJK",
    "Copy",
    "ParsedQuery",
    "SearchHit",
    "_embedding_pool",
    "cjk_terms",
    "copies_of",
    "document_fields",
    "fold",
    "fts5_match",
    "index_new_pages",
    "index_page",
    "keyword_search",
    "names_title",
    "parse_query",
    "plain_text",
    "queue_embedding",
    "reindex_all",
    "remove_page",
    "remove_pages",
    "search_pages",
    "status",
    "strip_marks",
    "tidy_excerpt",
    "wait_for_warm_up",
    "warm_up",
]


def search_pages(
    query: str,
    *,
    scope: Scope | None = None,
    page_ids: Iterable[int] | QuerySet[Page] | None = None,
    limit: int = 20,
    semantic: bool = True,
    fold_copies: bool = False,
) -> list[SearchHit]:
    """Live, non-archived pages matching `query`, best first: hybrid when a model is there.

    Keyword ranking (see RANKING): pages holding every term come first; when they are fewer
    than `PARTIAL_BELOW` (and the query has three terms or more), pages holding most of the
    terms follow. With an embedding model (and `semantic`), that ranking is fused with the
    pages of the chunks nearest to the query (`fuse`), both found inside the same scope.
    Without one, or with `semantic=False`, the keyword ranking alone.

    `scope` restricts the search to what a reader may see (wiki.scope; its roots and ranges
    go into the SQL as arrays, so the query's text is the same whatever the set's size);
    `page_ids` to Page primary keys or a QuerySet of Page rows (a subquery). Hits' paths
    are the pages' own: a reader's Scope shows them as `scope.shown(path, hidden_prefix)`
    (`hidden_prefix` read in one query more when the reader's read grants could hide a page
    above a hit: see `_with_hidden_prefixes`).

    Each hit's `excerpt` is about 200 characters of plain text around the best match in the
    body (the start of the body when only the title or tags match), with every matched word
    wrapped in `[[[` and `]]]` (the indexed text never contains those sequences itself);
    the text is not HTML-escaped. The web UI escapes it, then turns the markers into
    <mark>; the MCP tool strips them (`strip_marks`), so agents get plain text. `score` is
    higher for better hits, rounded to 4 decimals, and comparable only within one database
    engine. Excerpts are made for the hits returned only, after ranking.

    `fold_copies` (the MCP tool, the web search): near-identical pages with one title come
    as one hit naming the others (`copies`), and pages with no text follow those with text
    (`fold`).
    """
    parsed = parse_query(query)
    if not parsed.groups or limit <= 0:
        return []
    within: Within = None
    if scope is not None:
        if scope.is_empty:
            return []
        within = None if scope.unrestricted else scope
    elif page_ids is not None:
        if not isinstance(page_ids, QuerySet):
            ids = sorted({int(pk) for pk in page_ids})
            page_ids = Page.objects.filter(pk__in=ids) if ids else Page.objects.none()
        if page_ids.model is not Page:
            raise TypeError("page_ids must be a QuerySet of Page rows")
        if page_ids.query.is_empty():
            return []
        within = page_ids.order_by()
    with time_limit(settings.QUIRE_SEARCH_TIMEOUT_MS):
        languages = wiki_languages()
        language = query_language(query, languages)
        # The wiki's one language, when it has one: what the similarity floor and the
        # choice among copies go by.
        main = language or next(iter(languages), UNKNOWN)
        # Words of a language whose endings the index does not stem also match by their stem;
        # a question in a language the model does not read needs fewer of its words.
        parsed = for_language(parsed, main)
        # Folding leaves fewer hits: it starts from as many as the fusion weighs.
        depth = max(limit, FUSION_DEPTH) if fold_copies else limit
        hits = _ranked(query, parsed, within, depth, semantic=semantic, languages=(language, main))
        if fold_copies:
            hits = fold(hits, copies_of(hits, within), query=query, language=main)
        return _with_hidden_prefixes(hits[:limit], scope)


def _ranked(
    query: str,
    parsed: ParsedQuery,
    within: Within,
    limit: int,
    *,
    semantic: bool,
    languages: tuple[str, str],
) -> list[SearchHit]:
    """The keyword ranking, fused with the semantic one when there is a model (see
    search_pages); `languages`: the question's among the wiki's, and the same or the wiki's
    one language."""
    language, main = languages
    if not semantic or embedder() is None:
        return keyword_search(query, parsed, within, limit, language=language)
    # The query is embedded (on the CPU, the GIL released) while PostgreSQL or SQLite
    # ranks its words: hybrid costs the longer of the two, not their sum.
    vectors = _embedding_pool().submit(query_vectors, " ".join(query.split()))
    keyword = keyword_search(query, parsed, within, max(limit, FUSION_DEPTH), language=language)
    params = Params()
    covered = None if within is None else covered_sql(within, params, connection.vendor, live=True)
    single_pages = isinstance(within, Scope) and not any(lo < hi for lo, hi in within.ranges())
    chunks = nearest_chunks(
        " ".join(query.split()),
        covered,
        params,
        language=language,
        language_bonus=LANGUAGE_BONUS,
        single_pages=single_pages,
        vectors=vectors.result(),
    )
    return fuse(
        parsed,
        keyword,
        chunks,
        limit,
        language=language,
        similarity_floor=similarity_floor(main),
    )


def _with_hidden_prefixes(hits: list[SearchHit], scope: Scope | None) -> list[SearchHit]:
    """`hits` (and their copies) with the start of each path that names pages hidden from the
    reader of `scope` (wiki.scope.hidden_prefix_sql): one query, and none without hits or
    when no read grant can hide a page above one the reader sees. Read after ranking, for the
    hits alone, so that neither search statement (nor its plan) carries it."""
    if scope is None or not scope.reader or not hits:
        return hits
    pages = [hit.page_id for hit in hits] + [c.page_id for hit in hits for c in hit.copies]
    prefixes = dict(
        Page.objects.filter(pk__in=pages)
        .annotate(hidden_prefix=scope.hidden_prefix())
        .values_list("pk", "hidden_prefix")
    )
    return [
        replace(
            hit,
            hidden_prefix=prefixes.get(hit.page_id, 0),
            copies=tuple(
                replace(copy, hidden_prefix=prefixes.get(copy.page_id, 0)) for copy in hit.copies
            ),
        )
        for hit in hits
    ]
