"""Archiving a page archives the pages under it, for readers and agents alike; editors can
still open them, and restoring the page brings back exactly the pages archived with it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from core.errors import Conflict
from wiki import services as wiki_services
from wiki.models import Page
from wiki.search import search_pages

from .fixtures_mcp import AgentKey, rpc_tool

pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]


@pytest.fixture
def section(make_page: MakePage) -> dict[str, Page]:
    top = make_page("Retired process", "The old fax workflow.")
    child = make_page("Fax numbers", "Dial the okapi line.", parent=top)
    grandchild = make_page("Fax cover sheet", "The okapi template.", parent=child)
    return {"top": top, "child": child, "grandchild": grandchild}


def error_of(client: Client, token: str, tool: str, **arguments: str) -> str:
    result = rpc_tool(client, token, tool, **arguments)
    assert result["isError"] is True, result
    text: str = result["content"][0]["text"]
    return text


def test_it_hides_the_pages_under_an_archived_page_from_an_agent_whose_entry_it_is(
    client: Client, section: dict[str, Page], reader_agent: AgentKey, editor: User
) -> None:
    reader_agent.give(section["top"])
    assert len(rpc_tool(client, reader_agent.token, "browse")["structuredContent"]["pages"]) == 3
    wiki_services.page_archive(actor=editor, page=section["top"])
    assert rpc_tool(client, reader_agent.token, "browse")["structuredContent"]["pages"] == []
    found = rpc_tool(client, reader_agent.token, "search_pages", query="okapi")
    assert found["structuredContent"]["results"] == []
    for page in section.values():
        error = error_of(client, reader_agent.token, "get_page", pageId=page.public_id)
        assert error.startswith("not_found: "), error


def test_it_hides_them_from_readers_on_the_web_the_api_and_search(
    section: dict[str, Page], editor: User, reader: User, client_as: Callable[[User], Client]
) -> None:
    wiki_services.page_archive(actor=editor, page=section["top"])
    client = client_as(reader)
    for page in section.values():
        assert client.get(f"/p/{page.public_id}/").status_code == 404
        assert client.get(f"/api/v1/pages/{page.public_id}/").status_code == 404
    assert search_pages("okapi") == []
    assert "Fax numbers" not in client.get("/search/?q=okapi").content.decode()
    # An editor can still open a page under it, to restore the section.
    assert client_as(editor).get(f"/p/{section['child'].public_id}/").status_code == 200


def test_it_restores_exactly_the_pages_archived_with_it(
    section: dict[str, Page], editor: User, make_page: MakePage
) -> None:
    apart = make_page("Fax history", "Archived on its own.", parent=section["top"])
    wiki_services.page_archive(actor=editor, page=apart)
    wiki_services.page_archive(actor=editor, page=section["top"])
    with pytest.raises(Conflict, match="restore its parent page first"):
        wiki_services.page_restore(actor=editor, page=section["child"])
    wiki_services.page_restore(actor=editor, page=section["top"])
    archived = dict(Page.objects.values_list("title", "archived"))
    assert archived == {
        "Retired process": False,
        "Fax numbers": False,
        "Fax cover sheet": False,
        "Fax history": True,
    }
    assert {hit.title for hit in search_pages("okapi")} == {"Fax numbers", "Fax cover sheet"}
