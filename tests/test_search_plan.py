"""On PostgreSQL, an agent's search costs what its set costs: the plan's shape is pinned.

20,000 live pages all hold the searched word, the worst case for a set filter; agents have
sets of 1, 100, 101 and 2,000 entries (single pages). The plan must read pages by key only,
never scan or join the whole page table, use no JIT, and keep the same shape on both sides
of 100 entries.

The 20,000 pages are written once for the module and committed (each test's own changes are
rolled back, statistics included); pytest-xdist sends consecutive tests to a worker, so the
three usually share one build.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents import selectors
from agents import services as agent_services
from agents.models import Agent, PageSetEntry
from core.actors import SystemActor
from tests.bulk import make_live
from wiki.models import Page, SearchDocument
from wiki.search import document_fields, search_pages

# The plan is PostgreSQL's.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

PAGES = 20_000
SET_SIZES = (1, 100, 101, 2_000)


@pytest.fixture(scope="module")
def site(django_db_setup: Any, django_db_blocker: Any) -> Iterator[list[Page]]:
    """The bulk site, committed for this module's tests and removed after the last one."""
    with django_db_blocker.unblock():
        if connection.vendor != "postgresql":
            pytest.skip("the plan is PostgreSQL's")
        editor = User.objects.create_user("plan-editor")
        try:
            yield bulk_site(editor)
        finally:
            with connection.cursor() as cursor:
                cursor.execute(
                    "TRUNCATE wiki_searchdocument, agents_pagesetentry, wiki_version, wiki_page"
                    " CASCADE"
                )
            editor.delete()


def bulk_site(editor: User) -> list[Page]:
    """PAGES live pages under 20 top-level areas, indexed, with fresh statistics."""
    areas = Page.objects.bulk_create(
        Page(title=f"Area {n}", slug=f"area-{n}", path=f"area-{n}") for n in range(20)
    )
    pages = Page.objects.bulk_create(
        Page(
            title=f"Topic {n}",
            slug=f"topic-{n}",
            path=f"{areas[n % 20].path}/topic-{n}",
            parent=areas[n % 20],
        )
        for n in range(PAGES - 20)
    )
    everything = areas + pages
    versions = make_live(
        everything,
        author=editor,
        body=lambda n, page: f"Notes {n} about the shared kettle and the office.",
    )
    # In batches: statements bound on the server take at most 65,535 parameters.
    SearchDocument.objects.bulk_create(
        (
            SearchDocument(page=page, title=page.title, body=version.body)
            for page, version in zip(everything, versions, strict=True)
        ),
        batch_size=2_000,
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "ANALYZE wiki_page; ANALYZE wiki_searchdocument; ANALYZE agents_pagesetentry"
        )
    return pages


def agent_with(pages: list[Page], size: int) -> Agent:
    agent, _ = agent_services.agent_create(actor=SystemActor("tests"), name=f"set-{size}")
    PageSetEntry.objects.bulk_create(
        PageSetEntry(agent=agent, page=page, position=n, use_when=[])
        for n, page in enumerate(pages[:size])
    )
    return agent


def plan_of(agent: Agent, query: str, *, with_settings: bool = False) -> dict[str, Any]:
    """The plan of the search's statement; `with_settings`: planned under the settings the
    search sets for itself (its `set_config` statement, run first in the test's transaction)."""
    scope = selectors.agent_scope(agent)
    with CaptureQueriesContext(connection) as captured:
        hits = search_pages(query, scope=scope, limit=8)
    # One search statement (besides the statement timeout's savepoint and the sections).
    [sql] = [query["sql"] for query in captured if "wiki_searchdocument" in query["sql"]]
    with connection.cursor() as cursor:
        if with_settings:
            [settings_sql] = [q["sql"] for q in captured if "set_config(" in q["sql"]]
            cursor.execute(settings_sql)
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan: dict[str, Any] = json.loads(json.dumps(cursor.fetchone()[0]))[0]
    plan["hits"] = len(hits)
    return plan


