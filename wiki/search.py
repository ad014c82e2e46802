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

import json
import logging
import math
import os
import re
import threading
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import connection, transaction
from django.db.models import (
    Prefetch,
    QuerySet,
)
from kombu.exceptions import OperationalError as BrokerError

from config.replicas import read_connection
from wiki.copies import EMPTY, fingerprint, same_page
from wiki.language import (
    UNKNOWN,
    count_languages,
    folder_languages,
    likelier_language,
    load_model,
    note_languages,
    page_language,
    query_language,
    read_in_background,
    wait_for_reading,
    wiki_languages,
)
from wiki.models import Attachment, Page, SearchDocument, Version
from wiki.plain_text import plain_text
from wiki.scope import READABLE, SPELLED_OUT_MAX, Scope, readable_sql, tree_key_sql
from wiki.search_limits import search_rows, time_limit
from wiki.semantic import ChunkHit, embedder, nearest_chunks, query_vectors
from wiki.semantic import status as semantic_status
from wiki.tasks import embed_pages

CONFIG = "english"
# ts_rank weights in PostgreSQL's order: D (unused), C (body), B (tags), A (title).
PG_WEIGHTS = [0.0, 0.1, 0.4, 1.0]
# bm25 weights in column order: title, tags, body.
FTS5_WEIGHTS = (10.0, 5.0, 1.0)
FTS_TABLE = "wiki_searchdocument_fts"
# Bounds the tsvector well under PostgreSQL's 1 MB limit and the cost of an excerpt.
BODY_INDEX_MAX = 300_000
MAX_TERMS = 32
EXCERPT_CHARS = 200
MARK_START, MARK_END = "[[[", "]]]"


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


# --- indexing -------------------------------------------------------------------------------


def index_page(page: Page) -> None:
    """Bring the index row of `page` in line with its live version (or drop it).

    Called inside the service transactions; costs 2 or 3 queries (the attachments' text,
    then an UPDATE, or an INSERT when the page was not indexed yet).
    """
    version = None if page.archived else page.live_version
    if version is None:
        remove_page(page)
        return
    attachments = Attachment.objects.filter(page_id=page.pk).values_list("name", "extracted_text")
    document = _document(page, version, attachments)
    updated = SearchDocument.objects.filter(page_id=page.pk).update(
        title=document.title,
        tags=document.tags,
        body=document.body,
        language=document.language,
        fingerprint=document.fingerprint,
    )
    if not updated:
        document.save(force_insert=True)
    note_languages([document.language or ""])
    queue_embedding([page.pk])


def index_new_pages(pages: Iterable[Page]) -> None:
    """Index pages that went live as they were created, in one INSERT.

    New pages have no index row and no attachments yet, so nothing needs to be read first.
    """
    documents = []
    for page in pages:
        assert page.live_version is not None and not page.archived
        documents.append(_document(page, page.live_version))
    SearchDocument.objects.bulk_create(documents)
    note_languages(document.language or "" for document in documents)
    queue_embedding([document.page_id for document in documents])


def queue_embedding(page_ids: list[int]) -> None:
    """Chunk and embed these pages once the transaction commits (a Celery task; in process
    without Redis), so that no write waits for the model."""
    if page_ids:
        transaction.on_commit(lambda: _send_to_embed(page_ids))


def _send_to_embed(page_ids: list[int]) -> None:
    try:
        embed_pages.delay(page_ids)
    except BrokerError as exc:
        # The write has committed; a broker outage must not turn it into an error. The pages
        # keep their keyword index; `manage.py embed_pages` embeds what was missed.
        logging.getLogger(__name__).warning(
            "The task broker is unavailable (%s); %d page(s) wait to be embedded: run "
            "'python manage.py embed_pages' once it is back.",
            exc,
            len(page_ids),
        )


def _document(
    page: Page, version: Version, attachments: Iterable[tuple[str, str]] = ()
) -> SearchDocument:
    """The index row of `page` showing `version` (unsaved)."""
    title, tags, body = document_fields(
        title=version.title, tags=version.tags, body=version.body, attachments=attachments
    )
    language = page_language(version.title, version.body, page.path)
    return SearchDocument(
        page_id=page.pk,
        title=title,
        tags=tags,
        body=body,
        language=language,
        fingerprint=fingerprint(body),
    )


def remove_page(page: Page) -> None:
    """Drop `page` from the index (archived, or no live version)."""
    remove_pages([page.pk])


def remove_pages(page_ids: Iterable[int]) -> None:
    """Drop these pages (by primary key) from the index, in one query."""
    SearchDocument.objects.filter(page_id__in=list(page_ids)).delete()


@transaction.atomic
def reindex_all() -> int:
    """Rebuild the whole index from the live versions; returns the number of pages indexed."""
    SearchDocument.objects.all().delete()
    pages = (
        Page.objects.readable()
        .select_related("live_version")
        .prefetch_related(
            Prefetch(
                "attachments", queryset=Attachment.objects.only("page_id", "name", "extracted_text")
            )
        )
        .order_by("pk")
    )
    batch: list[SearchDocument] = []
    count = 0
    for page in pages.iterator(chunk_size=200):
        version = page.live_version
        assert version is not None
        title, tags, body = document_fields(
            title=version.title,
            tags=version.tags,
            body=version.body,
            attachments=[(a.name, a.extracted_text) for a in page.attachments.all()],
        )
        language = page_language(version.title, version.body, page.path)
        batch.append(
            SearchDocument(
                page_id=page.pk,
                title=title,
                tags=tags,
                body=body,
                language=language,
                fingerprint=fingerprint(body),
            )
        )
        if len(batch) >= 200:
            count += _insert_documents(batch)
            batch = []
    count += _insert_documents(batch)
    count_languages()
    if connection.vendor == "sqlite":
        # Repairs the FTS table even if it had drifted from its content table.
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")  # noqa: S608
    return count


