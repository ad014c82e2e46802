"""Reordering a page among its siblings: one service, the tree, REST and MCP browse follow."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from core.errors import Conflict, Forbidden, InvalidArgument
from core.models import AuditEvent
from wiki import selectors
from wiki import services as wiki_services
from wiki.models import Page
from wiki.scope import EVERYTHING

from .fixtures_mcp import AgentKey, rpc_tool
from .test_tree_locks import WAIT_SECONDS, Writer, finish, wait_until_waiting_on_a_lock

MakePage = Callable[..., Page]


def titles_under(parent: Page | None) -> list[str]:
    """The sidebar's list of `parent`'s children (None: the top level)."""
    tree = selectors.page_tree(parent, reader=EVERYTHING)
    nodes = tree.roots if parent is None else tree.current.children  # type: ignore[union-attr]
    return [node.title for node in nodes]


@pytest.fixture
def tools(make_page: MakePage) -> Page:
    tools = make_page("Tools")
    for title in ("Alpha", "Bravo", "Charlie", "Delta"):
        make_page(title, parent=tools)
    return tools


def child(parent: Page, title: str) -> Page:
    return Page.objects.get(parent=parent, title=title)


@pytest.mark.django_db
def test_it_places_a_page_first_or_after_a_sibling_and_audits_it(tools: Page, editor: User) -> None:
    assert titles_under(tools) == ["Alpha", "Bravo", "Charlie", "Delta"]
    delta = child(tools, "Delta")
    before = delta.last_version_number
    assert wiki_services.page_reorder(actor=editor, page=delta, after=None) == 0
    assert titles_under(tools) == ["Delta", "Alpha", "Bravo", "Charlie"]
    alpha, charlie = child(tools, "Alpha"), child(tools, "Charlie")
    assert wiki_services.page_reorder(actor=editor, page=alpha, after=charlie) == 3
    assert titles_under(tools) == ["Delta", "Bravo", "Charlie", "Alpha"]
    # The order is not content: no new version; the audit says what happened.
    delta.refresh_from_db()
    assert delta.last_version_number == before
    events = AuditEvent.objects.filter(action="page.reorder").order_by("id")
    assert [e.data for e in events] == [
        {"after": None, "place": 0},
        {"after": charlie.public_id, "place": 3},
    ]


@pytest.mark.django_db
def test_it_puts_new_and_moved_pages_last_among_their_siblings(
    tools: Page, editor: User, make_page: MakePage
) -> None:
    wiki_services.page_reorder(actor=editor, page=child(tools, "Delta"), after=None)
    make_page("Aardvark", parent=tools)
    assert titles_under(tools) == ["Delta", "Alpha", "Bravo", "Charlie", "Aardvark"]
    guides = make_page("Guides")
    make_page("Zulu", parent=guides)
    wiki_services.page_move(actor=editor, page=child(tools, "Alpha"), parent=guides)
    assert titles_under(guides) == ["Zulu", "Alpha"]
    # At the top level too.
    make_page("Aaa top")
    assert titles_under(None) == ["Tools", "Guides", "Aaa top"]


@pytest.mark.django_db
def test_it_refuses_non_editors_strangers_and_pages_that_are_not_live(
    tools: Page, editor: User, reader: User, reviewer: User, make_page: MakePage
) -> None:
    delta = child(tools, "Delta")
    for who in (reader, reviewer):
        with pytest.raises(Forbidden):
            wiki_services.page_reorder(actor=who, page=delta, after=None)
    stranger = make_page("Stranger")
    with pytest.raises(InvalidArgument, match="not beside this one"):
        wiki_services.page_reorder(actor=editor, page=delta, after=stranger)
    with pytest.raises(InvalidArgument, match="not beside this one"):
        wiki_services.page_reorder(actor=editor, page=delta, after=delta)
    wiki_services.page_archive(actor=editor, page=delta)
    with pytest.raises(Conflict, match="not live"):
        wiki_services.page_reorder(actor=editor, page=Page.objects.get(pk=delta.pk), after=None)
    assert titles_under(tools) == ["Alpha", "Bravo", "Charlie"]


@pytest.mark.django_db
def test_it_lists_children_in_their_order_over_rest_and_mcp_browse(
    tools: Page,
    editor: User,
    reader: User,
    client: Client,
    client_as: Callable[[User], Client],
    make_agent: Callable[..., AgentKey],
) -> None:
    wiki_services.page_reorder(
        actor=editor, page=child(tools, "Charlie"), after=child(tools, "Alpha")
    )
    wiki_services.page_reorder(actor=editor, page=child(tools, "Delta"), after=None)
    expected = ["Delta", "Alpha", "Charlie", "Bravo"]
    children = client_as(reader).get("/api/v1/pages/", {"parent": tools.public_id}).json()
    assert [p["title"] for p in children["results"]] == expected
    key = make_agent("ordered")
    key.give(tools)
    browse = rpc_tool(client, key.token, "browse")["structuredContent"]
    assert [p["title"] for p in browse["pages"]] == ["Tools", *expected]
    # An entry inside another entry's subtree takes browse's other road: the same order.
    key.give(child(tools, "Bravo"), always=True)
    browse = rpc_tool(client, key.token, "browse")["structuredContent"]
    assert [p["title"] for p in browse["pages"]] == ["Tools", *expected]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_it_keeps_both_of_two_reorders_at_once(
    tools: Page, editor: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first reorder is held after its renumbering, locks held, until the second waits
    on them; the second then reorders from the first's result, so neither change is lost."""
    delta, alpha, charlie = (child(tools, t) for t in ("Delta", "Alpha", "Charlie"))
    reached, release = threading.Event(), threading.Event()
    original = wiki_services.audit_record

    def audit_record(**kwargs: Any) -> Any:
        if threading.current_thread().name == "first" and not reached.is_set():
            reached.set()
            assert release.wait(WAIT_SECONDS)
        return original(**kwargs)

    monkeypatch.setattr(wiki_services, "audit_record", audit_record)
    try:
        first = Writer(
            "first", lambda: wiki_services.page_reorder(actor=editor, page=delta, after=None)
        )
        first.start()
        assert reached.wait(WAIT_SECONDS)
        second = Writer(
            "second", lambda: wiki_services.page_reorder(actor=editor, page=alpha, after=charlie)
        )
        second.start()
        wait_until_waiting_on_a_lock(second)
    finally:
        release.set()
    finish(first, second)
    assert first.error is None and second.error is None, (first.error, second.error)
    assert titles_under(tools) == ["Delta", "Bravo", "Charlie", "Alpha"]


@pytest.mark.django_db
def test_it_reorders_from_the_move_screen(
    tools: Page, editor: User, reader: User, client_as: Callable[[User], Client]
) -> None:
    delta = child(tools, "Delta")
    url = f"/p/{delta.public_id}/reorder/"
    assert client_as(reader).post(url, {"after": "first"}).status_code == 403
    client = client_as(editor)
    screen = client.get(f"/p/{delta.public_id}/move/").content.decode()
    charlie = child(tools, "Charlie")
    # It stands after Charlie today: that is the choice shown.
    assert f'<option value="{charlie.public_id}" selected>After “Charlie”</option>' in screen
    assert "After “Delta”" not in screen
    refused = client.post(url, {"after": "pg_zzzzzzzz"})
    assert refused.status_code == 200
    assert "There is no page pg_zzzzzzzz" in refused.content.decode()
    empty = client.post(url, {})
    assert empty.status_code == 200 and "Please correct" in empty.content.decode()
    placed = client.post(url, {"after": "first"})
    assert placed.status_code == 302
    assert titles_under(tools) == ["Delta", "Alpha", "Bravo", "Charlie"]
    shown = client.get(placed["Location"]).content.decode()
    assert "“Delta” now comes first among its siblings." in shown
