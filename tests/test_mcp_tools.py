"""The eight MCP tools on a live server, driven by the official client: names, keys, contracts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from mcp import ClientSession
from mcp.types import Tool, ToolAnnotations

from agents.mcp import QUIRE_VERSION
from agents.models import PageSetEntry
from core.models import AuditEvent
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from wiki import services as wiki_services
from wiki.models import Page, Version, VersionKind, VersionStatus

from .conftest import live
from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]
MakeAgent = Callable[..., AgentKey]

READ = ["browse", "search_pages", "get_page", "recent_activity"]
WRITE = ["get_page_source", "create_page", "update_page", "edit_page", "append_to_page"]
PACKED_KEYS = {
    "pageId",
    "title",
    "path",
    "tags",
    "versionNumber",
    "updated",
    "instructions",
    "content",
    "files",
    "includes",
    "unavailable",
    "notIncluded",
}
SOURCE_KEYS = {
    "pageId",
    "title",
    "markdown",
    "tags",
    "status",
    "parentId",
    "path",
    "liveVersion",
    "draft",
    "inReview",
    "pending",
    "lastDecision",
}
WRITE_KEYS = {"pageId", "title", "versionNumber", "status", "message"}


def test_it_initializes_as_quire_with_instructions(mcp: MCP, reader_agent: AgentKey) -> None:
    result = mcp.initialize(reader_agent)
    assert result.serverInfo.name == "quire"
    assert result.serverInfo.version == QUIRE_VERSION
    assert result.capabilities.tools is not None
    assert "browse" in (result.instructions or "")


def test_it_lists_only_the_three_read_tools_to_a_reader_agent(
    mcp: MCP, reader_agent: AgentKey
) -> None:
    assert mcp.tool_names(reader_agent) == READ


def test_it_lists_all_eight_tools_to_an_editor_agent(mcp: MCP, editor_agent: AgentKey) -> None:
    assert mcp.tool_names(editor_agent) == READ + WRITE


def test_it_declares_output_schemas_annotations_and_when_to_use_each_tool(
    mcp: MCP, editor_agent: AgentKey
) -> None:
    async def listing(session: ClientSession) -> list[Tool]:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in mcp.run(editor_agent.token, listing)}
    hints: dict[str, ToolAnnotations] = {}
    outputs: dict[str, dict[str, Any]] = {}
    for name, tool in tools.items():
        assert tool.outputSchema is not None and tool.outputSchema["type"] == "object", name
        assert tool.annotations is not None, name
        assert tool.description and len(tool.description) > 80, name
        hints[name], outputs[name] = tool.annotations, tool.outputSchema
    for name in [*READ, "get_page_source"]:
        assert hints[name].readOnlyHint is True, name
    assert hints["create_page"].destructiveHint is False
    assert hints["append_to_page"].destructiveHint is False
    assert hints["update_page"].idempotentHint is True
    assert hints["update_page"].readOnlyHint is False
    assert hints["edit_page"].destructiveHint is False
    browse_text = (tools["browse"].description or "").lower()
    assert "first" in browse_text and "search_pages" in browse_text
    outline = {"truncated", "sections", "section", "lines"}
    assert set(outputs["get_page"]["properties"]) == PACKED_KEYS | {"hint"} | outline
    assert set(outputs["get_page"]["required"]) == PACKED_KEYS
    browse_keys = {"pages", "total", "nextCursor", "totalIsLowerBound"}
    assert set(outputs["browse"]["properties"]) == browse_keys
    assert outputs["browse"]["required"] == ["pages"]
    assert set(tools["browse"].inputSchema["properties"]) == {"cursor", "under"}
    assert set(tools["search_pages"].inputSchema["properties"]) == {"query", "under"}
    assert set(tools["edit_page"].inputSchema["required"]) == {"pageId", "edits", "changeSummary"}
    assert set(tools["edit_page"].inputSchema["properties"]) == {
        "pageId",
        "edits",
        "changeSummary",
        "baseVersion",
    }
    assert set(outputs["get_page_source"]["properties"]) == SOURCE_KEYS | outline
    assert set(outputs["get_page_source"]["required"]) == SOURCE_KEYS
    assert "changed" in outputs["edit_page"]["properties"]
    # Compact (issue 49, point 1): nested objects are typed as such, described in words.
    assert outputs["edit_page"]["properties"]["changed"] == {"type": "array"}
    assert "$defs" not in outputs["edit_page"]
    assert set(tools["update_page"].inputSchema["properties"]) == {
        "pageId",
        "changeSummary",
        "markdown",
        "title",
        "tags",
        "baseVersion",
    }
    assert set(tools["create_page"].inputSchema["required"]) == {"title", "markdown"}


def test_it_returns_one_text_item_of_pretty_json_equal_to_the_structured_content(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page = make_page("Refunds", "Refunds take 5 days.", tags=["money"])
    reader_agent.give(page)
    for tool, arguments in [
        ("browse", {}),
        ("get_page", {"pageId": page.public_id}),
        ("search_pages", {"query": "refunds"}),
    ]:
        result = mcp.call(reader_agent, tool, **arguments)
        assert not result.isError
        assert len(result.content) == 1 and result.content[0].type == "text"
        text = result.content[0].text
        assert json.loads(text) == result.structuredContent
        assert text == json.dumps(result.structuredContent, indent=2, ensure_ascii=False)


def test_it_browses_the_set_in_curated_order_with_pages_under_each_entry(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    tools = make_page("Tools")
    slack = make_page("Slack", parent=tools)
    channels = make_page("Channels", parent=slack)
    zoom = make_page("Zoom", parent=tools)
    refunds = make_page("Refunds")
    make_page("Not given")
    reader_agent.give(refunds, use_when=["Use when a customer asks about refunds."], always=True)
    reader_agent.give(tools, use_when=["Use for questions about our tools."])
    reader_agent.give(slack, use_when=["Use for anything about Slack."])
    pages = mcp.ok(reader_agent, "browse")["pages"]
    assert [p["title"] for p in pages] == ["Refunds", "Tools", "Zoom", "Slack", "Channels"]
    assert pages[0] == {
        "pageId": refunds.public_id,
        "title": "Refunds",
        "path": "refunds",
        "alwaysInclude": True,
        "useWhen": ["Use when a customer asks about refunds."],
    }
    by_title = {p["title"]: p for p in pages}
    assert by_title["Zoom"]["useWhen"] == ["Use for questions about our tools."]
    assert by_title["Zoom"]["path"] == "tools/zoom"
    assert by_title["Channels"]["useWhen"] == ["Use for anything about Slack."]
    assert by_title["Channels"]["pageId"] == channels.public_id
    assert by_title["Slack"]["alwaysInclude"] is False
    assert by_title["Zoom"]["pageId"] == zoom.public_id


def test_it_searches_the_set_with_titles_first_and_plain_excerpts(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    body_hit = make_page("Holidays", "Office closures. " * 20 + "Pay your invoice by Friday.")
    title_hit = make_page("Invoice", "How we bill customers.")
    reader_agent.give(body_hit, title_hit)
    results = mcp.ok(reader_agent, "search_pages", query="invoice")["results"]
    assert [r["pageId"] for r in results] == [title_hit.public_id, body_hit.public_id]
    assert set(results[0]) == {"pageId", "title", "path", "section", "excerpt", "score"}
    assert results[0]["path"] == "invoice"
    assert results[0]["title"] == "Invoice"
    assert "invoice" in results[1]["excerpt"].lower()
    assert "[[[" not in results[1]["excerpt"] and "]]]" not in results[1]["excerpt"]
    assert len(results[1]["excerpt"]) <= 320
    assert results[0]["score"] >= results[1]["score"]


def test_it_returns_at_most_eight_search_hits(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    pages = [make_page(f"Gazebo {n}", "gazebo assembly") for n in range(10)]
    reader_agent.give(*pages)
    assert len(mcp.ok(reader_agent, "search_pages", query="gazebo")["results"]) == 8


def test_it_packs_a_page_with_its_files_and_the_pages_its_instructions_reference(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey, editor: User
) -> None:
    policy = make_page("Refund policy", "Refunds within 30 days.")
    outside = make_page("Internal margins", "Margins are 40%.")
    page = make_page(
        "Handling refunds",
        "Be kind.",
        tags=["support", "refunds"],
        instructions=(
            f"Check [[{policy.public_id}]] and [[{outside.public_id}]] and [[pg_zzzzzzzz]] "
            f"first; [[{policy.public_id}]] again. Use [[file:script.txt]]."
        ),
    )
    wiki_services.attachment_add(
        actor=editor,
        page=page,
        upload=SimpleUploadedFile("script.txt", b"Say sorry first.", "text/plain"),
    )
    reader_agent.give(page, policy)
    packed = mcp.ok(reader_agent, "get_page", pageId=page.public_id)
    assert set(packed) == PACKED_KEYS
    assert packed["pageId"] == page.public_id
    assert packed["title"] == "Handling refunds"
    assert packed["path"] == "handling-refunds"
    assert packed["tags"] == ["support", "refunds"]
    assert packed["versionNumber"] == 1
    decided_at = live(page).decided_at
    assert decided_at is not None
    assert packed["updated"].startswith(str(decided_at.year))
    assert packed["content"] == "Be kind."
    assert packed["instructions"].startswith("Check [[")
    assert packed["files"] == [{"name": "script.txt", "text": "Say sorry first."}]
    assert packed["includes"] == [
        {"pageId": policy.public_id, "title": "Refund policy", "content": "Refunds within 30 days."}
    ]
    assert packed["unavailable"] == [outside.public_id, "pg_zzzzzzzz"]


def test_it_includes_one_level_deep_without_the_page_itself(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    first = make_page("First", "one")
    second = make_page("Second", "two", instructions=f"See [[{first.public_id}]].")
    version_propose(
        actor=User.objects.get(username="edna"),
        page=first,
        instructions=f"See [[{second.public_id}]] and [[{first.public_id}]].",
        publish=True,
    )
    reader_agent.give(first, second)
    packed = mcp.ok(reader_agent, "get_page", pageId=first.public_id)
    assert [item["pageId"] for item in packed["includes"]] == [second.public_id]
    assert set(packed["includes"][0]) == {"pageId", "title", "content"}
    assert packed["unavailable"] == []


def test_it_shows_an_agent_its_draft_and_the_reviewers_reason_in_get_page_source(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey, reviewer: User
) -> None:
    parent = make_page("Support")
    page = make_page("Refunds", "Live text.", parent=parent, tags=["money"])
    editor_agent.give(parent)
    first = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Draft one.",
        changeSummary="Clarify.",
        baseVersion=1,
    )
    version_reject(
        actor=reviewer,
        version=Version.objects.get(page=page, number=first["versionNumber"]),
        comment="Say how many days.",
    )
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert set(source) == SOURCE_KEYS
    assert source["markdown"] == "Live text."
    assert source["pending"] == [] and source["inReview"] is False
    assert source["lastDecision"]["status"] == "rejected"
    assert source["lastDecision"]["comment"] == "Say how many days."
    assert source["lastDecision"]["versionNumber"] == first["versionNumber"]
    assert source["lastDecision"]["decidedAt"]

    second = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Refunds take 5 days.",
        changeSummary="Say how many days.",
    )
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source == {
        "pageId": page.public_id,
        "title": "Refunds",
        "markdown": "Refunds take 5 days.",
        "tags": ["money"],
        "status": "live",
        "parentId": parent.public_id,
        "path": "support/refunds",
        "liveVersion": 1,
        "draft": {"versionNumber": second["versionNumber"], "baseVersion": 1},
        "inReview": True,
        "pending": [
            {
                "versionNumber": second["versionNumber"],
                "author": "docs-bot (agent)",
                "createdAt": source["pending"][0]["createdAt"],
                "changeSummary": "Say how many days.",
                "review": {
                    "workflow": "Default",
                    "status": "open",
                    "step": 1,
                    "steps": 1,
                    "stepName": "Review",
                    "group": "Reviewers",
                    "approvals": 0,
                    "required": 1,
                    "approvedBy": [],
                    "revision": 1,
                    "comments": [],
                },
            }
        ],
        "lastDecision": source["lastDecision"],
    }


def test_it_creates_a_top_level_page_in_review_and_adds_it_to_the_set(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    editor_agent.give(make_page("Existing"))
    result = mcp.ok(
        editor_agent,
        "create_page",
        title="Returns",
        markdown="# Returns\n\nWithin 30 days.",
        tags=["support"],
        changeSummary="New page for returns.",
    )
    assert set(result) == WRITE_KEYS
    assert result["status"] == "in_review" and result["versionNumber"] == 1
    assert result["message"] == "Submitted as v1 and waiting for a human to approve it."
    page = Page.objects.get(public_id=result["pageId"])
    assert page.parent is None and page.live_version is None
    version = page.versions.get()
    assert version.status == VersionStatus.IN_REVIEW
    assert version.author_agent == editor_agent.agent
    assert version.change_summary == "New page for returns."
    entry = PageSetEntry.objects.get(agent=editor_agent.agent, page=page)
    assert entry.position == 1
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["status"] == "in_review" and source["liveVersion"] is None
    assert source["markdown"] == "# Returns\n\nWithin 30 days."


def test_it_creates_a_page_under_a_parent_in_the_set(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    parent = make_page("Support")
    editor_agent.give(parent)
    result = mcp.ok(
        editor_agent,
        "create_page",
        title="Chargebacks",
        markdown="Text.",
        parentId=parent.public_id,
    )
    page = Page.objects.get(public_id=result["pageId"])
    # An agent's page carries its id in its slug (see test_mcp_set_edges).
    assert page.parent == parent
    assert page.path == f"support/chargebacks-{page.public_id.removeprefix('pg_')}"
    assert not PageSetEntry.objects.filter(page=page).exists()
    assert mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)["parentId"] == (
        parent.public_id
    )


def test_it_warns_of_a_page_of_the_same_title_beside_a_new_one_it_can_see(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    support = make_page("Support")
    chargebacks = make_page("Chargebacks", parent=support)
    hidden = make_page("Secret plans")  # top level, outside the agent's set
    editor_agent.give(support)
    result = mcp.ok(
        editor_agent, "create_page", title="CHARGEBACKS", markdown="x", parentId=support.public_id
    )
    assert result["status"] == "in_review"  # created anyway: a person reviews it
    assert result["warning"] == (
        f"A page titled 'Chargebacks' ({chargebacks.public_id}, support/chargebacks) is already "
        "in your set at the same place. If you meant to change it, call get_page_source and "
        "update_page on it instead; the reviewer sees both and may reject this new page."
    )
    # A page outside its set is never named, not even by a warning.
    unseen = mcp.ok(editor_agent, "create_page", title="Secret plans", markdown="x")
    assert set(unseen) == WRITE_KEYS and hidden.public_id not in str(unseen)


def test_it_proposes_a_whole_replacement_and_withdraws_the_older_proposal(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("Refunds", "Old text.", tags=["money"])
    editor_agent.give(page)
    first = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="New.",
        changeSummary="A.",
        baseVersion=1,
    )
    second = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        title="Refunds and returns",
        changeSummary="Rename.",
    )
    assert (first["versionNumber"], second["versionNumber"]) == (2, 3)
    assert second["title"] == "Refunds and returns"
    assert "v2" in second["message"] and "withdrawn" in second["message"]
    versions = {v.number: v for v in page.versions.all()}
    assert versions[2].status == VersionStatus.WITHDRAWN
    assert versions[3].status == VersionStatus.IN_REVIEW
    assert versions[3].kind == VersionKind.REPLACE
    assert versions[3].base_version == versions[1]
    assert versions[3].body == "Old text." and versions[3].tags == ["money"]
    assert live(page).body == "Old text."


def test_it_proposes_an_append_that_lands_on_whatever_is_live(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User, reviewer: User
) -> None:
    page = make_page("FAQ", "Q1?\n")
    editor_agent.give(page)
    result = mcp.ok(
        editor_agent,
        "append_to_page",
        pageId=page.public_id,
        markdown="Q3?",
        changeSummary="Add Q3.",
    )
    version = Version.objects.get(page=page, number=result["versionNumber"])
    assert version.kind == VersionKind.APPEND and version.proposed_body == "Q3?"
    version_propose(actor=editor, page=page, body="Q1?\n\nQ2?\n", publish=True)
    version_approve(actor=reviewer, version=version)
    assert live(page).body == "Q1?\n\nQ2?\n\nQ3?\n"


def test_it_writes_an_audit_row_for_every_call(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page = make_page("Refunds")
    reader_agent.give(page)
    mcp.ok(reader_agent, "get_page", pageId=page.public_id)
    mcp.error(reader_agent, "get_page", pageId="pg_zzzzzzzz")
    mcp.ok(reader_agent, "browse")
    rows = list(AuditEvent.objects.filter(action__startswith="mcp.").order_by("id"))
    assert [(r.action, r.outcome) for r in rows] == [
        ("mcp.get_page", "ok"),
        ("mcp.get_page", "not_found"),
        ("mcp.browse", "ok"),
    ]
    assert all(r.actor_agent == reader_agent.agent for r in rows)
    assert all(r.duration_ms is not None for r in rows)
    assert rows[0].page == page and rows[0].version_number == 1
    assert rows[0].data["pageIds"] == [page.public_id] and rows[0].data["versions"] == [1]
    # A browse row says how much it showed, not every page id.
    assert rows[2].data["pageIds"] == []
    assert rows[2].data["returned"] == 1 and rows[2].data["total"] == 1
    assert rows[2].data["first"] == rows[2].data["last"] == page.public_id
