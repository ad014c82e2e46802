"""A two-step workflow end to end: an agent proposes over MCP, reviewers decide over REST,
and each step's members (only they) are emailed through a real SMTP server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.conftest import live
from tests.fixtures_mail import SMTPServer
from tests.fixtures_mcp import MCP, AgentKey
from tests.fixtures_web import rest_client
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS


def _to(messages: list[Any]) -> list[str]:
    return sorted(str(message["To"]) for message in messages)


class Team:
    """Two lawyers (Legal only: a step names its group, they need not be Reviewers), a
    reviewer outside Legal, an admin (who hears about the Reviewers step, as before
    workflows), an agent and its owner."""

    def __init__(self, make_user: Callable[..., User], make_agent: Callable[..., AgentKey]):
        self.lena = make_user("lena", "Legal")
        self.luis = make_user("luis", "Legal")
        self.rita = make_user("rita", REVIEWERS)
        self.admin = make_user("ada", superuser=True)
        self.owner = make_user("owen")
        self.agent = make_agent("docs-bot", can_edit=True)
        self.agent.agent.owner = self.owner
        self.agent.agent.save()


@pytest.fixture
def team(make_user: Callable[..., User], make_agent: Callable[..., AgentKey]) -> Team:
    return Team(make_user, make_agent)


@pytest.fixture
def legal_subtree(team: Team, make_page: Callable[..., Page]) -> tuple[Page, Page, Page]:
    """Policies (Legal: 2 approvals, then Reviewers: 1) with a page under it, and a page
    outside; the agent may use all three."""
    policies = make_page("Policies", "All policies.\n")
    refunds = make_page("Refunds", "Refunds take five days.\n", parent=policies)
    lunch = make_page("Lunch", "Lunch is at noon.\n")
    team.agent.give(policies, lunch)
    admin = rest_client(team.admin)
    created = admin.post(
        "/api/v1/workflows/",
        {
            "name": "Legal review",
            "steps": [
                {"name": "Legal", "group": "Legal", "approvals": 2},
                {"name": "Final check", "group": REVIEWERS, "approvals": 1},
            ],
        },
        format="json",
    )
    assert created.status_code == 201, created.content
    workflow = created.json()
    assigned = admin.post(
        f"/api/v1/workflows/{workflow['id']}/pages/", {"pageId": policies.public_id}, format="json"
    )
    assert assigned.status_code == 201, assigned.content
    assert assigned.json()["pages"][0]["pageId"] == policies.public_id
    return policies, refunds, lunch


@pytest.fixture
def mail(smtp_server: SMTPServer, settings: Any, eager_tasks: None) -> SMTPServer:
    settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS = 0  # each step's email at once, not gathered
    return smtp_server


def _approve(user: User, version: dict[str, Any] | Version) -> Any:
    page_id, number = (
        (version["pageId"], version["versionNumber"])
        if isinstance(version, dict)
        else (version.page.public_id, version.number)
    )
    return rest_client(user).post(
        f"/api/v1/pages/{page_id}/versions/{number}/approve", {"comment": "OK."}, format="json"
    )


def test_it_routes_a_proposal_through_legal_then_reviewers(
    mcp: MCP, team: Team, legal_subtree: tuple[Page, Page, Page], mail: SMTPServer, settings: Any
) -> None:
    # No undo window, so the decision email goes at once (test_approval_undo.py has it wait).
    settings.QUIRE_APPROVAL_UNDO_SECONDS = 0
    _, refunds, lunch = legal_subtree
    workflow = rest_client(team.rita).get(f"/api/v1/pages/{refunds.public_id}/workflow").json()
    assert (workflow["workflow"], workflow["source"]["title"]) == ("Legal review", "Policies")
    mcp.ok(team.agent, "get_page_source", pageId=refunds.public_id)
    proposal = mcp.ok(
        team.agent,
        "update_page",
        pageId=refunds.public_id,
        markdown="Refunds take seven days.\n",
        changeSummary="Seven days now.",
    )
    assert _to(mail.wait_for(2)) == ["lena@example.com", "luis@example.com"]
    assert "Step:     1 of 2, Legal (Legal)" in mail.messages[0].get_content()

    refused = _approve(team.rita, proposal)
    assert refused.status_code == 403
    assert "members of Legal decide" in refused.json()["error"]["message"]

    first = _approve(team.lena, proposal)
    assert first.status_code == 200, first.content
    review = first.json()["review"]
    assert (first.json()["status"], review["step"], review["stepName"]) == (
        "in_review",
        1,
        "Legal",
    )
    assert (review["approvals"], review["required"], review["approvedBy"]) == (1, 2, ["lena"])
    twice = _approve(team.lena, proposal)
    assert twice.status_code == 409 and "already approved" in twice.json()["error"]["message"]
    assert live(refunds).body == "Refunds take five days.\n"

    second = _approve(team.luis, proposal).json()
    assert (second["status"], second["review"]["step"], second["review"]["group"]) == (
        "in_review",
        2,
        REVIEWERS,
    )
    source = mcp.ok(team.agent, "get_page_source", pageId=refunds.public_id)
    assert source["pending"][0]["review"]["stepName"] == "Final check"
    # The lawyers approved already (one person counts once per review): not asked again.
    step_two = mail.wait_for(4)[2:]
    assert _to(step_two) == ["ada@example.com", "rita@example.com"]
    assert all("Review requested: Refunds" in str(m["Subject"]) for m in step_two)
    assert "Step:     2 of 2, Final check (Reviewers)" in step_two[0].get_content()

    published = _approve(team.rita, proposal).json()
    assert (published["status"], published["review"]) == ("approved", None)
    assert live(refunds).body == "Refunds take seven days.\n"
    decision = mail.wait_for(5)[4]
    assert str(decision["To"]) == "owen@example.com" and "approved" in str(decision["Subject"])

    mcp.ok(team.agent, "get_page_source", pageId=lunch.public_id)
    outside = mcp.ok(
        team.agent,
        "update_page",
        pageId=lunch.public_id,
        markdown="Lunch is at one.\n",
        changeSummary="Later lunch.",
    )
    assert _approve(team.rita, outside).json()["status"] == "approved"
    assert live(lunch).body == "Lunch is at one.\n"


def test_it_holds_a_conversation_with_the_agent(
    mcp: MCP, team: Team, legal_subtree: tuple[Page, Page, Page], mail: SMTPServer
) -> None:
    _, refunds, _ = legal_subtree
    mcp.ok(team.agent, "get_page_source", pageId=refunds.public_id)
    proposal = mcp.ok(
        team.agent,
        "update_page",
        pageId=refunds.public_id,
        markdown="Refunds take seven days.\nKeep the receipt.\n",
        changeSummary="Seven days now.",
    )
    mail.wait_for(2)
    url = f"/api/v1/pages/{refunds.public_id}/versions/{proposal['versionNumber']}"
    noted = rest_client(team.lena).post(
        f"{url}/comments", {"comment": "Calendar days?", "line": 1}, format="json"
    )
    assert noted.status_code == 201, noted.content
    asked = rest_client(team.luis).post(
        f"{url}/request-changes", {"comment": "Say seven business days."}, format="json"
    )
    assert asked.status_code == 200, asked.content
    assert asked.json()["review"]["status"] == "changes_requested"
    email = mail.wait_for(3)[2]
    assert str(email["To"]) == "owen@example.com"
    assert "Say seven business days." in email.get_content()
    assert _approve(team.lena, proposal).status_code == 409

    source = mcp.ok(team.agent, "get_page_source", pageId=refunds.public_id)
    assert source["lastDecision"]["status"] == "changes_requested"
    assert source["lastDecision"]["comment"] == "Say seven business days."
    comments = source["pending"][0]["review"]["comments"]
    assert [(c["author"], c["line"], c["comment"]) for c in comments] == [
        ("lena", 1, "Calendar days?"),
        ("luis", None, "Say seven business days."),
    ]
    revised = mcp.ok(
        team.agent,
        "edit_page",
        pageId=refunds.public_id,
        edits=[{"oldText": "seven days", "newText": "seven business days"}],
        changeSummary="Business days, as asked.",
    )
    after = rest_client(team.lena).get(
        f"/api/v1/pages/{refunds.public_id}/versions/{revised['versionNumber']}/"
    )
    review = after.json()["review"]
    assert (review["status"], review["step"], review["revision"]) == ("open", 1, 2)
    assert [c["onVersion"] for c in review["comments"]] == [proposal["versionNumber"]] * 2
    for user in (team.lena, team.luis, team.rita):
        assert _approve(user, revised).status_code == 200
    assert live(refunds).body == "Refunds take seven business days.\nKeep the receipt.\n"
    assert (
        Version.objects.get(page=refunds, number=proposal["versionNumber"]).status
        == VersionStatus.WITHDRAWN
    )


def test_it_keeps_workflows_to_reviewers_and_their_changes_to_admins(
    team: Team, legal_subtree: tuple[Page, Page, Page], reader: User
) -> None:
    assert rest_client(reader).get("/api/v1/workflows/").status_code == 403
    listed = rest_client(team.rita).get("/api/v1/workflows/").json()
    assert [w["name"] for w in listed] == ["Legal review"]
    changed = rest_client(team.rita).put(
        f"/api/v1/workflows/{listed[0]['id']}/",
        {"name": "Mine", "steps": [{"group": REVIEWERS}]},
        format="json",
    )
    assert changed.status_code == 403
    unknown = rest_client(team.admin).post(
        "/api/v1/workflows/", {"name": "X", "steps": [{"group": "Nobody"}]}, format="json"
    )
    assert unknown.status_code == 404 and "Nobody" in unknown.json()["error"]["message"]
    page_id = legal_subtree[0].public_id
    removed = rest_client(team.admin).delete(
        f"/api/v1/workflows/{listed[0]['id']}/pages/{page_id}/"
    )
    assert removed.status_code == 204
    applied = rest_client(reader).get(f"/api/v1/pages/{legal_subtree[1].public_id}/workflow").json()
    assert (applied["workflow"], applied["default"], applied["source"]) == ("Default", True, None)