def _insert_documents(documents: list[SearchDocument]) -> int:
    # A page approved meanwhile has indexed itself with newer text: keep that row.
    SearchDocument.objects.bulk_create(documents, ignore_conflicts=True)
    return len(documents)


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
    return _index_text(title), _index_text(", ".join(tags)), _index_text(full_body)


# The indexed text must not contain the excerpt markers themselves.
_NOT_A_MARK = re.compile(r"\[{3,}|\]{3,}")


def _index_text(text: str) -> str:
    return _space_cjk(_NOT_A_MARK.sub(lambda m: m[0][:2], text))


# Han, kana and Hangul: every character is indexed as a word, split from the next by this
# punctuation space, which both engines read as a separator and no one types; excerpts
# drop it again, so the text's own spaces survive.
CJK_GAP = "\u2008"
# Han, kana and Hangul: scripts written (mostly) without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
_CJK_GAP = re.compile(f"(?<=[{_CJK}])(?=[{_CJK}])")


def _space_cjk(text: str) -> str:
    return _CJK_GAP.sub(CJK_GAP, text)


def _unspace_cjk(text: str) -> str:
    """Drop the gaps `_space_cjk` made, keeping the text's own spaces (Korean has them)."""
    text = text.replace(CJK_GAP + MARK_START, MARK_START).replace(MARK_END + CJK_GAP, MARK_END)
    return text.replace(CJK_GAP, "").replace(MARK_END + MARK_START, "")


# --- the query ----------------------------------------------------------------------------


