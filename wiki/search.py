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
  words must all appear; `"quoted words"` is a phrase; `-word` or `-"a phrase"` excludes;
  `OR` (any case) between two terms accepts either. The query is parsed here, once, and
  translated for each engine with every term quoted, so no input can cause a syntax error.
  Punctuation-only, stop-word-only or exclusion-only queries find nothing.
- Ranking: PostgreSQL `ts_rank` with weights A (title) 1.0, B (tags) 0.4, C (body) 0.1,
  which puts any page with a single-word query in its title above pages that have it only
  in their body. FTS5's `bm25` adds its column weights into one term frequency, so many
  body mentions can outweigh a title; on SQLite the score is therefore 2 for a match in the
  title, plus 1 for a match in the tags, plus bm25 squashed into [0, 1).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.contrib.postgres.search import SearchHeadline, SearchQuery, SearchRank
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    F,
    OuterRef,
    Prefetch,
    QuerySet,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Left, Right

from wiki.models import Attachment, Page, SearchDocument

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
    title, tags, body = document_fields(
        title=version.title, tags=version.tags, body=version.body, attachments=attachments
    )
    updated = SearchDocument.objects.filter(page_id=page.pk).update(
        title=title, tags=tags, body=body
    )
    if not updated:
        SearchDocument.objects.create(page_id=page.pk, title=title, tags=tags, body=body)


def remove_page(page: Page) -> None:
    """Drop `page` from the index (archived, or no live version)."""
    SearchDocument.objects.filter(page_id=page.pk).delete()


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
        batch.append(SearchDocument(page_id=page.pk, title=title, tags=tags, body=body))
        if len(batch) >= 200:
            count += _insert_documents(batch)
            batch = []
    count += _insert_documents(batch)
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
    return text.strip()


# Han, kana and Hangul: scripts written without spaces between words.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
_CJK_GAP = re.compile(f"(?<=[{_CJK}])(?=[{_CJK}])")
_CJK_SPACE = re.compile(f"(?:(?<=[{_CJK}])|(?<=[{_CJK}]\\]\\]\\])) (?=(?:\\[\\[\\[)?[{_CJK}])")


def _space_cjk(text: str) -> str:
    return _CJK_GAP.sub(" ", text)


def _unspace_cjk(text: str) -> str:
    return _CJK_SPACE.sub("", text).replace(MARK_END + MARK_START, "")


# --- the query ----------------------------------------------------------------------------


@dataclass
class ParsedQuery:
    """AND of groups, each an OR of phrases; `excluded` phrases must not appear."""

    groups: list[list[str]] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)


_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")
_TOKEN = re.compile(r'(?P<neg>-?)"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+)')


def parse_query(query: str) -> ParsedQuery:
    """Parse web-search syntax; terms without a letter or digit are dropped.

    `OR` joins the two terms either side of it when neither is an exclusion, and is
    ignored otherwise; it binds tighter than the implicit AND: `a b OR c d` means
    a AND (b OR c) AND d.
    """
    parsed = ParsedQuery()
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
        if negated:
            parsed.excluded.append(phrase)
        elif or_pending:
            parsed.groups[-1].append(phrase)
        else:
            parsed.groups.append([phrase])
        last_was_positive, or_pending = not negated, False
    return parsed


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


# The pages a search may return: all, these primary keys, or the Page rows of a QuerySet.
Scope = list[int] | QuerySet[Page] | None


def search_pages(
    query: str, *, page_ids: Iterable[int] | QuerySet[Page] | None = None, limit: int = 20
) -> list[SearchHit]:
    """Live, non-archived pages matching `query`, best first, in one SQL query.

    `page_ids` restricts the search to those Page primary keys (e.g. an agent's page set):
    either the keys themselves, or a QuerySet of Page rows, which goes into the same SQL
    query as a subquery, so that no list of thousands of keys is fetched and sent back.

    Each hit's `excerpt` is about 200 characters of plain text around the best match in the
    body (the start of the body when only the title or tags match), with every matched word
    wrapped in `[[[` and `]]]` (the indexed text never contains those sequences itself);
    the text is not HTML-escaped. The web UI escapes it, then turns the markers into
    <mark>; the MCP tool strips them (`strip_marks`), so agents get plain text. `score` is
    higher for better hits, rounded to 4 decimals, and comparable only within one database
    engine.
    """
    parsed = parse_query(query)
    if not parsed.groups or limit <= 0:
        return []
    scope: Scope = None
    if isinstance(page_ids, QuerySet):
        if page_ids.model is not Page:
            raise TypeError("page_ids must be a QuerySet of Page rows")
        if page_ids.query.is_empty():
            return []
        scope = page_ids.order_by()
    elif page_ids is not None:
        scope = sorted({int(pk) for pk in page_ids})
        if not scope:
            return []
    if connection.vendor == "postgresql":
        return _search_postgres(parsed, scope, limit)
    return _search_sqlite(parsed, scope, limit)


