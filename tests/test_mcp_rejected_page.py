"""An agent's new page whose only version was rejected: get_page_source answers with the
text and the reviewer's reason (never an error), and update_page proposes it again."""

from __future__ import annotations

from django.contrib.auth.models import User

from reviews.actions.decide import version_approve, version_reject
from tests.conftest import live
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import Page, Version, VersionStatus


def _rejected_new_page(mcp: MCP, agent: AgentKey, reviewer: User) -> Page:
    created = mcp.ok(
        agent,
        "create_page",
        title="Escalations",
        markdown="Call someone.\n",
        tags=["support"],
        changeSummary="New page.",
    )
    page = Page.objects.get(public_id=created["pageId"])
    version_reject(
        actor=reviewer, version=page.versions.get(number=1), comment="Too vague: say who."
    )
    return page


def test_it_returns_the_rejected_text_with_the_reason(
    mcp: MCP, editor_agent: AgentKey, reviewer: User
) -> None:
    page = _rejected_new_page(mcp, editor_agent, reviewer)
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["pageId"] == page.public_id
    assert (source["title"], source["markdown"], source["tags"]) == (
        "Escalations",
        "Call someone.\n",
        ["support"],
    )
    assert source["status"] == "rejected"
    assert (source["liveVersion"], source["inReview"], source["pending"]) == (None, False, [])
    decision = source["lastDecision"]
    assert (decision["versionNumber"], decision["status"]) == (1, "rejected")
    assert decision["comment"] == "Too vague: say who."


def test_it_lets_the_agent_propose_the_page_again(
    mcp: MCP, editor_agent: AgentKey, reviewer: User
) -> None:
    page = _rejected_new_page(mcp, editor_agent, reviewer)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    again = mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Call the on-call lead, then the manager.\n",
        changeSummary="Say who to call.",
    )
    assert again["versionNumber"] == 2 and again["status"] == "in_review"
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["status"] == "in_review" and source["inReview"] is True
    assert source["markdown"] == "Call the on-call lead, then the manager.\n"
    assert source["lastDecision"]["status"] == "rejected"
    version = Version.objects.get(page=page, number=2)
    assert version.status == VersionStatus.IN_REVIEW and version.base_version is None
    assert version.title == "Escalations" and version.tags == ["support"]
    version_approve(actor=reviewer, version=version)
    assert live(page).body == "Call the on-call lead, then the manager.\n"
    assert mcp.ok(editor_agent, "get_page", pageId=page.public_id)["versionNumber"] == 2


def test_it_says_to_revise_rather_than_append(
    mcp: MCP, editor_agent: AgentKey, reviewer: User
) -> None:
    page = _rejected_new_page(mcp, editor_agent, reviewer)
    error = mcp.error(
        editor_agent, "append_to_page", pageId=page.public_id, markdown="x", changeSummary="y"
    )
    assert error.startswith("conflict:") and "update_page" in error
    assert page.versions.count() == 1
