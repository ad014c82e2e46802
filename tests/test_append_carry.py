"""No words dropped: a second write while the author's proposal waits carries the first.

An agent's (or a person's) second append while the first is pending becomes one pending
proposal with the first block then the second; an append on top of the author's own waiting
replace draft extends that draft. The older proposal is withdrawn only once its words are in
the new one.
"""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.test import Client

from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from tests.conftest import live
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import MARKDOWN_MAX, Page, Version, VersionKind, VersionStatus

MakePage = Callable[..., Page]


def _pending(page: Page) -> list[Version]:
    return list(page.versions.filter(status=VersionStatus.IN_REVIEW))


def test_an_agents_second_append_carries_both_blocks(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, reviewer: User
) -> None:
    page = make_page("FAQ", "Q1?\n")
    editor_agent.give(page)
    first = mcp.ok(
        editor_agent, "append_to_page", pageId=page.public_id, markdown="Q2?", changeSummary="Q2."
    )
    second = mcp.ok(
        editor_agent, "append_to_page", pageId=page.public_id, markdown="Q3?", changeSummary="Q3."
    )
    assert (first["versionNumber"], second["versionNumber"]) == (2, 3)
    assert "v2" in second["message"] and "carries" in second["message"]
    [waiting] = _pending(page)
    assert waiting.number == 3 and waiting.kind == VersionKind.APPEND
    assert waiting.proposed_body == "Q2?\n\nQ3?\n"
    assert waiting.change_summary == "Q2.; Q3."
    earlier = page.versions.get(number=2)
    assert earlier.status == VersionStatus.WITHDRAWN
    assert "v3" in earlier.decision_comment
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["markdown"] == "Q1?\n\nQ2?\n\nQ3?\n"
    assert [p["versionNumber"] for p in source["pending"]] == [3]
    version_approve(actor=reviewer, version=waiting)
    assert live(page).body == "Q1?\n\nQ2?\n\nQ3?\n"
    propose = AuditEvent.objects.filter(action="version.propose", version_number=3).get()
    assert propose.data["carried"] == [2]


def test_an_append_on_the_agents_waiting_draft_extends_the_draft(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage, editor: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Old text.\n", tags=["money"])
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown="Draft text.\n",
        changeSummary="Rewrite.",
    )
    version_propose(actor=editor, page=page, title="Refunds (2026)", publish=True)
    result = mcp.ok(
        editor_agent,
        "append_to_page",
        pageId=page.public_id,
        markdown="One more rule.",
        changeSummary="Add a rule.",
    )
    assert "v2" in result["message"]
    [waiting] = _pending(page)
    assert waiting.kind == VersionKind.REPLACE
    assert waiting.body == "Draft text.\n\nOne more rule.\n"
    assert waiting.title == "Refunds" and waiting.tags == ["money"]
    # The draft was written against v1; carrying it on keeps that base, so the person's
    # title change made since (v3) is merged in, not overwritten.
    assert waiting.base_version is not None and waiting.base_version.number == 1
    version_approve(actor=reviewer, version=waiting)
    current = live(page)
    assert current.body == "Draft text.\n\nOne more rule.\n"
    assert current.title == "Refunds (2026)"


def test_a_too_long_carried_append_is_refused_and_keeps_the_first(
    mcp: MCP, editor_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("FAQ", "Q1?\n")
    editor_agent.give(page)
    mcp.ok(
        editor_agent,
        "append_to_page",
        pageId=page.public_id,
        markdown="a" * (MARKDOWN_MAX - 10),
        changeSummary="Big.",
    )
    error = mcp.error(
        editor_agent,
        "append_to_page",
        pageId=page.public_id,
        markdown="b" * 100,
        changeSummary="More.",
    )
    assert error.startswith("invalid_argument:") and "v2" in error
    [waiting] = _pending(page)
    assert waiting.number == 2 and waiting.proposed_body.startswith("aaa")


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_persons_second_append_carries_both_blocks(
    make_page: MakePage, reader: User, reviewer: User
) -> None:
    page = make_page("FAQ", "Q1?\n")
    client = _client(reader)
    url = f"/p/{page.public_id}/append/"
    assert client.post(url, {"body": "Q2?", "change_summary": ""}).status_code == 302
    response = client.post(url, {"body": "Q3?", "change_summary": "Q3."}, follow=True)
    assert "together with your earlier addition" in response.content.decode()
    [waiting] = _pending(page)
    assert waiting.proposed_body == "Q2?\n\nQ3?\n"
    assert waiting.change_summary == "Q3."
    version_approve(actor=reviewer, version=waiting)
    assert live(page).body == "Q1?\n\nQ2?\n\nQ3?\n"


def test_a_persons_edit_form_starts_from_their_waiting_append(
    make_page: MakePage, reader: User
) -> None:
    page = make_page("FAQ", "Q1?\n")
    client = _client(reader)
    client.post(f"/p/{page.public_id}/append/", {"body": "Q2?", "change_summary": ""})
    response = client.get(f"/p/{page.public_id}/edit/")
    assert response.context["form"].initial["body"] == "Q1?\n\nQ2?\n"
    assert "Your addition v2, still waiting for review, is included" in response.content.decode()
