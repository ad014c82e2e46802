"""An agent sees only its own pages and a reader never sees an archived one, through any door.

Unique words are planted in a page outside the agent's set, an archived page, a draft nobody
approved and a pending proposal; a page in the set links to all of them. No answer the
reader can get may hold one of those words: MCP tools for the agent; web pages and the REST
API for a person (archived pages).
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]

OUTSIDE, ARCHIVED, DRAFT, PENDING = "zorblaxian", "quillarchy", "draftowlet", "pendingmarmot"


def _plant(make_page: MakePage, editor: User, reader: User) -> dict[str, Page]:
    outside = make_page(f"The {OUTSIDE} page", f"Only {OUTSIDE} lives here.\n")
    archived = make_page(f"The {ARCHIVED} page", f"Old {ARCHIVED} notes.\n")
    wiki_services.page_archive(actor=editor, page=archived)
    draft = page_create(
        actor=reader, title=f"The {DRAFT} page", body=f"Unapproved {DRAFT} text.\n"
    ).page
    links = " ".join(f"[[{p.public_id}]]" for p in (outside, archived, draft))
    shared = make_page("Shared handbook", f"See also {links} for more.\n")
    version_propose(
        actor=reader,
        page=shared,
        body=f"See also {links} and {PENDING}.\n",
        change_summary=f"Add {PENDING}",
    )
    return {"shared": shared, "outside": outside, "archived": archived, "draft": draft}


def _assert_clean(texts: list[str], words: tuple[str, ...]) -> None:
    for text in texts:
        for word in words:
            assert word not in text.lower(), f"{word!r} leaked into: {text[:300]}"


def test_it_keeps_every_word_outside_the_set_out_of_every_mcp_answer(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User, reader: User
) -> None:
    pages = _plant(make_page, editor, reader)
    editor_agent.give(pages["shared"])
    shared = pages["shared"].public_id
    calls: list[tuple[str, dict[str, object]]] = [
        ("browse", {}),
        ("get_page", {"pageId": shared}),
        ("get_page_source", {"pageId": shared}),
        ("search_pages", {"query": "see also more"}),
        ("search_pages", {"query": "shared handbook"}),
    ]
    for word in (OUTSIDE, ARCHIVED, DRAFT, PENDING, "page"):
        calls.append(("search_pages", {"query": word}))
    for name in ("outside", "archived", "draft"):
        calls.append(("get_page", {"pageId": pages[name].public_id}))
        calls.append(("get_page_source", {"pageId": pages[name].public_id}))
    texts = []
    for tool, arguments in calls:
        result = mcp.call(editor_agent, tool, **arguments)
        texts.append(json.dumps([c.model_dump() for c in result.content]))
        if result.structuredContent is not None:
            texts.append(json.dumps(result.structuredContent))
    _assert_clean(texts, (OUTSIDE, ARCHIVED, DRAFT, PENDING))
    # The searches did run: the shared page is found by its own words.
    assert shared in texts[6] or shared in texts[8]


def test_it_keeps_an_archived_pages_words_from_a_reader_through_web_and_rest(
    make_page: MakePage,
    editor: User,
    reader: User,
    outsider: User,
    client_as: Callable[[User], Client],
) -> None:
    pages = _plant(make_page, editor, reader)
    archived, shared = pages["archived"].public_id, pages["shared"].public_id
    client = client_as(outsider)
    urls = [
        "/",
        f"/p/{shared}/",
        "/search/?q=old+notes",
        f"/p/{archived}/",
        f"/reviews/pages/{archived}/history/",
        f"/reviews/pages/{archived}/v1/",
        f"/reviews/pages/{archived}/compare/?a=1&b=1",
        "/api/v1/pages/",
        "/api/v1/pages/?q=old+notes",
        f"/api/v1/pages/{shared}/",
        f"/api/v1/pages/{archived}/",
        f"/api/v1/pages/{archived}/versions/",
        f"/api/v1/pages/{archived}/versions/1/",
    ]
    texts = []
    for url in urls:
        response = client.get(url)
        assert response.status_code < 500, url
        texts.append(response.content.decode())
    _assert_clean(texts, (ARCHIVED,))
    assert client.get(f"/reviews/pages/{archived}/history/").status_code == 404
    assert client.get(f"/api/v1/pages/{archived}/versions/").status_code == 404


def test_it_keeps_the_review_queue_for_reviewers_on_the_api_as_on_the_web(
    make_page: MakePage,
    editor: User,
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    _plant(make_page, editor, reader)
    refused = client_as(reader).get("/api/v1/reviews/")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert DRAFT not in refused.content.decode()
    assert client_as(reader).get("/reviews/").status_code == 403
    allowed = client_as(reviewer).get("/api/v1/reviews/")
    assert allowed.status_code == 200 and DRAFT in allowed.content.decode().lower()


def test_it_shows_a_renamed_pages_new_title_on_the_pages_that_link_to_it(
    make_page: MakePage, editor: User, reader: User, client_as: Callable[[User], Client]
) -> None:
    target = make_page("Escalation ladder", "Call the lead.\n")
    linking = make_page("Rota", f"Follow [[{target.public_id}]].\n")
    version_propose(
        actor=editor, page=target, title="Incident steps", change_summary="rename", publish=True
    )
    html = client_as(reader).get(f"/p/{linking.public_id}/").content.decode()
    assert "Incident steps" in html and "Escalation ladder" not in html
    found = client_as(reader).get("/api/v1/pages/?q=ladder").json()
    assert linking.public_id not in json.dumps(found)


ANCESTOR, SIBLING = "ancestorvole", "siblingstoat"


def test_it_keeps_hidden_ids_paths_parents_and_slugs_out_of_every_mcp_answer(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User, reader: User
) -> None:
    planted = _plant(make_page, editor, reader)
    department = make_page(f"The {ANCESTOR} department", "Above the agent's entry.\n")
    team = make_page("Platform team", "Also above it.\n", parent=department)
    # (A page's own text may name any id: that is its content, not something inferred.)
    entry = make_page("Runbooks", "How we run things.\n")
    version_propose(actor=editor, page=entry, parent=team, publish=True)
    child = make_page("Pager duty", "Answer the pager.\n", parent=entry)
    make_page(f"Runbook {SIBLING}", "A hidden sibling of the agent's new page.\n")
    editor_agent.give(entry)
    hidden = [department, team, *planted.values()]
    hidden.remove(planted["shared"])
    ok_calls: list[tuple[str, dict[str, object]]] = [
        ("browse", {}),
        ("browse", {"under": "runbooks"}),
        ("search_pages", {"query": "pager"}),
        ("search_pages", {"query": "runbooks"}),
        ("get_page", {"pageId": entry.public_id}),
        ("get_page", {"pageId": child.public_id}),
        ("get_page_source", {"pageId": entry.public_id}),
        ("get_page_source", {"pageId": child.public_id}),
        ("create_page", {"title": f"Runbook {SIBLING}", "markdown": "Ours.\n"}),
    ]
    answers = [mcp.ok(editor_agent, tool, **arguments) for tool, arguments in ok_calls]
    created = answers[-1]["pageId"]
    source = mcp.ok(editor_agent, "get_page_source", pageId=created)
    answers.append(source)
    text = json.dumps(answers).lower()
    _assert_clean([text], (ANCESTOR, "platform-team", OUTSIDE, ARCHIVED, DRAFT, PENDING))
    for page in hidden:
        assert page.public_id not in text, page.title
    # Paths start at the entry; the entry's parent is outside, so it has none.
    assert answers[4]["path"] == "runbooks" and answers[5]["path"] == "runbooks/pager-duty"
    assert answers[6]["parentId"] is None and answers[7]["parentId"] == entry.public_id
    # The new page's slug is the same whether or not a hidden page holds its name.
    assert source["path"] == f"runbook-{SIBLING}-{created.removeprefix('pg_')}"
    # Ids the agent names get the answer a page that does not exist gets.
    for page in hidden:
        for tool in ("get_page", "get_page_source"):
            error = mcp.error(editor_agent, tool, pageId=page.public_id)
            missing = mcp.error(editor_agent, tool, pageId="pg_zzzzzzzz")
            assert error == missing.replace("pg_zzzzzzzz", page.public_id)
