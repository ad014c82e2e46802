"""What differs between the databases in a keyword search: the statement, written for
PostgreSQL's weighted tsvector or SQLite's FTS5 table (see wiki.search's docstring), and how
an excerpt is cut. Everything else (parsing, the set of pages, running the statement, its
rows as hits, partial hits, fusion) is wiki.search.lexical's, the same for both.

Both statements rank by RANKING and return the same columns (`COLUMNS`): the page's id,
public id, title and path; its raw excerpt and the start and end of its body (PostgreSQL's
headline needs them for its ellipses, SQLite's snippet makes its own: NULL); the ranking
columns; the page's language and fingerprint; its chunks (wiki.search.sql.chunks_sql).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from wiki.indexed_text import CJK, CJK_GAP, MARK_END, MARK_START
from wiki.scope import Scope, readable_sql
from wiki.search.query import CONFIG, INFLECTED, ParsedQuery, Prefix, fts5_match
from wiki.search.snippets import tidy_excerpt, with_ellipses
from wiki.search.sql import (
    Params,
    Within,
    chunks_sql,
    covered_sql,
    only_read_grants,
    same_language_sql,
)

# ts_rank weights in PostgreSQL's order: D (unused), C (body), B (tags), A (title).
PG_WEIGHTS = [0.0, 0.1, 0.4, 1.0]
# bm25 weights in column order: title, tags, body.
FTS5_WEIGHTS = (10.0, 5.0, 1.0)
FTS_TABLE = "wiki_searchdocument_fts"

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
# The outer query's order: RANKING over the ranked rows (`r`).
RANKED_ORDER_BY = "ORDER BY " + ", ".join(f"r.{key}" for key in RANKING)
# What both statements return after a hit's page and excerpt (see the module docstring).
RANKED_COLUMNS = "r.title_equals, r.matched, r.title_hits, r.score, r.same_language"


@dataclass(frozen=True)
class Ask:
    """One keyword statement's question: the parsed query, the pages it may return, how many,
    the title it may equal, whether it wants the partial hits, and the query's language."""

    parsed: ParsedQuery
    within: Within
    limit: int
    title: str
    partial: bool
    language: str
    # A partial statement's terms that the index looks up (wiki.search.rarity: on PostgreSQL
    # the rarest n - most_of(n) + 1, of which every partial hit holds one); empty: all.
    looked_up: tuple[int, ...] = ()

    @property
    def terms(self) -> int:
        return len(self.parsed.groups)


class Backend(Protocol):
    """One engine's part of a keyword search."""

    def statement(self, ask: Ask, params: Params) -> str:
        """The statement for `ask`, its values added to `params`."""
        ...

    def excerpt(self, raw: str | None, head: str | None, tail: str | None) -> str:
        """A hit's excerpt from its row's raw excerpt and the start and end of its body."""
        ...


