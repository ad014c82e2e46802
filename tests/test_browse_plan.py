"""On PostgreSQL, browse reads an agent's entries from the tree-order index: the plan is pinned.

6,000 live pages under two top-level areas, both in the agent's set. Counting each entry's
pages and reading a window of 200 must come from the index page_readable_tree_key alone
(no sort of an entry's thousands of pages, no heap, no scan of the table), and the window
must be the tree order that browse promises.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext

from agents import browsing
from agents import services as agent_services
from agents.browsing import browse_page
from agents.models import Agent, PageSetEntry
from core.actors import SystemActor
from tests.bulk import make_live
from wiki import permissions
from wiki.models import Page
from wiki.scope import person_scope
from wiki.selectors import page_tree

# VACUUM (for index-only scans) cannot run inside the test's transaction.
pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

PAGES = 6_000


def bulk_site(editor: User) -> list[Page]:
    """Two areas of PAGES live pages in all, two levels deep, with fresh statistics."""
    areas = Page.objects.bulk_create(
        Page(title=f"Area {n}", slug=f"area-{n}", path=f"area-{n}") for n in range(2)
    )
    topics = Page.objects.bulk_create(
        Page(
            title=f"Topic {n}",
            slug=f"t-{n}",
            path=f"{areas[n % 2].path}/t-{n}",
            parent=areas[n % 2],
        )
        for n in range(100)
    )
    leaves = Page.objects.bulk_create(
        Page(
            title=f"Leaf {n}",
            slug=f"l-{n}",
            path=f"{topics[n % 100].path}/l-{n}",
            parent=topics[n % 100],
        )
        for n in range(PAGES - 102)
    )
    everything = areas + topics + leaves
    make_live(everything, author=editor)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE wiki_page")
    return areas


def agent_with(areas: list[Page]) -> Agent:
    agent, _ = agent_services.agent_create(actor=SystemActor("tests"), name="browser")
    PageSetEntry.objects.bulk_create(
        PageSetEntry(agent=agent, page=page, position=n, use_when=[])
        for n, page in enumerate(areas)
    )
    return agent


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


def page_reads(sql: str) -> list[dict[str, Any]]:
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan: dict[str, Any] = json.loads(json.dumps(cursor.fetchone()[0]))[0]
    return [n for n in nodes(plan["Plan"]) if n.get("Relation Name") == "wiki_page"]


@pytest.mark.parametrize("under", [None, "area-1/t-3"])
def test_it_counts_and_reads_entries_from_the_tree_order_index(
    editor: User, under: str | None
) -> None:
    agent = agent_with(bulk_site(editor))
    with CaptureQueriesContext(connection) as captured:
        shown = browse_page(agent, cursor=None, under=under)
    paths = [entry["path"] for entry in shown.entries]
    root = under or "area-0"
    subtree = Page.objects.filter(Q(path=root) | Q(path__startswith=root + "/"))
    expected = sorted(subtree.values_list("path", flat=True), key=lambda path: path.split("/"))
    assert paths == expected[:200]
    assert shown.total == (len(expected) if under else PAGES)
    reads = [
        page_reads(query["sql"])
        for query in captured
        if query["sql"].startswith(("SELECT (SELECT count", "SELECT e.n"))
    ]
    assert len(reads) == 2  # the counts, then the window
    for read in reads:
        assert read, reads
        for node in read:
            assert node["Node Type"] == "Index Only Scan", node
            assert node["Index Name"] == "page_readable_tree_key", node
            assert node.get("Heap Fetches", 0) == 0, node
    # The window reads its 200 rows from the index, never the entry's thousands.
    assert reads[1][0]["Actual Rows"] <= 200


def test_a_persons_tree_reads_its_hidden_pages_by_index(editor: User, admin_user: User) -> None:
    """The tree's first statement for a person whose group has a subsection granted back
    inside a section hidden from them: the hidden and lifted pages come by index (archived,
    unpublished, the path's prefixes, the walk up from the grants), never a scan of the table."""
    areas = bulk_site(editor)
    topic = Page.objects.get(path="area-1/t-1")
    leaf = Page.objects.filter(parent=topic).order_by("path").first()
    assert leaf is not None
    for page, group in ((areas[1], "Legal"), (leaf, "Staff")):
        permissions.grant_set(
            actor=admin_user,
            page=page,
            group=Group.objects.get_or_create(name=group)[0],
            rights=["read"],
        )
    sam = User.objects.create_user("sam")
    sam.groups.add(Group.objects.get(name="Staff"))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    with CaptureQueriesContext(connection) as captured:
        tree = page_tree(leaf, reader=person_scope(sam))
    assert leaf.public_id in {node.public_id for node in tree.roots}
    first = captured[0]["sql"]
    assert "above_granted" in first
    reads = page_reads(first)
    assert reads
    for node in reads:
        assert node["Node Type"] != "Seq Scan", json.dumps(reads, indent=1)[:6000]


@pytest.mark.parametrize("where", ["home", "leaf"])
def test_the_web_tree_reads_only_the_rows_it_shows(editor: User, where: str) -> None:
    """Issue 51: the home page's tree took 9.3 s at a million pages, its lists of children
    read by checking every row of the table. Each statement of the tree (the home page's
    four, a page's three) reads wiki_page through an index, and no more rows than a few
    lists' worth, whatever the size of the wiki."""
    bulk_site(editor)
    leaf = Page.objects.get(path="area-1/t-3/l-3")
    with CaptureQueriesContext(connection) as captured:
        if where == "home":
            tree = page_tree(reader=person_scope(editor), unfold_top_level=True)
        else:
            tree = page_tree(leaf, reader=person_scope(editor))
    assert len(captured) == (4 if where == "home" else 3)
    assert [root.title for root in tree.roots] == ["Area 0", "Area 1"]
    if where == "leaf":
        topic = next(node for node in tree.roots[1].children if node.title == "Topic 3")
        assert topic.open and topic.child_count == Page.objects.filter(parent=leaf.parent).count()
    # A page's counts are of its siblings' children (half this small table): home's only.
    statements = [query["sql"] for query in captured]
    for sql in statements if where == "home" else statements[:2]:
        for node in page_reads(sql):
            assert node["Node Type"] != "Seq Scan", json.dumps(node)[:2000]
            assert node["Actual Rows"] * node["Actual Loops"] <= 400, json.dumps(node)[:2000]


def test_a_large_entry_is_counted_only_up_to_the_cap(editor: User, monkeypatch: Any) -> None:
    """Issue 51: an every-page agent's first browse at a million pages spent 0.5-0.85 s
    counting every index entry for `total`. The count stops past COUNT_CAP (1,000 here, of
    6,000 pages): an index-only range of at most cap + 1 entries, and `total` says it is a
    lower bound; the next page, by cursor, follows on."""
    monkeypatch.setattr(browsing, "COUNT_CAP", 1_000)
    agent = agent_with(bulk_site(editor))
    with CaptureQueriesContext(connection) as captured:
        shown = browse_page(agent, cursor=None, under=None)
    assert len(captured) == 3  # the entries, the counts, the window
    # Each entry (3,000 pages apiece) is counted to cap + 1: at least 2,002 pages.
    assert (shown.total, shown.total_is_lower_bound) == (2_002, True)
    counts = [query["sql"] for query in captured if query["sql"].startswith("SELECT (SELECT")]
    assert len(counts) == 1
    read = page_reads(counts[0])
    assert read
    for node in read:
        assert node["Node Type"] == "Index Only Scan", node
        assert node["Index Name"] == "page_readable_tree_key", node
    # Both entries stop at cap + 1: no full range of either.
    assert sum(node["Actual Rows"] * node["Actual Loops"] for node in read) <= 2 * 1_001
    assert shown.next_cursor is not None
    after = browse_page(agent, cursor=shown.next_cursor, under=None)
    assert after.entries[0]["path"] != shown.entries[0]["path"]
    assert len(after.entries) == 200
