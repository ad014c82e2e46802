"""Approving part of a proposal (reviews.partial): each changed block kept or refused, the kept
text what the next workflow step reviews, the refused blocks told to the author."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from core.errors import Conflict, Forbidden
from core.models import AuditEvent
from reviews import workflows
from reviews.actions.propose import version_propose
from reviews.partial import version_approve_partial, version_hunks
from reviews.selectors import refused_hunks
from tests.conftest import live
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db

POLICY = """# Refunds

Refunds take 5 days.

Ask support by email.

Gift cards are final.
"""
PROPOSED = """# Refunds

Refunds take 3 days.

Ask support by email or chat.

Gift cards can be refunded.
"""
GIFT_CARDS = "Gift cards stay final: that is the finance team's call."


@pytest.fixture
def two_steps(
    make_page: Callable[..., Page], make_user: Callable[..., User], admin_user: User
) -> Page:
    """A section under two steps of one Reviewers approval each."""
    make_user("rob", REVIEWERS)
    section = make_page("Policies", "All.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Two looks",
        steps=[{"name": "First", "group": REVIEWERS}, {"name": "Second", "group": REVIEWERS}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=section)
    return section


def test_it_counts_the_changed_blocks_against_what_is_live(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Refunds", POLICY)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    found = version_hunks(proposal)
    assert [(h.number, h.line, h.kind) for h in found] == [
        (1, 3, "changed"),
        (2, 5, "changed"),
        (3, 7, "changed"),
    ]
    assert (found[1].replaced, found[1].proposed) == (
        "Ask support by email.\n",
        "Ask support by email or chat.\n",
    )


def test_it_takes_a_partial_approval_through_two_workflow_steps(
    two_steps: Page,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
) -> None:
    page = make_page("Refunds", POLICY, parent=two_steps)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    live_number = live(page).number

    # Step 1 keeps the new days and the chat, refuses the gift cards.
    version_approve_partial(
        actor=reviewer,
        version=proposal,
        refused={3: GIFT_CARDS},
        expected_live_number=live_number,
        step=1,
    )
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert proposal.review.step == 1
    assert live(page).body == POLICY
    # What step 2 reviews is what step 1 kept.
    assert proposal.body == POLICY.replace("5 days", "3 days").replace("email.", "email or chat.")
    assert [(h.number, h.replaced) for h in version_hunks(proposal)] == [
        (1, "Refunds take 5 days.\n"),
        (2, "Ask support by email.\n"),
    ]

    # Step 2 refuses the chat (its hunk 2 now), keeps the days: published.
    rob = User.objects.get(username="rob")
    version_approve_partial(
        actor=rob,
        version=proposal,
        refused={2: "We have no chat yet."},
        expected_live_number=live_number,
        step=2,
    )
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.APPROVED
    assert live(page).body == POLICY.replace("5 days", "3 days")
    refused = [(h.step, h.number, h.proposed, h.reason) for h in refused_hunks(proposal)]
    assert refused == [
        (
            0,
            3,
            "Gift cards can be refunded.\n",
            "Gift cards stay final: that is the finance team's call.",
        ),
        (1, 2, "Ask support by email or chat.\n", "We have no chat yet."),
    ]
    assert AuditEvent.objects.filter(action="version.approve_partial").count() == 2


def test_it_refuses_what_cannot_be_approved_in_part(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", POLICY)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    number = live(page).number
    with pytest.raises(Conflict, match="there is no change 4"):
        version_approve_partial(
            actor=reviewer, version=proposal, refused={4: ""}, expected_live_number=number
        )
    with pytest.raises(Conflict, match="reject the proposal instead"):
        version_approve_partial(
            actor=reviewer,
            version=proposal,
            refused={1: "", 2: "", 3: ""},
            expected_live_number=number,
        )
    with pytest.raises(Conflict, match="approve the proposal as it is"):
        version_approve_partial(
            actor=reviewer, version=proposal, refused={}, expected_live_number=number
        )
    addition = version_propose(actor=editor, page=page, kind="append", body="More.\n")
    with pytest.raises(Conflict, match="an addition is one block"):
        version_approve_partial(
            actor=reviewer, version=addition, refused={1: ""}, expected_live_number=number
        )
    # The author may not approve their own, in part or whole.
    with pytest.raises(Forbidden):
        version_approve_partial(
            actor=reader, version=proposal, refused={1: ""}, expected_live_number=number
        )
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW and not refused_hunks(proposal)


def test_it_tells_the_agent_which_blocks_were_refused_and_why(
    mcp: MCP, editor_agent: AgentKey, make_page: Callable[..., Page], reviewer: User
) -> None:
    page = make_page("Refunds", POLICY)
    editor_agent.give(page)
    mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    mcp.ok(
        editor_agent,
        "update_page",
        pageId=page.public_id,
        markdown=PROPOSED,
        changeSummary="Faster refunds, chat, gift cards.",
    )
    proposal = Version.objects.get(page=page, status=VersionStatus.IN_REVIEW)
    version_approve_partial(
        actor=reviewer,
        version=proposal,
        refused={3: "Gift cards stay final."},
        expected_live_number=live(page).number,
    )

    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)

    decision = source["lastDecision"]
    assert decision["status"] == "approved"
    assert decision["refusedHunks"] == [
        {
            "hunk": 3,
            "line": 7,
            "replaced": "Gift cards are final.\n",
            "proposed": "Gift cards can be refunded.\n",
            "reason": "Gift cards stay final.",
            "step": 1,
        }
    ]
    assert source["markdown"] == PROPOSED.replace("can be refunded", "are final")


def test_it_previews_then_approves_part_of_a_change_in_the_browser_forms(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", POLICY)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    client = Client()
    client.force_login(reviewer)
    review_url = f"/reviews/pages/{page.public_id}/v{proposal.number}/"
    shown = client.get(review_url).content.decode()
    assert shown.count('name="refuse"') == 3
    choice = {
        "refuse": ["3"],
        "reason_3": "Gift cards stay final.",
        "expected_live_number": str(live(page).number),
        "step": "1",
    }

    preview = client.post(f"{review_url}partial/", choice)

    assert preview.status_code == 200
    text = preview.content.decode()
    assert "You keep 2 of 3 changes and refuse 1" in text
    assert "Gift cards are final." in text and "Refunds take 3 days." in text
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW  # nothing decided by the preview

    done = client.post(f"{review_url}partial/", {**choice, "confirm": "1"}, follow=True)
    assert "approved without 1 refused change" in done.content.decode()
    assert live(page).body == PROPOSED.replace("can be refunded", "are final")
    # The author reads which change was refused and why on the proposal's page.
    author = Client()
    author.force_login(reader)
    mine = author.get(review_url).content.decode()
    assert "Changes refused" in mine and "Gift cards stay final." in mine


def test_it_refuses_a_preview_against_a_live_version_that_moved(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", POLICY)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    seen = live(page).number
    version_propose(actor=editor, page=page, body=POLICY + "\nMore.\n", publish=True)
    client = Client()
    client.force_login(reviewer)
    answer = client.post(
        f"/reviews/pages/{page.public_id}/v{proposal.number}/partial/",
        {"refuse": ["1"], "expected_live_number": str(seen), "confirm": "1"},
        follow=True,
    )
    assert "The live version changed while you chose" in answer.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW


def test_it_approves_part_of_a_change_over_rest(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", POLICY)
    proposal = version_propose(actor=reader, page=page, body=PROPOSED)
    client = Client()
    client.force_login(reviewer)
    url = f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/"
    shown = client.get(url).json()
    assert [h["hunk"] for h in shown["hunks"]] == [1, 2, 3]
    assert shown["hunks"][2] == {
        "hunk": 3,
        "line": 7,
        "kind": "changed",
        "replaced": "Gift cards are final.\n",
        "proposed": "Gift cards can be refunded.\n",
    }
    body: dict[str, Any] = {"expectedLiveVersion": live(page).number}
    every = {**body, "refused": [{"hunk": 1}, {"hunk": 2}, {"hunk": 3}]}
    refused_all = client.post(f"{url}approve-partial", every, content_type="application/json")
    assert refused_all.status_code == 409
    assert "reject the proposal instead" in refused_all.json()["error"]["message"]

    answer = client.post(
        f"{url}approve-partial",
        {**body, "refused": [{"hunk": 2, "reason": "No chat yet."}]},
        content_type="application/json",
    )

    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["status"] == "approved" and data["hunks"] == []
    assert [(h["hunk"], h["reason"], h["refusedBy"]) for h in data["refusedHunks"]] == [
        (2, "No chat yet.", "rita")
    ]
    assert live(page).body == PROPOSED.replace("email or chat.", "email.")
