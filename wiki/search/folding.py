"""Copies: near-identical pages with one title come as one hit naming the others."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace

from django.db import connection

from wiki.copies import EMPTY, same_page
from wiki.language import folder_languages, likelier_language
from wiki.scope import Scope, readable_sql
from wiki.search.hits import Copy, SearchHit
from wiki.search.sql import Params, Within, covered_sql, only_read_grants
from wiki.search_limits import search_rows

# At most this many copies of the hits are read (25 language folders of 8 hits, say).
COPIES_MAX = 400


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
    params = Params()
    ctes = in_scope = ""
    if only_read_grants(within):
        assert isinstance(within, Scope)
        visible = within.visible_page_sql("d.page_id", vendor)
        in_scope = f"AND {visible}" if visible else ""
    elif within is not None:
        ctes = f"WITH covered(id) AS ({covered_sql(within, params, vendor)})"
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