def most_of(terms: int, *, loose: bool = False) -> int:
    """How many of `terms` a partial hit must hold: more than half (a third when `loose`:
    wiki.search.query.for_language), and never all."""
    return max(1, (terms + 2) // 3) if loose else terms // 2 + 1


def partial_bounds(ask: Ask, params: Params) -> str:
    """`BETWEEN` the fewest terms a partial hit holds and all but one."""
    fewest = params.add(most_of(ask.terms - ask.parsed.spanning, loose=ask.parsed.loose))
    return f"BETWEEN {fewest} AND {params.add(ask.terms - 1)}"


def in_scope_sql(
    within: Within, params: Params, *, vendor: str, column: str, held: str
) -> tuple[str, str]:
    """The common table (`covered`, held as `held`) and the condition on the page id in
    `column` that keep a search `within` its pages (none for every readable page)."""
    if only_read_grants(within):
        assert isinstance(within, Scope)
        return "", "AND " + within.visible_page_sql(column, vendor)
    if within is None:
        return "", ""
    ctes = f"covered(id) AS {held} ({covered_sql(within, params, vendor)}),"
    return ctes, f"AND {column} IN (SELECT id FROM covered)"  # noqa: S608 - a column name


# Two CJK characters in a row: the index holds every such pair as a lexeme of its own
# (migration 0014), which finds the few pages holding a CJK word without reading the many
# that hold each of its characters somewhere.
_CJK_PAIR = re.compile(f"[{CJK}]{CJK_GAP}?[{CJK}]")


def pg_tsquery(phrases: list[str], params: Params, *, bigrams: bool = True) -> str:
    """Any of `phrases`; a phrase with CJK pairs also requires the pairs (`bigrams`), which
    changes no result (the phrase holds them) but lets the GIN index pick the pages."""

    def phrase(text: str) -> str:
        if isinstance(text, Prefix):  # letters only (query.stem)
            return f"to_tsquery('{CONFIG}', {params.add(str(text) + ':*')})"
        found = f"phraseto_tsquery('{CONFIG}', {params.add(text)})"
        if bigrams and _CJK_PAIR.search(text):
            pairs = f"plainto_tsquery('simple', wiki_cjk_bigrams({params.add(text)}))"
            return f"({pairs} && {found})"
        return found

    return "(" + " || ".join(phrase(text) for text in phrases) + ")"


# The title's words alone: the weight-A lexemes, GIN-indexed on their own (migration 0026).
TITLE_VECTOR = "ts_filter(d.vector, '{a}')"


def _titles_first(columns: str, wanted: str, any_title: str, limit: str) -> str:
    """The `ranked` common table of a search over every page for pages holding every term:
    the best of those whose titles hold a term, read from the titles' index, and only when
    they are fewer than the limit the best of all, read from the words' index.

    Exact: RANKING orders a full hit by whether its title is the question, then by how many
    terms its title holds, so a page whose title holds none comes after every page whose
    title holds one (a title equal to the question holds its words); when the limit's pages
    have a term in their titles, the pages that have them only in their bodies (for a common
    word most of the wiki, each ranked: 0.3-1 s at a million pages) cannot be among the best
    and are not read. PostgreSQL runs the second statement only when its one-time condition
    holds.
    """
    titled = f"""SELECT {columns} FROM wiki_searchdocument d
                 WHERE {TITLE_VECTOR} @@ ({any_title}) AND {wanted}
                 {ORDER_BY} LIMIT {limit}"""  # noqa: S608 - constants only
    every = f"""SELECT {columns} FROM wiki_searchdocument d
                WHERE {wanted} AND (SELECT count(*) FROM titled) < {limit}
                {ORDER_BY} LIMIT {limit}"""  # noqa: S608 - constants only
    return f"""titled AS MATERIALIZED ({titled}),
            ranked AS MATERIALIZED (
                SELECT * FROM titled WHERE (SELECT count(*) FROM titled) >= {limit}
                UNION ALL ({every})
            )"""  # noqa: S608 - constants only


class PostgresBackend:
    """A weighted tsvector (title A, tags B, body C) ranked by ts_rank; excerpts by
    ts_headline, for the `limit` best only."""

    def _scope(self, ask: Ask, params: Params) -> tuple[str, str]:
        ctes, in_scope = in_scope_sql(
            ask.within, params, vendor="postgresql", column="d.page_id", held="NOT MATERIALIZED"
        )
        within = ask.within
        if ctes and isinstance(within, Scope) and not any(lo < hi for lo, hi in within.ranges()):
            # Single pages only: their keys on the index row too, so that however few pages
            # PostgreSQL guesses the words hold (a CJK word's pairs multiply into a guess of
            # one), no plan reads the set once per page holding the words.
            in_scope += f" AND d.page_id = ANY({params.add(within.keys_array)})"
        return ctes, in_scope

    def _matching(self, ask: Ask, params: Params) -> tuple[str, str, str]:
        """The matched-terms column, the condition a hit meets, and the query it is ranked
        by. The tsqueries stay constants in the conditions, so that the GIN index can serve
        them (a placeholder repeated is one parameter)."""
        groups = ask.parsed.groups
        if not ask.partial:
            every = " && ".join(pg_tsquery(group, params) for group in groups)
            wanted, matched, ranked_by = f"d.vector @@ ({every})", str(ask.terms), every
        else:
            any_term = " || ".join(pg_tsquery(group, params) for group in groups)
            counted = " + ".join(f"(d.vector @@ {pg_tsquery(g, params)})::int" for g in groups)
            matched, ranked_by = f"({counted})", any_term
            # The index returns the pages holding one of the terms looked up (every partial
            # hit holds one of them: wiki.search.rarity); each is then counted on those.
            looked_up = " || ".join(
                pg_tsquery(groups[n], params) for n in ask.looked_up or range(len(groups))
            )
            wanted = f"d.vector @@ ({looked_up}) AND {matched} {partial_bounds(ask, params)}"
        if ask.parsed.excluded:
            wanted += f" AND NOT d.vector @@ {pg_tsquery(ask.parsed.excluded, params)}"
        return matched, wanted, ranked_by

    def statement(self, ask: Ask, params: Params) -> str:
        ctes, in_scope = self._scope(ask, params)
        groups = ask.parsed.groups
        matched, wanted, ranked_by = self._matching(ask, params)
        # What excerpts mark: the words themselves (ts_headline reads no bigrams).
        shown = " || ".join(pg_tsquery(group, params, bigrams=False) for group in groups)
        in_title = [pg_tsquery(group, params) for group in groups]
        title_hits = " + ".join(f"({TITLE_VECTOR} @@ {term})::int" for term in in_title)
        weights = "{" + ",".join(str(w) for w in PG_WEIGHTS) + "}"
        columns = f"""d.page_id, lower(d.title) = lower({params.add(ask.title)}) AS title_equals,
                   {matched} AS matched, {title_hits} AS title_hits,
                   {same_language_sql("d.language", ask.language, params)} AS same_language,
                   ts_rank('{weights}'::float4[], d.vector, {ranked_by}) AS score"""
        limit = params.add(ask.limit)
        best = f"""SELECT {columns} FROM wiki_searchdocument d WHERE {wanted} {in_scope}
                   {ORDER_BY} LIMIT {limit}"""  # noqa: S608 - constants only
        if ask.partial or ctes:
            # A partial statement ranks by how many terms a page holds before its title;
            # a set of pages is read from the set.
            ranked = f"ranked AS MATERIALIZED ({best})"
        else:
            ranked = _titles_first(columns, wanted + in_scope, " || ".join(in_title), limit)
        # The ranking reads only the index row; excerpts are made for the `limit` best only,
        # in the outer query.
        return f"""
            WITH {ctes}
            q AS MATERIALIZED (SELECT {shown} AS shown),
            {ranked}
            SELECT r.page_id, p.public_id, p.title, p.path,
                   ts_headline('{CONFIG}', d.body, q.shown,
                               'StartSel="{MARK_START}", StopSel="{MARK_END}", MaxWords=40, '
                               'MinWords=30, ShortWord=2, MaxFragments=1'),
                   left(d.body, 60), right(d.body, 60), {RANKED_COLUMNS},
                   d.language, d.fingerprint, {chunks_sql("p", "postgresql")}
            FROM ranked r
            JOIN wiki_searchdocument d ON d.page_id = r.page_id
            JOIN wiki_page p ON p.id = r.page_id
            CROSS JOIN q
            WHERE {readable_sql("p")}
            {RANKED_ORDER_BY}
        """  # noqa: S608 - only constants are interpolated; user text goes in as parameters

    def excerpt(self, raw: str | None, head: str | None, tail: str | None) -> str:
        return tidy_excerpt(with_ellipses(raw or "", head or "", tail or ""))


def fts5_relevance(bm25: str, language: str) -> str:
    """FTS5's relevance in [0, 1): `bm25` squashed; for a question in an INFLECTED language,
    averaged with how many of its words' occurrences the body holds (squashed alike).

    bm25 weighs each word by how rare it is and lowers long pages; PostgreSQL's ts_rank does
    neither. On the tldr translations (issue 49 point 4) FTS5 alone put the right Spanish page
    lower than PostgreSQL did for 5 of 16 questions; the average brings it nearer: Spanish
    hybrid MRR 0.591 to 0.617 on SQLite, French unchanged (docs/search.md). English questions
    keep bm25 alone and its cost (this reads the body's highlight for every matching page).
    """
    squashed = f"-{bm25} / (1.0 - {bm25})"
    if language not in INFLECTED:
        return squashed
    marked = f"highlight({FTS_TABLE}, 2, char(1), char(2))"
    held = f"(length({marked}) - length(replace({marked}, char(1), '')))"
    return f"(({squashed}) + {held} / (1.0 + {held})) / 2"


class SqliteBackend:
    """An FTS5 table ranked by where the words are (title 2, tags 1) plus bm25 squashed into
    [0, 1); excerpts by FTS5's snippet, for the `limit` best only."""

    def _in_fts(self, parsed: ParsedQuery, params: Params, column: str = "") -> str:
        """1 where the FTS row holds `parsed` (in `column` only, when named)."""
        match = params.add((f"{column} : " if column else "") + fts5_match(parsed))
        fts = FTS_TABLE
        return f"({fts}.rowid IN (SELECT rowid FROM {fts} WHERE {fts} MATCH {match}))"  # noqa: S608

    def _matching(self, ask: Ask, params: Params) -> tuple[str, str, str]:
        """The matched-terms column, the condition on it, and the title-hits column."""
        groups = [ParsedQuery(groups=[group]) for group in ask.parsed.groups]
        title_hits = " + ".join(self._in_fts(one, params, "title") for one in groups)
        if not ask.partial:
            return str(ask.terms), "", title_hits
        counted = " + ".join(self._in_fts(one, params) for one in groups)
        return f"({counted})", f"AND matched {partial_bounds(ask, params)}", title_hits

    def statement(self, ask: Ask, params: Params) -> str:
        fts = FTS_TABLE
        # The unary + keeps the rowid condition away from FTS5, which would otherwise run
        # the full-text query once per page of the set instead of once.
        ctes, in_scope = in_scope_sql(
            ask.within, params, vendor="sqlite", column=f"+{fts}.rowid", held="MATERIALIZED"
        )
        parsed = ask.parsed
        shown = ParsedQuery(
            groups=[[p for g in parsed.groups for p in g]], excluded=parsed.excluded
        )
        match = params.add(fts5_match(shown if ask.partial else parsed))
        title_equals = f"lower({fts}.title) = lower({params.add(ask.title)})"
        matched, wanted, title_hits = self._matching(ask, params)
        document = "(SELECT {} FROM wiki_searchdocument WHERE page_id = " + fts + ".rowid)"  # noqa: S608
        language = document.format("language")
        bm25 = f"bm25({fts}, {', '.join(str(w) for w in FTS5_WEIGHTS)})"
        # The inner query ranks every match (cheap: bm25 and the short title and tags
        # columns); the outer one makes snippets for the `limit` best only.
        return f"""
            WITH {ctes}
            ranked AS (
                SELECT * FROM (
                    SELECT {fts}.rowid AS page_id, {title_equals} AS title_equals,
                           {matched} AS matched, {title_hits} AS title_hits,
                           {same_language_sql(language, ask.language, params)} AS same_language,
                           2 * (instr(highlight({fts}, 0, char(1), char(2)), char(1)) > 0)
                           + (instr(highlight({fts}, 1, char(1), char(2)), char(1)) > 0)
                           + {fts5_relevance(bm25, ask.language)} AS score
                    FROM {fts}
                    WHERE {fts} MATCH {match} {in_scope}
                )
                WHERE 1 {wanted}
                {ORDER_BY}
                LIMIT {params.add(ask.limit)}
            )
            SELECT page.id, page.public_id, page.title, page.path,
                   snippet({fts}, 2, '{MARK_START}', '{MARK_END}', '…', 36),
                   NULL, NULL, {RANKED_COLUMNS},
                   {language}, {document.format("fingerprint")}, {chunks_sql("page", "sqlite")}
            FROM ranked r
            CROSS JOIN {fts} ON {fts}.rowid = r.page_id
            CROSS JOIN wiki_page AS page ON page.id = r.page_id
            WHERE {fts} MATCH {params.add(fts5_match(shown))} AND {readable_sql("page")}
            {RANKED_ORDER_BY}
        """  # noqa: S608 - only constants are interpolated; user text goes in as parameters

    def excerpt(self, raw: str | None, head: str | None, tail: str | None) -> str:
        return tidy_excerpt(raw or "")


BACKENDS: dict[str, Backend] = {"postgresql": PostgresBackend(), "sqlite": SqliteBackend()}
