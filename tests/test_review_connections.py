"""An OAuth connection lasts as long as its right: it ends when the person who allowed it
may no longer connect the agent (reassigned to another owner), and nobody decides what the
agent proposed through a connection they allowed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from agents import services as agent_services
from connect.models import Connection
from core.actors import SystemActor
from reviews.actions.decide import version_approve
from reviews.actions.rules import decision_refusal
from tests.fixtures_mcp import rpc, rpc_tool
from tests.fixtures_oauth import issue_tokens
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

RESOURCE = settings.QUIRE_BASE_URL + "/mcp"


def _propose(client: Client, token: str, page: Page, text: str) -> Version:
    rpc_tool(client, token, "get_page_source", pageId=page.public_id)
    result = rpc_tool(
        client, token, "update_page", pageId=page.public_id, markdown=text, changeSummary="Edit."
    )
    assert result["isError"] is False, result
    return Version.objects.get(page=page, number=result["structuredContent"]["versionNumber"])


def test_it_ends_the_former_owners_connection_when_the_agent_is_reassigned(
    make_user: Callable[..., User],
    make_agent: Callable[..., Any],
    make_page: Callable[..., Page],
    reviewer: User,
) -> None:
    rosa = make_user("rosa", REVIEWERS)  # a reviewer who owns an editing agent
    owen = make_user("owen")
    page = make_page("Refunds", "Five days.\n")
    key = make_agent("docs-bot", can_edit=True, pages=(page,))
    agent_services.agent_update(actor=SystemActor("tests"), agent=key.agent, owner=rosa)
    token = issue_tokens(key.agent, rosa, resource=RESOURCE)
    client = Client()
    before = _propose(client, token, page, "Seven days.\n")
    # An admin gives the agent to owen: rosa may no longer connect it.
    agent_services.agent_update(actor=SystemActor("tests"), agent=key.agent, owner=owen)
    refused = rpc(client, token, "tools/list")
    assert refused.status_code == 401
    connection = Connection.objects.get(agent=key.agent)
    assert connection.ended_at is not None
    assert connection.ended_reason == "no longer allowed to connect this agent"
    # What she proposed through her connection is still not hers to decide.
    refusal = decision_refusal(rosa, before)
    assert refusal is not None and "connection you allowed" in refusal
    version_approve(actor=reviewer, version=before)
    before.refresh_from_db()
    assert before.status == VersionStatus.APPROVED


def test_it_refuses_an_admin_deciding_what_came_through_their_connection(
    make_user: Callable[..., User],
    make_agent: Callable[..., Any],
    make_page: Callable[..., Page],
    admin_user: User,
) -> None:
    page = make_page("Refunds", "Five days.\n")
    key = make_agent("docs-bot", can_edit=True, pages=(page,))
    agent_services.agent_update(
        actor=SystemActor("tests"), agent=key.agent, owner=make_user("owen")
    )
    token = issue_tokens(key.agent, admin_user, resource=RESOURCE)  # admins connect any agent
    proposal = _propose(Client(), token, page, "Seven days.\n")
    html = (
        _client(admin_user)
        .get(f"/reviews/pages/{page.public_id}/v{proposal.number}/")
        .content.decode()
    )
    assert "came through a connection you allowed" in html
    assert "rv-approve-button" not in html


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_records_no_read_when_an_admin_previews_what_the_agent_sees(
    make_agent: Callable[..., Any], make_page: Callable[..., Page], admin_user: User
) -> None:
    from agents.models import PageRead

    page = make_page("Refunds", "Five days.\n")
    key = make_agent("docs-bot", can_edit=True, pages=(page,))
    preview = _client(admin_user).get(f"/agents/{key.agent.pk}/preview/", {"page": page.public_id})
    assert preview.status_code == 200 and "Five days." in preview.content.decode()
    assert not PageRead.objects.filter(agent=key.agent).exists()  # GET never writes
    # So the agent's blind whole-page replace is still refused: it read nothing itself.
    blind = rpc_tool(
        Client(),
        key.token,
        "update_page",
        pageId=page.public_id,
        markdown="Nothing.\n",
        changeSummary="Blind.",
    )
    assert blind["isError"] is True
    assert "Read it with get_page_source first" in blind["content"][0]["text"]
