"""The sidebar tree: the path to the current page unfolded, long lists cut, hidden pages out."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.actions.create import page_create
from tests.fixtures_web import count_queries
from wiki import selectors
from wiki import services as wiki_services
from wiki.models import Page
from wiki.scope import person_scope
from wiki.selectors import page_tree

ClientAs = Callable[[User], Client]


def page_url(page: Page) -> str:
    return reverse("wiki:page", kwargs={"public_id": page.public_id})


def sidebar(html: str) -> str:
    return html[html.index('<aside class="sidebar"') : html.index("</aside>")]


@pytest.fixture
def small_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Caps small enough to reach with a handful of pages."""
    monkeypatch.setattr(selectors, "SIBLING_LIMIT", 3)
    monkeypatch.setattr(selectors, "CHILDREN_PER_PAGE", 3)
    monkeypatch.setattr(selectors, "NEIGHBOURS", 1)


def test_it_unfolds_the_path_to_the_current_page_and_folds_the_rest(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    tools = make_page("Tools")
    chat = make_page("Chat", parent=tools)
    make_page("Mail", parent=tools)
    make_page("Threads", parent=chat)
    other = make_page("People")
    make_page("Onboarding", parent=other)
    make_page("Offboarding", parent=other)
    tree = sidebar(client_as(reader).get(page_url(chat)).content.decode())
    for title in ("Tools", "Chat", "Mail", "Threads", "People"):
        assert f">{title}<" in tree
    assert "Onboarding" not in tree
    assert "+2</span>" in tree  # People, folded, says how many pages are under it
    assert f'href="{page_url(chat)}" aria-current="page"' in tree


def test_it_shows_only_the_top_level_with_counts_on_the_search_page(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    tools = make_page("Tools")
    make_page("Chat", parent=tools)
    html = client_as(reader).get(reverse("wiki:search")).content.decode()
    tree = sidebar(html)
    assert ">Tools<" in tree and "+1</span>" in tree
    assert "Chat" not in tree


def test_it_previews_each_section_on_the_home_page_without_grandchildren(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    tools = make_page("Tools")
    chat = make_page("Chat", parent=tools)
    make_page("Threads", parent=chat)
    html = client_as(reader).get(reverse("wiki:home")).content.decode()
    sections = html[html.index("<h2>Sections</h2>") : html.index("<h2>Recent changes</h2>")]
    assert ">Chat<" in sections
    assert "1 page<" in sections
    assert "Threads" not in sections
    assert "Chat" not in sidebar(html)


def test_it_cuts_a_long_sibling_list_and_centres_it_on_a_later_current_page(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs, small_lists: None
) -> None:
    folder = make_page("Commands")
    pages = {title: make_page(title, parent=folder) for title in ("Awk", "Bash", "Cat", "Dig")}
    pages["Zip"] = make_page("Zip", parent=folder)
    client = client_as(reader)
    more = f'<a href="{page_url(folder)}" class="leaf tree-more"'
    early = sidebar(client.get(page_url(pages["Bash"])).content.decode())
    assert ">Awk<" in early and ">Cat<" in early and "Dig" not in early and "Zip" not in early
    assert f"{more}>and 2 more…</a>" in early
    late = sidebar(client.get(page_url(pages["Zip"])).content.decode())
    assert ">Dig<" in late and ">Zip<" in late
    assert "Awk" not in late and "Cat" not in late
    assert f'{more} title="Earlier pages">…</a>' in late
    assert f"{more}>and 3 more…</a>" in late


def test_it_pages_through_the_children_of_a_large_page(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs, small_lists: None
) -> None:
    folder = make_page("Commands")
    for title in ("Awk", "Bash", "Cat", "Dig", "Echo"):
        make_page(title, parent=folder)
    client = client_as(reader)
    first = client.get(page_url(folder)).content.decode()
    main = first[first.index("Pages under <bdi>Commands") :]
    assert "1\u20133 of 5 pages" in main and "Awk" in main and "Dig" not in main
    assert '?children=2#children" rel="next"' in main
    second = client.get(page_url(folder), {"children": "2"}).content.decode()
    main = second[second.index("Pages under <bdi>Commands") :]
    assert "4\u20135 of 5 pages" in main and "Dig" in main and "Echo" in main and "Awk" not in main
    beyond = client.get(page_url(folder), {"children": "9"}).content.decode()
    assert "Back to the first ones" in beyond
    assert client.get(page_url(folder), {"children": "x"}).status_code == 200


def test_it_takes_the_pages_under_an_archived_page_out_of_the_tree_with_it(
    make_page: Callable[..., Page], reader: User, editor: User, client_as: ClientAs
) -> None:
    handbook = make_page("Handbook")
    old = make_page("Old section", parent=handbook)
    older = make_page("Older section", parent=old)
    gone = make_page("Still useful", parent=older)
    wiki_services.page_archive(actor=editor, page=old)
    client = client_as(reader)
    html = client.get(page_url(handbook)).content.decode()
    assert "Old section" not in sidebar(html) and "Still useful" not in html
    search_tree = sidebar(client.get(reverse("wiki:search")).content.decode())
    assert ">Handbook<" in search_tree and "+1</span>" not in search_tree
    assert client.get(page_url(gone)).status_code == 404
    # Editors still open it, archived, to restore it.
    archived_view = client_as(editor).get(page_url(gone)).content.decode()
    assert "Still useful" in archived_view and "archived" in archived_view.lower()


def test_it_keeps_pages_in_review_out_of_the_tree_and_counts(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    tools = make_page("Tools")
    page_create(actor=reader, title="Secret draft", body="Draft.\n", parent=tools)
    html = client_as(reader).get(reverse("wiki:search")).content.decode()
    assert "Secret draft" not in html
    assert "+1</span>" not in sidebar(html)


def test_it_renders_a_deep_page_with_the_same_queries_as_a_shallow_one(
    make_page: Callable[..., Page], reader: User, client_as: ClientAs
) -> None:
    shallow = make_page("Shallow")
    make_page("Shallow child", parent=shallow)
    page = make_page("Level 0")
    for depth in range(1, 7):
        page = make_page(f"Level {depth}", parent=page)
    make_page("Deep child", parent=page)
    client = client_as(reader)
    client.get(page_url(shallow))
    assert count_queries(client, page_url(shallow)) == count_queries(client, page_url(page))
    tree = sidebar(client.get(page_url(page)).content.decode())
    assert all(f">Level {depth}<" in tree for depth in range(7)) and ">Deep child<" in tree


@pytest.mark.skipif(connection.vendor != "sqlite", reason="PostgreSQL's: test_browse_plan")
def test_the_trees_lists_are_read_from_the_sibling_order_index_on_sqlite(
    grow_wiki: Callable[[int], list[Page]], editor: User
) -> None:
    """Issue 51: every list of children is one ordered range of page_sibling_order (parent,
    position, slug, id) on SQLite too, and the counts come from the parent index."""
    pages = grow_wiki(60)
    with CaptureQueriesContext(connection) as captured:
        page_tree(reader=person_scope(editor), unfold_top_level=True)
        page_tree(pages[-1], reader=person_scope(editor))
    assert len(captured) == 7
    # The top level's lists, the home page's previews, the lists along the page's path.
    lists = [
        query["sql"] for query in captured if "FROM wiki_page p WHERE p.parent_id" in query["sql"]
    ]
    counts = [query["sql"] for query in captured if "COUNT(" in query["sql"]]
    assert len(lists) == 3 and len(counts) == 2
    for sql in lists + counts:
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plan = [row[-1] for row in cursor.fetchall()]
        reads = [
            step
            for step in plan
            if step.startswith(("SCAN p", "SEARCH p", "SEARCH wiki_page", "SCAN wiki_page"))
        ]
        assert reads and all("USING" in step for step in reads), plan
        if sql in lists:
            assert all("page_sibling_order (parent_id=?" in step for step in reads), plan
