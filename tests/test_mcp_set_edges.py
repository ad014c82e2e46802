"""The edges of an agent's set, through the official MCP client: nothing outside it can be
inferred (ids, paths, parents, slugs), and an all-pages agent's set is every page, now and
later."""

from __future__ import annotations

import json
from collections.abc import Callable
from io import StringIO
from typing import Any

from django.contrib.auth.models import User
from django.core.management import call_command

from agents import selectors
from agents.models import Agent
from reviews.actions.create import page_create
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey

MakePage = Callable[..., Page]

MISSING = "pg_zzzzzzzz"
# Every tool that takes a page id, with the id's argument and the other arguments it needs.
ID_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("get_page", "pageId", {}),
    ("get_page_source", "pageId", {}),
    ("update_page", "pageId", {"markdown": "Mine now.", "changeSummary": "x"}),
    ("update_page", "pageId", {"markdown": "Mine now.", "changeSummary": "x", "baseVersion": 1}),
    ("edit_page", "pageId", {"edits": [{"oldText": "a", "newText": "b"}], "changeSummary": "x"}),
    ("append_to_page", "pageId", {"markdown": "More.", "changeSummary": "x"}),
    ("create_page", "parentId", {"title": "Sneaky", "markdown": "x"}),
    ("browse", "under", {}),
    ("search_pages", "under", {"query": "payroll"}),
]


def rows() -> tuple[int, int]:
    return Page.objects.count(), Version.objects.count()


def test_it_answers_a_page_outside_the_set_word_for_word_as_a_missing_one(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    inside = make_page("Support", "Help customers.")
    outside = make_page("Payroll", "Salaries: a and b.")
    editor_agent.give(inside)
    before = rows()
    for tool, argument, others in ID_CALLS:
        hidden = mcp.error(editor_agent, tool, **{argument: outside.public_id}, **others)
        missing = mcp.error(editor_agent, tool, **{argument: MISSING}, **others)
        assert hidden == missing.replace(MISSING, outside.public_id), tool
        assert hidden.startswith("not_found: "), (tool, hidden)
    # A path names nothing either: an existing page outside the set, a path nobody has.
    hidden = mcp.error(editor_agent, "browse", under=outside.path)
    missing = mcp.error(editor_agent, "browse", under="no-such-area")
    assert hidden == missing.replace("no-such-area", outside.path)
    assert rows() == before


def deep_tree(make_page: MakePage) -> dict[str, Page]:
    """Two departments above the page an agent is given, and pages below it."""
    eng = make_page("Engineering dept", "Top.")
    backend = make_page("Backend dept", "Middle.", parent=eng)
    deploys = make_page("Deploys", "How we deploy a kettle.", parent=backend)
    rollback = make_page("Rollback", "Undo a kettle deploy.", parent=deploys)
    return {"eng": eng, "backend": backend, "deploys": deploys, "rollback": rollback}


def test_it_starts_every_path_at_the_agents_own_entry(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    pages = deep_tree(make_page)
    deploys, rollback = pages["deploys"], pages["rollback"]
    assert rollback.path == "engineering-dept/backend-dept/deploys/rollback"
    editor_agent.give(deploys)
    answers = {
        "browse": mcp.ok(editor_agent, "browse"),
        "under": mcp.ok(editor_agent, "browse", under="deploys"),
        "under_id": mcp.ok(editor_agent, "browse", under=deploys.public_id),
        "search": mcp.ok(editor_agent, "search_pages", query="kettle"),
        "search_under": mcp.ok(editor_agent, "search_pages", query="kettle", under="deploys"),
        "page": mcp.ok(editor_agent, "get_page", pageId=rollback.public_id),
        "source": mcp.ok(editor_agent, "get_page_source", pageId=deploys.public_id),
        "child_source": mcp.ok(editor_agent, "get_page_source", pageId=rollback.public_id),
        "created": mcp.ok(
            editor_agent,
            "create_page",
            title="Canary",
            markdown="Slowly.",
            parentId=deploys.public_id,
        ),
    }
    assert [p["path"] for p in answers["browse"]["pages"]] == ["deploys", "deploys/rollback"]
    assert answers["under"] == answers["under_id"]
    assert answers["under"]["pages"] == answers["browse"]["pages"]
    assert sorted(h["path"] for h in answers["search"]["results"]) == [
        "deploys",
        "deploys/rollback",
    ]
    assert answers["search_under"] == answers["search"]
    assert answers["page"]["path"] == "deploys/rollback"
    # The entry's own parent is outside the set: no id for it; under the entry, its parent.
    assert answers["source"]["parentId"] is None and answers["source"]["path"] == "deploys"
    assert answers["child_source"]["parentId"] == deploys.public_id
    assert answers["child_source"]["path"] == "deploys/rollback"
    text = json.dumps(answers).lower()
    for hidden in (pages["eng"], pages["backend"]):
        assert hidden.public_id not in text
        assert hidden.slug not in text and "dept" not in text


def test_it_gives_an_agents_new_page_a_slug_no_hidden_page_decides(
    mcp: MCP, make_page: MakePage, make_agent: Callable[..., AgentKey], reader: User
) -> None:
    hidden = make_page("Payroll", "Salaries.")  # top level, outside both agents' sets
    draft = page_create(actor=reader, title="Budget", body="Draft.").page
    paths = {}
    for name, title in (("taken", "Payroll"), ("drafted", "Budget"), ("free", "Parking")):
        key = make_agent(f"bot-{name}", can_edit=True)
        created = mcp.ok(key, "create_page", title=title, markdown="Ours.")
        source = mcp.ok(key, "get_page_source", pageId=created["pageId"])
        paths[name] = (source["path"], created["pageId"])
    # The same form whether or not an unseen page (live, or a draft) holds the name.
    for (path, page_id), title in zip(
        paths.values(), ("payroll", "budget", "parking"), strict=True
    ):
        assert path == f"{title}-{page_id.removeprefix('pg_')}"
    assert hidden.slug == "payroll" and draft.slug == "budget"


def test_it_keeps_slugs_unique_among_siblings_for_agents_pages(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    first = mcp.ok(editor_agent, "create_page", title="Notes", markdown="One.")
    second = mcp.ok(editor_agent, "create_page", title="Notes", markdown="Two.")
    slugs = set(
        Page.objects.filter(public_id__in=[first["pageId"], second["pageId"]]).values_list(
            "slug", flat=True
        )
    )
    assert len(slugs) == 2


def test_it_finds_a_page_published_after_an_all_pages_agent_was_made(
    mcp: MCP, make_page: MakePage
) -> None:
    make_page("Before", "Written before the agent.")
    out = StringIO()
    call_command("create_agent", "everything-bot", "--all-pages", stdout=out)
    token = out.getvalue().strip().splitlines()[-1]
    agent = Agent.objects.get(name="everything-bot")
    assert agent.all_pages
    later = make_page("Published later", "The walrus policy, new this week.")
    child = make_page("Later child", "Under it.", parent=later)
    listed = [p["pageId"] for p in mcp.ok(token, "browse")["pages"]]
    assert later.public_id in listed and child.public_id in listed
    hits = mcp.ok(token, "search_pages", query="walrus policy")["results"]
    assert [hit["pageId"] for hit in hits] == [later.public_id]
    packed = mcp.ok(token, "get_page", pageId=child.public_id)
    assert packed["path"] == "published-later/later-child"
    assert selectors.page_for_agent(agent, later.public_id) == later
