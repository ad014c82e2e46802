"""Nothing a person wrote is lost: an agent's replace written against an older version is
stale, so approving it merges three-way (or shows the conflict), never erases newer text."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from core.errors import Conflict
from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.merge import is_stale
from wiki.models import Page, Version

from .conftest import live
from .fixtures_mcp import MCP, AgentKey

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]

V1 = "# Refunds\n\nRefunds take 5 days.\n\nContact support.\n"
# A person's edit at the top, an agent's at the bottom: they do not overlap.
V2_PERSON = "# Refunds\n\nRefunds take 3 days.\n\nContact support.\n"
AGENT_TEXT = "# Refunds\n\nRefunds take 5 days.\n\nContact support by email.\n"


def _publish(editor: User, page: Page, body: str) -> Version:
    return version_propose(
        actor=editor, page=page, body=body, change_summary="person", publish=True
    )


@pytest.mark.parametrize("read_tool", ["get_page", "get_page_source"])
def test_it_bases_an_agents_update_on_the_version_it_read_and_keeps_the_persons_text(
    mcp: MCP,
    editor_agent: AgentKey,
    make_page: MakePage,
    editor: User,
    reviewer: User,
    read_tool: str,
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    assert mcp.ok(editor_agent, read_tool, pageId=page.public_id)
    _publish(editor, page, V2_PERSON)
    result = mcp.ok(
        editor_agent, "update_page", pageId=page.public_id, markdown=AGENT_TEXT, changeSummary="x"
    )
    proposal = Version.objects.get(page=page, number=result["versionNumber"])
    assert proposal.base_version is not None and proposal.base_version.number == 1
    assert is_stale(proposal)
    approved = version_approve(actor=reviewer, version=proposal)
    body = live(Page.objects.get(pk=page.pk)).body
    assert approved.merged
    assert "Refunds take 3 days." in body and "Contact support by email." in body


def test_it_shows_the_conflict_instead_of_erasing_the_persons_overlapping_edit(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User, reviewer: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    _publish(editor, page, V2_PERSON)
    result = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=V1.replace("5 days", "10 days"),
        changeSummary="x",
        baseVersion=source["liveVersion"],
    )
    proposal = Version.objects.get(page=page, number=result["versionNumber"])
    with pytest.raises(Conflict, match="overlap"):
        version_approve(actor=reviewer, version=proposal)
    assert live(Page.objects.get(pk=page.pk)).body == V2_PERSON


def test_it_keeps_the_drafts_base_when_the_agent_revises_it_after_the_page_moved_on(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    mcp.ok(
        editor_agent, "update_page", pageId=page.public_id, markdown=AGENT_TEXT, changeSummary="a"
    )
    _publish(editor, page, V2_PERSON)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    again = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=AGENT_TEXT + "\nMore.\n",
        changeSummary="b",
    )
    revised = Version.objects.get(page=page, number=again["versionNumber"])
    assert revised.base_version is not None and revised.base_version.number == 1


def test_it_refuses_a_blind_update_from_an_agent_that_never_read_the_page(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    _publish(editor, page, V2_PERSON)
    error = mcp.error(
        editor_agent, "update_page", pageId=page.public_id, markdown=AGENT_TEXT, changeSummary="x"
    )
    assert error.startswith("invalid_argument: you never read page")
    assert "get_page_source first, or pass baseVersion" in error
    assert Version.objects.filter(page=page).count() == 2


def test_it_refuses_a_blind_update_after_an_append_the_agent_made_without_reading(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    mcp.ok(
        editor_agent, "append_to_page", pageId=page.public_id, markdown="More.", changeSummary="a"
    )
    error = mcp.error(
        editor_agent, "update_page", pageId=page.public_id, markdown=AGENT_TEXT, changeSummary="x"
    )
    assert error.startswith("invalid_argument: you never read page")
    assert Version.objects.filter(page=page).count() == 2


def test_it_takes_an_explicit_base_version_from_an_agent_that_never_read_the_page(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    _publish(editor, page, V2_PERSON)
    result = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=AGENT_TEXT,
        changeSummary="x",
        baseVersion=1,
    )
    proposal = Version.objects.get(page=page, number=result["versionNumber"])
    assert proposal.base_version is not None and proposal.base_version.number == 1
    assert is_stale(proposal)


def test_it_keeps_the_base_the_agent_read_when_the_audit_trail_is_pruned(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    _publish(editor, page, V2_PERSON)
    AuditEvent.objects.all().delete()
    result = mcp.ok(
        editor_agent, "update_page", pageId=page.public_id, markdown=AGENT_TEXT, changeSummary="x"
    )
    proposal = Version.objects.get(page=page, number=result["versionNumber"])
    assert proposal.base_version is not None and proposal.base_version.number == 1
    assert is_stale(proposal)


def test_it_bases_the_update_on_the_newest_version_the_agent_read(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page", pageId=page.public_id)
    _publish(editor, page, V2_PERSON)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    result = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=V2_PERSON.replace("support.", "support by email."),
        changeSummary="x",
    )
    proposal = Version.objects.get(page=page, number=result["versionNumber"])
    assert proposal.base_version is not None and proposal.base_version.number == 2
    assert not is_stale(proposal)


def test_it_refuses_a_base_version_that_never_went_live(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("Refunds", V1)
    editor_agent.give(page)
    error = mcp.error(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=AGENT_TEXT,
        changeSummary="x",
        baseVersion=7,
    )
    assert error.startswith("invalid_argument:") and "never went live" in error
    assert Version.objects.filter(page=page).count() == 1


def test_it_says_what_a_stale_proposal_was_written_against_in_queue_review_and_api(
    make_page: MakePage, reader: User, editor: User, reviewer: User
) -> None:
    from django.test import Client

    page = make_page("Refunds", V1)
    proposal = version_propose(
        actor=reader, page=page, body=AGENT_TEXT, change_summary="x", base_number=1
    )
    _publish(editor, page, V2_PERSON)
    client = Client()
    client.force_login(reviewer)
    assert "written against v1, live is v3" in client.get("/reviews/").content.decode()
    review = client.get(f"/reviews/pages/{page.public_id}/v{proposal.number}/").content.decode()
    assert "written against v1" in review and "v3 is live now" in review
    [row] = client.get("/api/v1/reviews/").json()["results"]
    assert row["stale"] is True and row["staleNote"] == "written against v1, live is v3"