@dataclass
class ParsedQuery:
    """AND of groups, each an OR of phrases; `excluded` phrases must not appear."""

    groups: list[list[str]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    # How many groups are CJK character pairs that likely span two words (see `cjk_terms`):
    # a page holding most of a question's terms need not hold those.
    spanning: int = 0


_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
_TOKEN = re.compile(r'(?P<neg>-?)"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+)')


# PostgreSQL's `english` stop words (its snowball list): they need not match, on either
# database. A query made only of them keeps them (and finds nothing on PostgreSQL).
STOP_WORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what which
    who whom this that these those am is are was were be been being have has had having do
    does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on
    off over under again further then once here there when where why how all any both each
    few more most other some such no nor not only own same so than too very s t can will
    just don should now
    """.split()
)


# What is left of an English contraction once its apostrophe splits it: "I'm", "we've".
CONTRACTION_PARTS = frozenset({"m", "re", "ve", "ll", "d", "s", "t", "n"})
_WORD_PART = re.compile(r"[^\W_]+")


def word_parts(word: str) -> list[str]:
    """The parts of `word` between punctuation that carry meaning, each once, in order.

    Stop words and the remains of contractions are left out, so "I'm" has none, "1:1" is
    ["1"] and "ssh-keygen" is ["ssh", "keygen"].
    """
    apostrophe = "'" in word or "\u2019" in word
    dropped = STOP_WORDS | CONTRACTION_PARTS if apostrophe else STOP_WORDS
    found = _WORD_PART.findall(word)
    parts = dict.fromkeys(part for part in found if part.lower() not in dropped)
    return list(parts)


def parse_query(query: str) -> ParsedQuery:
    """Parse web-search syntax; terms without a letter or digit are dropped.

    `OR` joins the two terms either side of it when neither is an exclusion, and is
    ignored otherwise; it binds tighter than the implicit AND: `a b OR c d` means
    a AND (b OR c) AND d.
    """
    parsed = ParsedQuery()
    stop_words: list[str] = []
    last_was_positive = or_pending = False
    terms = 0
    # A NUL ends an FTS5 string early and PostgreSQL refuses it in text.
    for match in _TOKEN.finditer(_CONTROL_CHARS.sub(" ", query)):
        negated = bool(match["neg"])
        text = match["phrase"]
        if text is None:
            text = match["word"]
            if text.lower() == "or":
                or_pending = last_was_positive
                continue
            if text.startswith("-") and len(text) > 1:
                negated, text = True, text[1:]
        if not any(ch.isalnum() for ch in text) or terms >= MAX_TERMS:
            continue
        terms += 1
        phrase = _space_cjk(" ".join(text.split()))
        parts = word_parts(text) if match["word"] is not None else [text]
        if match["word"] is not None and not negated and not parts:
            stop_words.append(phrase)
            last_was_positive, or_pending = False, False
            continue
        bare = match["word"] is not None and not negated and not or_pending
        split = cjk_terms(parts) if bare else None
        if split:
            # A question typed without spaces (Japanese, Chinese): its words, each needed.
            pieces, spanning = split
            pieces = pieces[: max(1, MAX_TERMS - len(parsed.groups))]
            parsed.groups.extend([_space_cjk(piece)] for piece in pieces)
            parsed.spanning += min(spanning, len(pieces) // 2)
            # An OR beside it would join one of its pieces only: it is ignored.
            last_was_positive, or_pending = False, False
            continue
        if negated:
            parsed.excluded.append(phrase)
        elif or_pending or len(parts) == 1:
            alternatives = [phrase]
            if match["word"] is not None and parts[0] != "".join(_WORD_PART.findall(text)):
                alternatives.append(_space_cjk(parts[0]))
            if or_pending:
                parsed.groups[-1].extend(alternatives)
            else:
                parsed.groups.append(alternatives)
        else:
            # "1:1" or "ssh-keygen": each part must appear, or the word as the engine's
            # tokenizer keeps it whole ("archive.tar.gz" is one token on PostgreSQL).
            parsed.groups.extend([_space_cjk(part), phrase] for part in parts)
        last_was_positive, or_pending = not negated, False
    if not parsed.groups:
        parsed.groups = [[word] for word in stop_words]
    return parsed


# A run of CJK characters up to this long is searched as one word (the phrase of its
# characters); a longer one is taken for a question typed without spaces and split.
CJK_WORD_MAX = 4
_CJK_RUN = re.compile(f"[{_CJK}]+")
_HANGUL = re.compile("[\uac00-\ud7af]+")
# Chinese question words and sentence-final particles, left out of a question as English stop
# words are ("如何删除文件" needs 删除 and 文件, not 如何): only those that are never part of
# another word a question would ask for.
_CJK_STOP_WORDS = re.compile(
    "为什么|怎么样|如何|怎么|怎样|什么|哪些|哪个|哪里|是否|能否|可以|请问|我想|我要|[吗呢吧]"
)
# Scripts a CJK run is split between: hiragana (with its marks), katakana (with the
# prolonged sound mark), Hangul, and Han (with the iteration mark).
_CJK_SCRIPTS = re.compile(
    "(?P<hiragana>[\u3041-\u309f]+)|(?P<katakana>[\u30a0-\u30ff]+)"
    "|(?P<hangul>[\uac00-\ud7af]+)|(?P<han>[^\u3041-\u30ff\uac00-\ud7af]+)"
)


def cjk_terms(parts: Sequence[str]) -> tuple[list[str], int] | None:
    """The terms of a word holding a run of more than CJK_WORD_MAX CJK characters, or CJK
    characters and others (a question typed without spaces, "ファイルを圧縮する方法", "如何压缩
    文件", "如何使用tar命令"), and how many of them likely span two words; None for any other
    word, searched as today.

    No dictionary: the run is cut where its script changes (katakana words, Han words,
    Hangul), hiragana left out as particles and endings (を, する, には), unless the run has
    nothing else, and Chinese question words (如何, 怎么, 吗: `_CJK_STOP_WORDS`); a Han
    stretch longer than two characters becomes its overlapping pairs (Chinese words are
    mostly two characters: 删除文件 is 删除 除文 文件), of which about every other one spans
    two words. Text between the runs (Latin letters, digits) stays, and every run of the
    word is cut so ("如何使用tar命令": 使用 tar 命令).
    """
    runs = [run for part in parts for run in _CJK_RUN.findall(part)]
    mixed = any(_CJK_RUN.sub("", part) for part in parts if _CJK_RUN.search(part))
    if not any(_HANGUL.sub("", run) for run in runs):
        return None  # Korean, written with spaces, keeps its words whole ("tar로")
    if not (mixed or any(len(run) > CJK_WORD_MAX for run in runs)):
        return None
    terms: list[str] = []
    spanning = 0
    for part in parts:
        start = 0
        for run in _CJK_RUN.finditer(part):
            terms += _WORD_PART.findall(part[start : run.start()])
            start = run.end()
            pieces = [m for m in _CJK_SCRIPTS.finditer(run[0]) if m.lastgroup != "hiragana"]
            if not pieces:
                terms.append(run[0])
            for piece in pieces:
                if piece.lastgroup != "han":
                    terms.append(piece[0])
                    continue
                for text in _CJK_STOP_WORDS.split(piece[0]):
                    if len(text) <= 2:
                        terms += [text] if text else []
                        continue
                    pairs = [text[n : n + 2] for n in range(len(text) - 1)]
                    terms += pairs
                    spanning += len(pairs) // 2
        terms += _WORD_PART.findall(part[start:])
    unique = list(dict.fromkeys(term for term in terms if term.lower() not in STOP_WORDS))
    if not unique:
        return None  # only question words: searched as they are
    return unique, min(spanning, len(unique) // 2)


def _fts5_string(phrase: str) -> str:
    return '"' + phrase.replace('"', '""') + '"'


def fts5_match(parsed: ParsedQuery) -> str:
    """The FTS5 MATCH expression; every term is a quoted string, so it always parses."""
    groups = ["(" + " OR ".join(_fts5_string(p) for p in group) + ")" for group in parsed.groups]
    expression = "(" + " AND ".join(groups) + ")"
    for phrase in parsed.excluded:
        expression += " NOT " + _fts5_string(phrase)
    return expression


def pg_search_queries(parsed: ParsedQuery) -> tuple[SearchQuery, SearchQuery | None]:
    """The tsqueries to match and to exclude: `phraseto_tsquery` per term, joined by && and ||.

    Exclusions are a separate query (used as NOT @@) so that a term reduced to nothing by
    the stop-word list never turns "the -foo" into "everything without foo".
    """

    def term(phrase: str) -> SearchQuery:
        return SearchQuery(phrase, config=CONFIG, search_type="phrase")

    def any_of(phrases: list[str]) -> SearchQuery:
        query = term(phrases[0])
        for phrase in phrases[1:]:
            query = query | term(phrase)  # type: ignore[assignment]
        return query

    matched = any_of(parsed.groups[0])
    for group in parsed.groups[1:]:
        matched = matched & any_of(group)  # type: ignore[assignment]
    return matched, any_of(parsed.excluded) if parsed.excluded else None


# --- searching ------------------------------------------------------------------------------


# What a search may return: every readable page (None), a reader's Scope, or a QuerySet's
# rows (readable ones only).
Within = Scope | QuerySet[Page] | None

# The ranking, best first, the same on both databases; each engine computes the columns:
# - title_equals: the page's title is the query itself (case and spacing aside);
# - matched: how many of the query's terms (stop words left out) the page holds;
# - title_hits: how many of them its title holds, so that a title naming what the question
#   asks about comes before pages that only mention its words (however often);
# - same_language: the page is in the query's language (wiki.language), or in none that
#   could be told (mostly code, or nearly empty), so that among translations of one page,
#   which hold the same commands and title, the reader's comes first; true for every page
#   when the wiki has a single language;
# - score: the engine's relevance, title above tags above body (see the module docstring).
RANKING = (
    "title_equals DESC",
    "matched DESC",
    "title_hits DESC",
    "same_language DESC",
    "score DESC",
    "page_id",
)
ORDER_BY = "ORDER BY " + ", ".join(RANKING)
# Below this many hits holding every term, hits holding most terms follow.
PARTIAL_BELOW = 8


def most_of(terms: int) -> int:
    """How many of `terms` a partial hit must hold: more than half, and never all."""
    return terms // 2 + 1


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
    params = _Params()
    covered = None if within is None else _covered_sql(within, params, connection.vendor, live=True)
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


_warming: list[threading.Thread] = []
_fork_safe = False


def warm_up() -> None:
    """Load, on threads of their own, what a process's first search would otherwise load on
    its path: the language model (0.4 s), the embedding model (0.2 s, none when search is
    keyword-only) and the wiki's languages (15 to 20 ms at 116,000 pages). A server process
    calls it as it starts (config/wsgi.py); a search that comes meanwhile waits for what it
    needs rather than loading it a second time, and one that comes after a failed loading
    loads it itself."""
    global _fork_safe
    if not _fork_safe:
        # A server that forks its workers after loading the app (gunicorn --preload, so that
        # they share one copy of the models) must not fork while these threads hold a lock
        # or a connection: a worker forked then hung on its first search. The fork waits
        # for them (a second at most); the workers then start with the models loaded.
        os.register_at_fork(before=wait_for_warm_up)
        _fork_safe = True
    read_in_background()
    thread = threading.Thread(target=_load_models, name="quire-search-warm-up", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # the first search loads them
        return
    _warming.append(thread)


def _load_models() -> None:
    try:
        load_model()
        embedder()
    except Exception:
        logging.getLogger(__name__).warning(
            "Could not load the search's models as the process started; the first search "
            "loads them.",
            exc_info=True,
        )


def wait_for_warm_up() -> None:
    """Wait for what `warm_up` started (for tests)."""
    while _warming:
        _warming.pop().join()
    wait_for_reading()


# Threads that embed queries beside their keyword ranking (`search_pages`), a pool per
# process (a forked worker starts its own): as many as searches that may run at once in a
# gunicorn worker's threads; each embedding uses one ONNX thread.
EMBEDDING_THREADS = 8
_pool: tuple[int, ThreadPoolExecutor] | None = None
_pool_lock = threading.Lock()


def _embedding_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (
                os.getpid(),
                ThreadPoolExecutor(EMBEDDING_THREADS, thread_name_prefix="quire-embed"),
            )
        return _pool[1]


def status() -> dict[str, str]:
    """For /healthz: how search ranks (wiki.semantic.status) and, with a model, its languages
    and what a question in another language finds."""
    said = semantic_status()
    model = embedder()
    if model is None:
        return said
    if model.languages is None:
        said["languages"] = "many"
        said["otherLanguages"] = (
            "A question in a language the model was not trained on finds the pages holding "
            "its words, ranked by them and by the little meaning the model draws from it."
        )
        return said
    said["languages"] = ", ".join(sorted(model.languages))
    said["otherLanguages"] = (
        "A question in another language finds the pages holding its words, ranked by them: "
        "in a script the model reads letter by letter (Chinese, Japanese, Korean, Cyrillic, "
        "Arabic...) by its words alone; in one it reads as word pieces (French, Spanish...) "
        f"by its words, weighted {FOREIGN_KEYWORD_WEIGHT:g} times more than in English, and "
        "by the little meaning the model draws from it (the nearest pages are kept however "
        "far). Pages in the question's language come first among equal hits; Japanese and "
        "Chinese questions typed without spaces are split into their words."
    )
    return said


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


def keyword_search(
    query: str, parsed: ParsedQuery, within: Within, limit: int, *, language: str = UNKNOWN
) -> list[SearchHit]:
    """The keyword ranking alone (see RANKING): full hits, then partial ones when few;
    `language` is the query's (wiki.language), preferred among otherwise equal hits."""
    search = _search_postgres if read_connection().vendor == "postgresql" else _search_sqlite
    title = _index_text(" ".join(_CONTROL_CHARS.sub(" ", query).split()))
    hits = search(parsed, within, limit, title=title, partial=False, language=language)
    terms = len(parsed.groups)
    if len(hits) < min(limit, PARTIAL_BELOW) and terms >= 3:
        partial = search(
            parsed, within, limit - len(hits), title=title, partial=True, language=language
        )
        hits += [replace(hit, every_term=False) for hit in partial]
    return hits


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
# know (French for the English default): its similarities are weaker evidence.
FOREIGN_KEYWORD_WEIGHT = 4.0


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
    # A page found by meaning alone, and not near enough, is not about the question: a
    # question the wiki cannot answer finds nothing rather than the 8 least unrelated pages.
    found_by_words = {hit.page_id for hit in keyword}
    best_chunk: dict[int, ChunkHit] = {}
    for chunk in chunks:
        if chunk.similarity < similarity_floor and chunk.page_id not in found_by_words:
            continue
        if chunk.page_id not in best_chunk and len(best_chunk) < FUSION_DEPTH:
            best_chunk[chunk.page_id] = chunk
    scores = {page_id: chunk.similarity for page_id, chunk in best_chunk.items()}
    floor = min(scores.values(), default=0.0)
    # Words weigh less as the query grows: in a paragraph of context most of them are
    # not what the question is about, while its meaning is still one vector.
    terms = len(parsed.groups)
    bonus = KEYWORD_BONUS * min(1.0, LONG_QUERY_TERMS / max(terms, 1))
    model = embedder()
    if language and model is not None and model.languages and language not in model.languages:
        # A question in a language the model was not trained on: its words say more.
        bonus *= FOREIGN_KEYWORD_WEIGHT
    for rank, hit in enumerate(keyword[:FUSION_DEPTH]):
        share = 1.0 if hit.every_term else PARTIAL_WEIGHT
        scores[hit.page_id] = scores.get(hit.page_id, floor) + bonus * share / (
            KEYWORD_K + rank + 1
        )
    by_page = {hit.page_id: hit for hit in keyword}
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
    words = _marked_words(parsed)
    hits = []
    for position, page_id in enumerate(ranked):
        score = round(
            max(2.0, EXACT_TITLE_SCORE - position / 100) if page_id in exact else values[position],
            4,
        )
        best = best_chunk.get(page_id)
        if best is None:
            hits.append(replace(by_page[page_id], score=score))
            continue
        hits.append(
            SearchHit(
                page_id=page_id,
                public_id=best.public_id,
                title=best.title,
                path=best.path,
                excerpt=tidy_excerpt(mark_words(best.text, words) or best.title),
                score=score,
                section=best.heading,
                exact_title=page_id in exact,
                language=best.language,
                fingerprint=best.fingerprint,
            )
        )
    return hits


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


# --- copies -------------------------------------------------------------------------------

# At most this many copies of the hits are read (25 language folders of 8 hits, say).
COPIES_MAX = 400


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


def copies_of(hits: Sequence[SearchHit], within: Within) -> list[Copy]:
    """The pages `within` whose text has the fingerprint of one of `hits` (wiki.copies): the
    copies of a hit that the ranking left out, so that a question finds the page a reader
    wants among them all (an original, or the copy in the question's language), not the
    copy that tied first. One statement, on the fingerprint's index; none when no hit has
    text."""
    prints = sorted({hit.fingerprint for hit in hits if hit.fingerprint})
    if not prints:
        return []
    vendor = connection.vendor
    params = _Params()
    ctes = in_scope = ""
    if _only_read_grants(within):
        assert isinstance(within, Scope)
        visible = within.visible_page_sql("d.page_id", vendor)
        in_scope = f"AND {visible}" if visible else ""
    elif within is not None:
        ctes = f"WITH covered(id) AS ({_covered_sql(within, params, vendor)})"
        in_scope = "AND d.page_id IN (SELECT id FROM covered)"
    if vendor == "postgresql":
        wanted = f"d.fingerprint = ANY({params.add(prints)})"
    else:
        listed = params.add(json.dumps(prints))
        wanted = f"d.fingerprint IN (SELECT value FROM json_each({listed}))"  # noqa: S608
    sql = f"""
        {ctes}
        SELECT d.page_id, p.public_id, p.title, p.path, d.fingerprint
        FROM wiki_searchdocument d JOIN wiki_page p ON p.id = d.page_id
        WHERE {wanted} AND {readable_sql("p")} {in_scope}
        ORDER BY p.path
        LIMIT {COPIES_MAX}
    """  # noqa: S608 - only constants are interpolated; values go in as parameters
    return [Copy(*row) for row in search_rows(sql, params)]


def fold(
    hits: list[SearchHit], copies: list[Copy], *, query: str, language: str
) -> list[SearchHit]:
    """`hits` with each page's copies (near-identical text, same title: wiki.copies) as one
    hit, at the place of the best of them, standing for the copy a reader of `query` wants:
    the one in a folder of the question's language (`language`, or one of the folders' that
    the question is clearly in), else one in no language's folder, the shallowest first; the
    others are its `copies`. Pages with no text (a folder's page) follow the pages with text,
    unless the question names them (`names_title`); scores stay in descending order."""
    groups: list[list[SearchHit]] = []
    for hit in hits:
        key = (hit.title, hit.fingerprint)
        group = next((g for g in groups if same_page((g[0].title, g[0].fingerprint), key)), None)
        if group is None:
            groups.append([hit])
        else:
            group.append(hit)
    folded = [_one_of(group, copies, query=query, language=language) for group in groups]
    empty = [
        hit.fingerprint == EMPTY and not (hit.exact_title or names_title(query, hit.title))
        for hit in folded
    ]
    ordered = [hit for hit, no_text in zip(folded, empty, strict=True) if not no_text]
    ordered += [hit for hit, no_text in zip(folded, empty, strict=True) if no_text]
    for n in range(1, len(ordered)):
        if ordered[n].score > ordered[n - 1].score:
            ordered[n] = replace(ordered[n], score=ordered[n - 1].score)
    return ordered


def names_title(query: str, title: str) -> bool:
    """Whether `query` names the page `title`: at least half of the title's words are among
    the question's. A page with no text is only its title, so it answers a question that asks
    for it by name ("can we publish our code as open source" names "Open source policy", a
    redirect's page) and none that does not (a language folder's "Zh hans")."""
    words = set(_WORDS.findall(title.casefold()))
    asked = set(_WORDS.findall(query.casefold()))
    return bool(words) and 2 * len(words & asked) >= len(words)


_WORDS = re.compile(r"\w+")


def _one_of(group: list[SearchHit], copies: list[Copy], *, query: str, language: str) -> SearchHit:
    """The hit standing for `group` (hits of one page's copies, best first) and the copies
    the ranking left out (see fold)."""
    best = group[0]
    found = {hit.page_id for hit in group}
    others = [
        copy
        for copy in copies
        if copy.page_id not in found
        and same_page((best.title, best.fingerprint), (copy.title, copy.fingerprint))
    ]
    if len(group) == 1 and not others:
        return best
    pages = [Copy(h.page_id, h.public_id, h.title, h.path, h.fingerprint) for h in group]
    pages += others
    named = {page.page_id: folder_languages(page.path) for page in pages}
    wanted = likelier_language(query, language, set().union(*named.values()))

    def preference(page: Copy) -> tuple[int, int]:
        languages = named[page.page_id]
        fits = 0 if wanted in languages else 1 if not languages else 2
        return fits, page.path.count("/")

    ordered = sorted(pages, key=preference)  # stable: the best ranked first among equals
    chosen, rest = ordered[0], tuple(ordered[1:])
    source = next((hit for hit in group if hit.page_id == chosen.page_id), None)
    if source is not None:
        return replace(source, score=best.score, exact_title=best.exact_title, copies=rest)
    # The copy's text is the best hit's: its excerpt and section hold for it.
    return replace(
        best,
        page_id=chosen.page_id,
        public_id=chosen.public_id,
        title=chosen.title,
        path=chosen.path,
        copies=rest,
    )


def _marked_words(parsed: ParsedQuery) -> list[str]:
    words = []
    for group in parsed.groups:
        for phrase in group:
            for word in _WORD_PART.findall(phrase.replace(CJK_GAP, "")):
                if word.lower() not in STOP_WORDS:
                    words.append(word)
    return list(dict.fromkeys(words))


def mark_words(text: str, words: Sequence[str]) -> str:
    """`text` with each word starting like one of `words` wrapped in [[[ ]]] (a stand-in for
    stemming: "leave" marks "leaves")."""
    text = _NOT_A_MARK.sub(lambda m: m[0][:2], text)
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


def chunks_sql(page: str, vendor: str) -> str:
    """A column of the chunks of page row `page`'s live version as JSON, `[[position,
    heading, text, model], ...]`, for `section_from` and `models_from`: the hits' sections,
    and whether their vectors exist yet, come in the search's own statement (NULL for a page
    not chunked yet)."""
    group, array = (
        ("json_agg", "json_build_array")
        if vendor == "postgresql"
        else ("json_group_array", "json_array")
    )
    return (
        f"(SELECT {group}({array}(c.position, c.heading, c.text, c.model)) "  # noqa: S608 - aliases only
        f"FROM wiki_pagechunk c WHERE c.page_id = {page}.id "
        f"AND c.version_id = {page}.live_version_id)"
    )


def section_from(chunks: Any, excerpt: str) -> str | None:
    """The section of a hit whose excerpt is `excerpt`, from its `chunks_sql` column (JSON
    text on SQLite, parsed already on PostgreSQL). The one place a hit's section is derived
    from its page's chunks (wiki/semantic.py)."""
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


_PLACEHOLDER = re.compile(r"%%|%s")


class _Params(dict[str, Any]):
    """Named query parameters: `add` stores a value and returns its placeholder."""

    def add(self, value: Any) -> str:
        name = f"p{len(self)}"
        self[name] = value
        return f"%({name})s"


def _bind(sql: str, values: Iterable[Any], params: _Params) -> str:
    """`sql` with its %s placeholders turned into named ones holding `values`."""
    pending = iter(values)
    return _PLACEHOLDER.sub(lambda m: m[0] if m[0] == "%%" else params.add(next(pending)), sql)


def _only_read_grants(within: Within) -> bool:
    """Every readable page but what the reader's read grants hide (a person's search): the
    search leaves those out by id, and needs no set of covered pages."""
    return isinstance(within, Scope) and within.everything and within.under is None


def _covered_sql(within: Within, params: _Params, vendor: str, *, live: bool = False) -> str:
    """A query for the ids of the readable pages `within` allows; with `live`, each with its
    live version's id too (the vector search reads a set's chunks of those versions)."""
    columns = "p.id, p.live_version_id" if live else "p.id"
    if isinstance(within, QuerySet):
        ids = within.filter(READABLE).values(*(("pk", "live_version_id") if live else ("pk",)))
        sql, scope_params = ids.query.get_compiler(using=ids.db).as_sql()
        return _bind(sql, scope_params, params)
    assert within is not None
    if _only_read_grants(within):
        return f"SELECT {columns} FROM wiki_page p WHERE {within.visible_sql('p', vendor)}"  # noqa: S608
    # The Scope's roots: those without children by key, the others (and `under`) as ranges
    # of the readable pages' tree-key index; what the reader's read grants hide is left out.
    ranges = [r for r in within.ranges() if r[0] < r[1]]
    readable = " AND " + within.visible_sql("p", vendor)
    under, under_params = within.under_sql("p")
    keyed = readable + (" AND " + _bind(under, under_params, params) if under else "")
    key = tree_key_sql("p", vendor)
    pg = vendor == "postgresql"
    if pg:
        keys = params.add(within.keys_array)
        found = f"SELECT {columns} FROM wiki_page p WHERE p.id = ANY({keys}){keyed}"  # noqa: S608
        if not ranges:
            # Single pages only: a list of keys, whose size the planner knows.
            return found
        if len(ranges) <= SPELLED_OUT_MAX:
            # Each range a condition of its own on the tree-key index, whose statistics tell
            # the planner how many pages it holds: a set of three copies of the wiki is
            # searched from the index of the words, a subtree of 2,000 pages from the set.
            # (From an array, every range looked like 0.5% of the pages.)
            # One condition on a page row (no UNION to deduplicate), so the planner may as
            # well start from the pages holding the words and look each one up.
            spans = " OR ".join(
                f"({key} >= {params.add(lo)} AND {key} < {params.add(hi)})" for lo, hi in ranges
            )
            by_key = f"p.id = ANY({keys})" + (
                " AND " + _bind(under, under_params, params) if under else ""
            )
            return f"SELECT {columns} FROM wiki_page p WHERE (({by_key}) OR {spans}){readable}"  # noqa: S608
        return (
            f"{found} UNION SELECT {columns} FROM unnest({params.add([lo for lo, _ in ranges])}"  # noqa: S608
            f"::text[], {params.add([hi for _, hi in ranges])}::text[]) AS r(lo, hi) "
            # One index range scan per root: OFFSET 0 keeps the planner from flattening
            # this into a join that compares every page with every root.
            f"CROSS JOIN LATERAL (SELECT {columns} FROM wiki_page p WHERE {key} >= r.lo "
            f"AND {key} < r.hi{readable} OFFSET 0) p"
        )
    return (
        f"SELECT {columns} FROM wiki_page p WHERE p.id IN (SELECT value FROM json_each("  # noqa: S608
        f"{params.add(json.dumps(within.keys()))})){keyed} UNION SELECT {columns} FROM "
        f"json_each({params.add(json.dumps(ranges))}) AS r JOIN wiki_page p ON "
        f"{key} >= json_extract(r.value, '$[0]') AND {key} < json_extract(r.value, '$[1]')"
        f"{readable}"
    )


# Two CJK characters in a row: the index holds every such pair as a lexeme of its own
# (migration 0014), which finds the few pages holding a CJK word without reading the many
# that hold each of its characters somewhere.
_CJK_PAIR = re.compile(f"[{_CJK}]{CJK_GAP}?[{_CJK}]")


def _pg_tsquery(phrases: list[str], params: _Params, *, bigrams: bool = True) -> str:
    """Any of `phrases`; a phrase with CJK pairs also requires the pairs (`bigrams`), which
    changes no result (the phrase holds them) but lets the GIN index pick the pages."""

    def phrase(text: str) -> str:
        found = f"phraseto_tsquery('{CONFIG}', {params.add(text)})"
        if bigrams and _CJK_PAIR.search(text):
            pairs = f"plainto_tsquery('simple', wiki_cjk_bigrams({params.add(text)}))"
            return f"({pairs} && {found})"
        return found

    return "(" + " || ".join(phrase(text) for text in phrases) + ")"


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


def _same_language(column: str, language: str, params: _Params) -> str:
    if not language:
        return "1"
    return f"(CASE WHEN coalesce({column}, '') IN ('', {params.add(language)}) THEN 1 ELSE 0 END)"


def _search_postgres(
    parsed: ParsedQuery, scope: Within, limit: int, *, title: str, partial: bool, language: str
) -> list[SearchHit]:
    terms = len(parsed.groups)
    params = _Params()
    ctes = ""
    in_scope = ""
    if _only_read_grants(scope):
        assert isinstance(scope, Scope)
        in_scope = "AND " + scope.visible_page_sql("d.page_id", "postgresql")
    elif scope is not None:
        ctes = f"covered(id) AS NOT MATERIALIZED ({_covered_sql(scope, params, 'postgresql')}),"
        in_scope = "AND d.page_id IN (SELECT id FROM covered)"
        if isinstance(scope, Scope) and not any(lo < hi for lo, hi in scope.ranges()):
            # Single pages only: their keys on the index row too, so that however few pages
            # PostgreSQL guesses the words hold (a CJK word's pairs multiply into a guess of
            # one), no plan reads the set once per page holding the words.
            in_scope += f" AND d.page_id = ANY({params.add(scope.keys_array)})"
    every = " && ".join(_pg_tsquery(group, params) for group in parsed.groups)
    any_term = " || ".join(_pg_tsquery(group, params) for group in parsed.groups)
    # What excerpts mark: the words themselves (ts_headline reads no bigrams).
    shown = " || ".join(_pg_tsquery(group, params, bigrams=False) for group in parsed.groups)
    title_equals = f"lower(d.title) = lower({params.add(title)})"
    title_hits = " + ".join(
        f"(ts_filter(d.vector, '{{a}}') @@ {_pg_tsquery(group, params)})::int"
        for group in parsed.groups
    )
    if partial:
        counted = " + ".join(
            f"(d.vector @@ {_pg_tsquery(group, params)})::int" for group in parsed.groups
        )
        matched = f"({counted})"
        wanted = (
            f"d.vector @@ ({any_term}) AND {matched} "
            f"BETWEEN {params.add(most_of(terms - parsed.spanning))} AND {params.add(terms - 1)}"
        )
    else:
        matched = str(terms)
        wanted = f"d.vector @@ ({every})"
    if parsed.excluded:
        wanted += f" AND NOT d.vector @@ {_pg_tsquery(parsed.excluded, params)}"
    weights = "{" + ",".join(str(w) for w in PG_WEIGHTS) + "}"
    # The tsqueries stay constants in the conditions, so that the GIN index can serve them
    # (a placeholder repeated is one parameter). The ranking reads only the index row, and
    # excerpts are made for the `limit` best only, in the outer query.
    sql = f"""
        WITH {ctes}
        q AS MATERIALIZED (SELECT {shown} AS shown),
        ranked AS MATERIALIZED (
            SELECT d.page_id, {title_equals} AS title_equals, {matched} AS matched,
                   {title_hits} AS title_hits,
                   {_same_language("d.language", language, params)} AS same_language,
                   ts_rank('{weights}'::float4[], d.vector, {any_term if partial else every})
                   AS score
            FROM wiki_searchdocument d
            WHERE {wanted} {in_scope}
            {ORDER_BY}
            LIMIT {params.add(limit)}
        )
        SELECT r.page_id, p.public_id, p.title, p.path,
               ts_headline('{CONFIG}', d.body, q.shown,
                           'StartSel="{MARK_START}", StopSel="{MARK_END}", MaxWords=40, '
                           'MinWords=30, ShortWord=2, MaxFragments=1'),
               left(d.body, 60), right(d.body, 60),
               r.title_equals, r.matched, r.title_hits, r.score, r.same_language, d.language,
               d.fingerprint, {chunks_sql("p", "postgresql")}
        FROM ranked r
        JOIN wiki_searchdocument d ON d.page_id = r.page_id
        JOIN wiki_page p ON p.id = r.page_id
        CROSS JOIN q
        WHERE {readable_sql("p")}
        ORDER BY r.title_equals DESC, r.matched DESC, r.title_hits DESC, r.same_language DESC,
                 r.score DESC, r.page_id
    """  # noqa: S608 - only constants are interpolated; user text goes in as parameters
    rows = search_rows(sql, params)
    hits = []
    for (
        page_id,
        public_id,
        page_title,
        path,
        headline,
        head,
        tail,
        equals,
        matched_terms,
        in_title,
        rank,
        same,
        page_language_code,
        page_fingerprint,
        chunks,
    ) in rows:
        excerpt = tidy_excerpt(_with_ellipses(headline or "", head or "", tail or ""))
        page = (page_id, public_id, page_title, path)
        ranking = (equals, matched_terms, in_title, rank, same)
        about = (page_language_code, page_fingerprint)
        hits.append(_keyword_hit(terms, page, excerpt, ranking, about, chunks))
    return hits


def _keyword_hit(
    terms: int,
    page: tuple[int, str, str, str],
    excerpt: str,
    ranking: tuple[Any, Any, Any, Any, Any],
    about: tuple[str | None, int | None],
    chunks: Any,
) -> SearchHit:
    """One keyword hit from a row of either database's search: the page's id, public id,
    title and path; its excerpt; its ranking columns (title equals, matched terms, title
    hits, rank, same language); its language and fingerprint; its chunks' headings."""
    equals, matched_terms, in_title, rank, same = ranking
    page_id, public_id, title, path = page
    language, page_fingerprint = about
    return SearchHit(
        page_id=page_id,
        public_id=public_id,
        title=title,
        path=path,
        excerpt=excerpt,
        score=keyword_score(terms, equals, matched_terms, in_title, float(rank), bool(same)),
        section=section_from(chunks, excerpt),
        exact_title=bool(equals),
        language=language or UNKNOWN,
        embedded_by=models_from(chunks),
        fingerprint=page_fingerprint,
    )


def _with_ellipses(headline: str, head: str, tail: str) -> str:
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


def _search_sqlite(
    parsed: ParsedQuery, scope: Within, limit: int, *, title: str, partial: bool, language: str
) -> list[SearchHit]:
    terms = len(parsed.groups)
    title_w, tags_w, body_w = FTS5_WEIGHTS
    fts = FTS_TABLE
    params = _Params()
    ctes = ""
    in_scope = ""
    if _only_read_grants(scope):
        assert isinstance(scope, Scope)
        in_scope = "AND " + scope.visible_page_sql(f"+{fts}.rowid", "sqlite")
    elif scope is not None:
        ctes = f"covered(id) AS MATERIALIZED ({_covered_sql(scope, params, 'sqlite')}),"
        # The unary + keeps the rowid condition away from FTS5, which would otherwise run
        # the full-text query once per page of the set instead of once.
        in_scope = f"AND +{fts}.rowid IN (SELECT id FROM covered)"  # noqa: S608
    shown = ParsedQuery(groups=[[p for g in parsed.groups for p in g]], excluded=parsed.excluded)
    match = params.add(fts5_match(shown if partial else parsed))
    title_equals = f"lower({fts}.title) = lower({params.add(title)})"
    title_hits = " + ".join(
        f"({fts}.rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH "  # noqa: S608
        f"{params.add('title : ' + fts5_match(ParsedQuery(groups=[group])))}))"
        for group in parsed.groups
    )
    if partial:
        counted = " + ".join(
            f"({fts}.rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH "  # noqa: S608
            f"{params.add(fts5_match(ParsedQuery(groups=[group])))}))"
            for group in parsed.groups
        )
        matched = f"({counted})"
        fewest = params.add(most_of(terms - parsed.spanning))
        wanted = f"AND matched BETWEEN {fewest} AND {params.add(terms - 1)}"
    else:
        matched, wanted = str(terms), ""
    page_language = f"(SELECT language FROM wiki_searchdocument WHERE page_id = {fts}.rowid)"  # noqa: S608
    page_fingerprint = f"(SELECT fingerprint FROM wiki_searchdocument WHERE page_id = {fts}.rowid)"  # noqa: S608
    limit_sql = params.add(limit)
    outer_match = params.add(fts5_match(shown))
    # The inner query ranks every match (cheap: bm25 and the short title and tags columns);
    # the outer one makes snippets for the `limit` best only.
    sql = f"""
        WITH {ctes}
        ranked AS (
            SELECT * FROM (
                SELECT {fts}.rowid AS page_id,
                       {title_equals} AS title_equals,
                       {matched} AS matched,
                       {title_hits} AS title_hits,
                       {_same_language(page_language, language, params)} AS same_language,
                       2 * (instr(highlight({fts}, 0, char(1), char(2)), char(1)) > 0)
                       + (instr(highlight({fts}, 1, char(1), char(2)), char(1)) > 0)
                       + -bm25({fts}, {title_w}, {tags_w}, {body_w})
                         / (1.0 - bm25({fts}, {title_w}, {tags_w}, {body_w})) AS score
                FROM {fts}
                WHERE {fts} MATCH {match} {in_scope}
            )
            WHERE 1 {wanted}
            {ORDER_BY}
            LIMIT {limit_sql}
        )
        SELECT page.id, page.public_id, page.title, page.path,
               snippet({fts}, 2, '{MARK_START}', '{MARK_END}', '…', 36),
               ranked.title_equals, ranked.matched, ranked.title_hits, ranked.score,
               ranked.same_language, {page_language}, {page_fingerprint},
               {chunks_sql("page", "sqlite")}
        FROM ranked
        CROSS JOIN {fts} ON {fts}.rowid = ranked.page_id
        CROSS JOIN wiki_page AS page ON page.id = ranked.page_id
        WHERE {fts} MATCH {outer_match} AND {readable_sql("page")}
        ORDER BY ranked.title_equals DESC, ranked.matched DESC, ranked.title_hits DESC,
                 ranked.same_language DESC, ranked.score DESC, page.id
    """  # noqa: S608 - only constants are interpolated; user text goes in as parameters
    with read_connection().cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    hits = []
    for (
        page_id,
        public_id,
        page_title,
        path,
        snippet,
        equals,
        matched_terms,
        in_title,
        score,
        same,
        page_language_code,
        page_fingerprint,
        chunks,
    ) in rows:
        excerpt = tidy_excerpt(snippet or "")
        page = (page_id, public_id, page_title, path)
        ranking = (equals, matched_terms, in_title, score, same)
        about = (page_language_code, page_fingerprint)
        hits.append(_keyword_hit(terms, page, excerpt, ranking, about, chunks))
    return hits


def strip_marks(excerpt: str) -> str:
    """The excerpt as plain text, without the `[[[`/`]]]` match markers."""
    return excerpt.replace(MARK_START, "").replace(MARK_END, "")


def tidy_excerpt(raw: str, max_chars: int = EXCERPT_CHARS) -> str:
    """One line of about `max_chars` characters around the first mark, with balanced marks."""
    text = _unspace_cjk(" ".join(_WHITESPACE.split(raw)).strip())
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