def _search_postgres(parsed: ParsedQuery, scope: Scope, limit: int) -> list[SearchHit]:
    query, excluded = pg_search_queries(parsed)
    documents = SearchDocument.objects.filter(vector=query, page__archived=False)
    if excluded is not None:
        documents = documents.exclude(vector=excluded)
    if isinstance(scope, QuerySet):
        # Inside CASE the EXISTS stays a subplan filtering the full-text matches (hashed
        # once per query) instead of being pulled up into a join that PostgreSQL, misjudging
        # the scope as a few rows, would run before the full-text match.
        in_scope = Exists(scope.filter(pk=OuterRef("page_id")))
        documents = documents.filter(
            Case(
                When(in_scope, then=Value(True)), default=Value(False), output_field=BooleanField()
            )
        )
    elif scope is not None:
        documents = documents.filter(page_id__in=scope)
    rows = (
        documents.annotate(
            rank=SearchRank(F("vector"), query, weights=PG_WEIGHTS),
            headline=SearchHeadline(
                "body",
                query,
                config=CONFIG,
                start_sel=MARK_START,
                stop_sel=MARK_END,
                max_words=40,
                min_words=30,
                short_word=2,  # type: ignore[arg-type]  # django-stubs says str; Django takes either
                max_fragments=1,
            ),
        )
        .annotate(head=Left("body", 60), tail=Right("body", 60))
        .order_by("-rank", "page_id")
        .values_list(
            "page_id",
            "page__public_id",
            "page__title",
            "page__path",
            "headline",
            "head",
            "tail",
            "rank",
        )[:limit]
    )
    return [
        SearchHit(
            page_id=page_id,
            public_id=public_id,
            title=title,
            path=path,
            excerpt=tidy_excerpt(_with_ellipses(headline or "", head or "", tail or "")),
            score=round(float(rank), 4),
        )
        for page_id, public_id, title, path, headline, head, tail, rank in rows
    ]


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


def _search_sqlite(parsed: ParsedQuery, scope: Scope, limit: int) -> list[SearchHit]:
    match = fts5_match(parsed)
    title_w, tags_w, body_w = FTS5_WEIGHTS
    id_filter = ""
    params: list[Any] = [match]
    if isinstance(scope, QuerySet):
        # Correlated on the match's rowid: SQLite looks each match up by primary key. An
        # uncorrelated `rowid IN (...)` would be handed to FTS5 as rowid lookups instead,
        # one full-text evaluation per page of the scope.
        rowid = RawSQL(f"{FTS_TABLE}.rowid", ())  # noqa: S611 - a constant, no user text
        allowed = scope.filter(pk=rowid).values("pk")
        sql, scope_params = allowed.query.get_compiler(using=allowed.db).as_sql()
        id_filter = f"AND EXISTS ({sql})"
        params += list(scope_params)
    elif scope is not None:
        id_filter = "AND wiki_searchdocument_fts.rowid IN (SELECT value FROM json_each(%s))"
        params.append(json.dumps(scope))
    params += [limit, match]
    # The inner query ranks every match (cheap: bm25 and the short title and tags columns);
    # the outer one makes snippets for the `limit` best only.
    sql = f"""
        WITH ranked AS (
            SELECT {FTS_TABLE}.rowid AS page_id,
                   2 * (instr(highlight({FTS_TABLE}, 0, char(1), char(2)), char(1)) > 0)
                   + (instr(highlight({FTS_TABLE}, 1, char(1), char(2)), char(1)) > 0)
                   + -bm25({FTS_TABLE}, {title_w}, {tags_w}, {body_w})
                     / (1.0 - bm25({FTS_TABLE}, {title_w}, {tags_w}, {body_w})) AS score
            FROM {FTS_TABLE}
            WHERE {FTS_TABLE} MATCH %s {id_filter}
            ORDER BY score DESC, page_id
            LIMIT %s
        )
        SELECT page.id, page.public_id, page.title, page.path,
               snippet({FTS_TABLE}, 2, '{MARK_START}', '{MARK_END}', '…', 36), ranked.score
        FROM ranked
        CROSS JOIN {FTS_TABLE} ON {FTS_TABLE}.rowid = ranked.page_id
        CROSS JOIN wiki_page AS page ON page.id = ranked.page_id
        WHERE {FTS_TABLE} MATCH %s AND NOT page.archived
        ORDER BY ranked.score DESC, page.id
    """  # noqa: S608 - only constants are interpolated; user text goes in as parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        SearchHit(
            page_id=page_id,
            public_id=public_id,
            title=title,
            path=path,
            excerpt=tidy_excerpt(snippet or ""),
            score=round(float(score), 4),
        )
        for page_id, public_id, title, path, snippet, score in rows
    ]


def strip_marks(excerpt: str) -> str:
    """The excerpt as plain text, without the `[[[`/`]]]` match markers."""
    return excerpt.replace(MARK_START, "").replace(MARK_END, "")


def tidy_excerpt(raw: str, max_chars: int = EXCERPT_CHARS) -> str:
    """One line of about `max_chars` characters around the first mark, with balanced marks."""
    text = _unspace_cjk(" ".join(raw.split()))
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