def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The plan's nodes that ran. A branch never executed is left out: the reading rule's
    lookup of denied sections (wiki.scope) reads the grants' pages only when there are
    grants, and here there are none."""
    if node.get("Actual Loops") == 0:
        return []
    found = [node]
    for child in node.get("Plans", []):
        found += nodes(child)
    return found


def shape(node: dict[str, Any]) -> list[Any]:
    return [node["Node Type"], [shape(child) for child in node.get("Plans", [])]]


def test_it_reads_only_the_sets_pages_whatever_the_set_size(site: list[Page]) -> None:
    pages = site
    plans = {size: plan_of(agent_with(pages, size), "kettle") for size in SET_SIZES}
    for size, plan in plans.items():
        assert plan["hits"] == min(size, 8), size
        everything = nodes(plan["Plan"])
        page_reads = [n for n in everything if n.get("Relation Name") == "wiki_page"]
        # Pages are reached by primary key or path range, never by a scan of the table.
        assert page_reads and all(n["Node Type"] != "Seq Scan" for n in page_reads), size
        scans = [(n["Node Type"], n.get("Relation Name")) for n in everything]
        if size <= 101:
            # A small set drives the search: its pages' index rows are read by key, never
            # the whole index. (At 2,000 of these 20,000 pages, hashing the set against the
            # matches is cheaper, and PostgreSQL may choose it.)
            assert ("Seq Scan", "wiki_searchdocument") not in scans, (size, scans)
        # No join filter throws away rows by the thousand, and no JIT compilation.
        removed = sum(n.get("Rows Removed by Join Filter", 0) for n in everything)
        assert removed <= 10 * size, (size, removed)
        assert "JIT" not in plan, size
        # The rows read from the page table follow the set, not the wiki.
        read = sum(n["Actual Rows"] * n.get("Actual Loops", 1) for n in page_reads)
        assert read <= 2 * size + 20, (size, read)
    # No threshold at 100 entries: one shape on both sides of it.
    assert shape(plans[100]["Plan"]) == shape(plans[101]["Plan"])


def test_a_set_of_large_subtrees_is_searched_from_the_words(site: list[Page]) -> None:
    """The set's entries are the 20 areas (all 20,000 pages), and 30 pages hold "teapot": the
    search starts from those 30 (the words' index), not from the set's 20,000 pages, which
    it read one by one when PostgreSQL guessed each area's range at 0.5% of the pages."""
    pages = site
    holders = pages[::600][:30]
    SearchDocument.objects.filter(page__in=holders).update(body="The teapot by the kettle.")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wiki_page; ANALYZE wiki_searchdocument")
    areas = Page.objects.filter(parent__isnull=True).order_by("path")
    agent, _ = agent_services.agent_create(actor=SystemActor("tests"), name="areas")
    PageSetEntry.objects.bulk_create(
        PageSetEntry(agent=agent, page=area, position=n, use_when=[])
        for n, area in enumerate(areas)
    )
    plan = plan_of(agent, "teapot")
    assert plan["hits"] == 8
    everything = nodes(plan["Plan"])
    read = sum(
        n["Actual Rows"] * n.get("Actual Loops", 1)
        for n in everything
        if n.get("Relation Name") in ("wiki_page", "wiki_searchdocument")
        and n["Node Type"] != "Bitmap Index Scan"
    )
    assert read <= 200, read


def test_a_cjk_word_in_a_set_of_single_pages_reads_no_page_twice(site: list[Page]) -> None:
    """2,000 pages hold 디렉토리 and 101 single pages make the set, 5 of them holding it.
    A CJK word's character pairs make PostgreSQL guess that one page holds it: no plan may
    then read the set's 101 pages again for each of the 2,000 (200,000 rows, 0.4 s at
    116,000 pages)."""
    pages = site
    holders = pages[:5] + pages[200 : 200 + 1_995]
    _, _, body = document_fields(title="", tags=[], body="디렉토리 목록을 표시합니다.")
    SearchDocument.objects.filter(page__in=holders).update(body=body)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wiki_page; ANALYZE wiki_searchdocument")
    plan = plan_of(agent_with(pages, 101), "디렉토리")
    assert plan["hits"] == 5
    everything = nodes(plan["Plan"])
    removed = sum(n.get("Rows Removed by Join Filter", 0) for n in everything)
    read = sum(
        n["Actual Rows"] * n.get("Actual Loops", 1)
        for n in everything
        if n.get("Relation Name") == "wiki_page"
    )
    assert removed <= 1_010 and read <= 2 * 101 + 20, (removed, read)


def test_a_small_subtree_is_read_through_the_tree_index(site: list[Page]) -> None:
    """One area (1,000 of the 20,000 pages, all holding "kettle") makes the set, as a
    2,031-page subtree of the 116,283 the bench searches: its pages are read through the
    tree index and their documents by key, never by a scan of either table. Under
    PostgreSQL's default random_page_cost (4, for spinning disks) the planner priced the
    subtree's index probes above a parallel scan of a whole table, and at 116,283 pages
    searched in 30 ms what it reads by index in 6. Here the tables are made to count as
    large enough for a parallel scan (min_parallel_table_scan_size), as they are there."""
    area = Page.objects.get(path="area-3")
    agent, _ = agent_services.agent_create(actor=SystemActor("tests"), name="one-area")
    PageSetEntry.objects.create(agent=agent, page=area, position=0, use_when=[])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL min_parallel_table_scan_size = 0")
    plan = plan_of(agent, "kettle", with_settings=True)
    assert plan["hits"] == 8
    scans = [
        (n["Node Type"], n.get("Relation Name"), n.get("Index Name"))
        for n in nodes(plan["Plan"])
        if n["Node Type"].endswith("Scan")
    ]
    # Pages and their documents (the chunks, read for the hits' sections, are few here, and
    # a table whose statistics say it is nearly empty, as earlier tests can leave it, is
    # rightly scanned).
    read = [scan for scan in scans if scan[1] in ("wiki_page", "wiki_searchdocument")]
    assert not [scan for scan in read if scan[0] == "Seq Scan"], scans
    assert any(index == "page_readable_tree_key" for _, _, index in scans), scans


def every_page_search(query: str) -> tuple[list[int], list[dict[str, Any]]]:
    """The hits of a search over every page and the plans of its statements that read the
    search rows, each planned under the search's own settings."""
    with CaptureQueriesContext(connection) as captured:
        hits = search_pages(query, limit=8)
    statements = [q["sql"] for q in captured if "FROM wiki_searchdocument d" in q["sql"]]
    plans = []
    with connection.cursor() as cursor:
        [settings_sql, *_] = [q["sql"] for q in captured if "set_config(" in q["sql"]]
        cursor.execute(settings_sql)
        for sql in statements:
            cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
            plans.append(json.loads(json.dumps(cursor.fetchone()[0]))[0])
    return [hit.page_id for hit in hits], plans


def documents_read(plan: dict[str, Any]) -> int:
    """How many search rows the plan read from the table (index lookups aside), those its
    conditions then threw away included."""
    return sum(
        (
            n["Actual Rows"]
            + n.get("Rows Removed by Filter", 0)
            + n.get("Rows Removed by Index Recheck", 0)
        )
        * n.get("Actual Loops", 1)
        for n in nodes(plan["Plan"])
        if n.get("Relation Name") == "wiki_searchdocument"
    )


def test_a_common_word_over_every_page_is_read_from_the_titles_holding_it(
    site: list[Page],
) -> None:
    """All 20,000 pages hold "kettle" in their bodies, 30 in their titles too. RANKING puts
    a title holding the word above any body, so the 8 best are among those 30: a search over
    every page reads them from the titles' index and never ranks the 20,000 (at a million
    pages, a common word's every page ranked took 2-4 s)."""
    titled = site[100:3100:100]
    for page in titled:
        SearchDocument.objects.filter(page=page).update(title=f"Kettle care {page.pk}")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wiki_searchdocument")
    hits, [plan] = every_page_search("kettle")
    assert len(hits) == 8 and set(hits) <= {page.pk for page in titled}
    assert documents_read(plan) <= 100, documents_read(plan)
    assert "JIT" not in plan


def test_a_question_holding_common_words_looks_up_its_rarest_terms(site: list[Page]) -> None:
    """Every page holds "kettle" and "office"; 20 pages hold "teapot" too, 20 others
    "saucer". No page holds all of "kettle office teapot saucer", and the 40 holding three
    of the four are its partial hits: each holds one of its two rarest terms, which the
    index looks up, where it looked up any of the four (all 20,000 pages, each counted and
    ranked: the 2,000-character question took 2.2-2.6 s at a million pages)."""
    teapots, saucers = site[1000:1020], site[5000:5020]
    for pages, word in ((teapots, "teapot"), (saucers, "saucer")):
        SearchDocument.objects.filter(page__in=pages).update(
            body=f"A {word} beside the shared kettle in the office."
        )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wiki_searchdocument")
    hits, plans = every_page_search("kettle office teapot saucer")
    assert len(hits) == 8 and set(hits) <= {page.pk for page in teapots + saucers}
    # Pages holding every term (none), then those holding most of them.
    assert len(plans) == 2
    read = [documents_read(plan) for plan in plans]
    assert all(rows <= 100 for rows in read), read
