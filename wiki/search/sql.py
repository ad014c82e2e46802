"""SQL pieces every search statement shares: named parameters, the set of pages a search may
return (`covered_sql`), a hit's chunks and its language."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from django.db.models import QuerySet

from wiki.models import Page
from wiki.scope import READABLE, SPELLED_OUT_MAX, Scope, tree_key_sql

# What a search may return: every readable page (None), a reader's Scope, or a QuerySet's
# rows (readable ones only).
Within = Scope | QuerySet[Page] | None


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


_PLACEHOLDER = re.compile(r"%%|%s")


class Params(dict[str, Any]):
    """Named query parameters: `add` stores a value and returns its placeholder."""

    def add(self, value: Any) -> str:
        name = f"p{len(self)}"
        self[name] = value
        return f"%({name})s"


def bind(sql: str, values: Iterable[Any], params: Params) -> str:
    """`sql` with its %s placeholders turned into named ones holding `values`."""
    pending = iter(values)
    return _PLACEHOLDER.sub(lambda m: m[0] if m[0] == "%%" else params.add(next(pending)), sql)


def only_read_grants(within: Within) -> bool:
    """Every readable page but what the reader's read grants hide (a person's search): the
    search leaves those out by id, and needs no set of covered pages."""
    return isinstance(within, Scope) and within.everything and within.under is None


def covered_sql(within: Within, params: Params, vendor: str, *, live: bool = False) -> str:
    """A query for the ids of the readable pages `within` allows; with `live`, each with its
    live version's id too (the vector search reads a set's chunks of those versions)."""
    columns = "p.id, p.live_version_id" if live else "p.id"
    if isinstance(within, QuerySet):
        ids = within.filter(READABLE).values(*(("pk", "live_version_id") if live else ("pk",)))
        # Django's own way to a QuerySet's SQL and values (Query.__str__ points to it):
        # the caller's rows become a subquery of the search's statement.
        sql, scope_params = ids.query.sql_with_params()
        return bind(sql, scope_params, params)
    assert within is not None
    if only_read_grants(within):
        return f"SELECT {columns} FROM wiki_page p WHERE {within.visible_sql('p', vendor)}"  # noqa: S608
    # The Scope's roots: those without children by key, the others (and `under`) as ranges
    # of the readable pages' tree-key index; what the reader's read grants hide is left out.
    ranges = [r for r in within.ranges() if r[0] < r[1]]
    readable = " AND " + within.visible_sql("p", vendor)
    under, under_params = within.under_sql("p")
    keyed = readable + (" AND " + bind(under, under_params, params) if under else "")
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
                " AND " + bind(under, under_params, params) if under else ""
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


def same_language_sql(column: str, language: str, params: Params) -> str:
    if not language:
        return "1"
    return f"(CASE WHEN coalesce({column}, '') IN ('', {params.add(language)}) THEN 1 ELSE 0 END)"
