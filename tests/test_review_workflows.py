"""Review workflows in the service layer: steps per subtree, approvals, request changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from agents.models import Agent
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from reviews import workflows
from reviews.actions.comments import review_comment_add
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.propose import version_propose
from reviews.models import Approval, ReviewComment, ReviewStatus
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

LEGAL_THEN_REVIEWERS = [
    {"name": "Legal", "group": "Legal", "approvals": 2},
    {"name": "Final check", "group": REVIEWERS, "approvals": 1},
]


@pytest.fixture
def lawyers(make_user: Callable[..., User]) -> list[User]:
    # Legal members only: a step names its group, so they need not be Reviewers too.
    return [make_user(name, "Legal") for name in ("lena", "luis", "lara")]


@pytest.fixture
def policies(make_page: Callable[..., Page], admin_user: User, lawyers: list[User]) -> Page:
    """A subtree under the Legal-then-Reviewers workflow."""
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=LEGAL_THEN_REVIEWERS
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    return root


@pytest.fixture
def agent(make_user: Callable[..., User]) -> Agent:
    return Agent.objects.create(name="docs-bot", owner=make_user("owen"), can_edit_pages=True)


def propose(actor: Any, page: Page, body: str) -> Version:
    return version_propose(actor=actor, page=page, body=body, change_summary="Edit.")


def test_it_applies_the_default_single_step_without_workflows(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Plain", "old\n")
    proposal = propose(reader, page, "new\n")
    assert proposal.review.steps == [{"name": "Review", "group": REVIEWERS, "approvals": 1}]
    version_approve(actor=reviewer, version=proposal)
    assert live(page).body == "new\n"


def test_it_finds_the_nearest_assignment(
    make_page: Callable[..., Page], policies: Page, admin_user: User
) -> None:
    hr = make_page("HR", "HR.\n", parent=policies)
    leave = make_page("Leave", "Leave.\n", parent=hr)
    outside = make_page("Lunch", "Lunch.\n")
    assert workflows.applicable_workflow(leave).name == "Legal review"
    assert workflows.applicable_workflow(leave).source == policies
    quick = workflows.workflow_create(
        actor=admin_user, name="Quick", steps=[{"name": "One", "group": REVIEWERS}]
    )
    workflows.workflow_assign(actor=admin_user, workflow=quick, page=hr)
    assert workflows.applicable_workflow(leave).name == "Quick"
    assert workflows.applicable_workflow(policies).name == "Legal review"
    assert workflows.applicable_workflow(outside) == workflows.DEFAULT


def test_it_walks_a_proposal_through_two_steps(
    make_page: Callable[..., Page],
    policies: Page,
    lawyers: list[User],
    reviewer: User,
    agent: Agent,
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(agent, page, "Seven days.\n")
    with pytest.raises(Forbidden, match="members of Legal decide"):
        version_approve(actor=reviewer, version=proposal)
    version_approve(actor=lawyers[0], version=proposal, comment="Fine by me.")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.review.step) == (VersionStatus.IN_REVIEW, 0)
    with pytest.raises(Conflict, match="already approved this text"):
        version_approve(actor=lawyers[0], version=proposal)
    version_approve(actor=lawyers[1], version=proposal)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.review.step) == (VersionStatus.IN_REVIEW, 1)
    assert live(page).body == "Five days.\n"
    version_approve(actor=reviewer, version=proposal)
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.APPROVED
    assert proposal.review.status == ReviewStatus.APPROVED
    assert live(page).body == "Seven days.\n"
    recorded = list(Approval.objects.filter(version=proposal).values_list("user__username", "step"))
    assert recorded == [("lena", 0), ("luis", 0), ("rita", 1)]


def test_it_keeps_the_steps_a_proposal_started_with(
    make_page: Callable[..., Page], policies: Page, lawyers: list[User], admin_user: User
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(lawyers[2], page, "Seven days.\n")
    workflow = workflows.applicable_workflow(page).workflow
    assert workflow is not None
    workflows.workflow_update(
        actor=admin_user, workflow=workflow, name="Legal review", steps=[{"group": REVIEWERS}]
    )
    proposal.refresh_from_db()
    assert proposal.review.steps == LEGAL_THEN_REVIEWERS
    version_approve(actor=lawyers[0], version=proposal)
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW


def test_it_rejects_at_any_step(
    make_page: Callable[..., Page], policies: Page, lawyers: list[User], reader: User
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(reader, page, "Seven days.\n")
    version_approve(actor=lawyers[0], version=proposal)
    version_reject(actor=lawyers[1], version=proposal, comment="Not legal.")
    proposal.refresh_from_db()
    assert (proposal.status, proposal.review.status) == ("rejected", "rejected")


def test_it_continues_the_review_when_the_author_revises_after_changes_requested(
    make_page: Callable[..., Page], policies: Page, lawyers: list[User], agent: Agent
) -> None:
    page = make_page("Refunds", "Five days.\nKeep the receipt.\n", parent=policies)
    first = propose(agent, page, "Seven days.\nKeep the receipt.\n")
    version_approve(actor=lawyers[0], version=first)
    review_comment_add(actor=lawyers[1], version=first, comment="Which days?", line=1)
    version_request_changes(actor=lawyers[1], version=first, comment="Say business days.")
    first.refresh_from_db()
    assert first.review.status == ReviewStatus.CHANGES_REQUESTED
    with pytest.raises(Conflict, match="changes were requested"):
        version_approve(actor=lawyers[2], version=first)
    second = propose(agent, page, "Seven business days.\nKeep the receipt.\n")
    first.refresh_from_db()
    assert first.status == VersionStatus.WITHDRAWN
    review = second.review
    assert (review.pk, review.step, review.status, review.revision) == (
        first.review_revision.review_id,
        0,
        ReviewStatus.OPEN,
        2,
    )
    assert ReviewComment.objects.filter(review=review).count() == 2
    # The approval of the first revision does not count for the second.
    version_approve(actor=lawyers[0], version=second)
    second.refresh_from_db()
    assert second.review.step == 0


def test_it_refuses_a_request_for_changes_without_a_comment(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    proposal = propose(reader, make_page("Plain", "old\n"), "new\n")
    with pytest.raises(InvalidArgument, match="say what to change"):
        version_request_changes(actor=reviewer, version=proposal, comment=" ")


def test_it_refuses_a_workflow_naming_a_missing_group(admin_user: User, reviewer: User) -> None:
    Group.objects.get_or_create(name="Legal")
    with pytest.raises(NotFound, match="group 'Legl', which does not exist"):
        workflows.workflow_create(actor=admin_user, name="X", steps=[{"group": "Legl"}])
    with pytest.raises(InvalidArgument, match="between 1 and 50 approvals"):
        workflows.workflow_create(
            actor=admin_user, name="X", steps=[{"group": "Legal", "approvals": 0}]
        )
    with pytest.raises(Forbidden):
        workflows.workflow_create(actor=reviewer, name="X", steps=[{"group": "Legal"}])


def test_it_never_lets_an_author_approve_at_a_later_step(
    make_page: Callable[..., Page], policies: Page, lawyers: list[User]
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(lawyers[0], page, "Seven days.\n")
    with pytest.raises(Forbidden, match="your own proposal"):
        version_approve(actor=lawyers[0], version=proposal)


def test_it_hands_a_reviewers_edit_at_an_earlier_step_to_the_next(
    make_page: Callable[..., Page],
    policies: Page,
    lawyers: list[User],
    reviewer: User,
    agent: Agent,
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(agent, page, "Seven days.\n")
    version_approve(
        actor=lawyers[0],
        version=proposal,
        edited_body="Seven calendar days.\n",
        expected_live_number=1,
    )
    version_approve(actor=lawyers[1], version=proposal)
    proposal.refresh_from_db()
    assert (proposal.body, proposal.proposed_body, proposal.edited_by_reviewer) == (
        "Seven calendar days.\n",
        "Seven days.\n",
        True,
    )
    version_approve(actor=reviewer, version=proposal)
    assert live(page).body == "Seven calendar days.\n"


def test_it_refuses_a_conflicting_stale_proposal_at_every_step(
    make_page: Callable[..., Page],
    policies: Page,
    lawyers: list[User],
    editor: User,
    reader: User,
    reviewer: User,
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(reader, page, "Seven days.\n")
    # The editor's change is a proposal too under the workflow; it goes live through it.
    newer = version_propose(actor=editor, page=page, body="Six days.\n", publish=False)
    for decider in (*lawyers[:2], reviewer):
        version_approve(actor=decider, version=newer)
    assert live(page).body == "Six days.\n"
    with pytest.raises(Conflict, match="overlap"):
        version_approve(actor=lawyers[0], version=proposal)
    assert not Approval.objects.filter(version=proposal).exists()


def test_it_keeps_a_proposal_in_its_workflow_when_the_workflow_is_deleted(
    make_page: Callable[..., Page],
    policies: Page,
    lawyers: list[User],
    reviewer: User,
    reader: User,
    admin_user: User,
) -> None:
    page = make_page("Refunds", "Five days.\n", parent=policies)
    proposal = propose(reader, page, "Seven days.\n")
    workflow = workflows.applicable_workflow(page).workflow
    assert workflow is not None
    workflows.workflow_delete(actor=admin_user, workflow=workflow)
    assert workflows.applicable_workflow(page) == workflows.DEFAULT
    with pytest.raises(Forbidden, match="members of Legal decide"):
        version_approve(actor=reviewer, version=proposal)
    for lawyer in lawyers[:2]:
        version_approve(actor=lawyer, version=proposal)
    # The caller's copy still says step 1: the service decides on the locked rows.
    version_approve(actor=reviewer, version=proposal)
    assert live(page).body == "Seven days.\n"
