"""The workflow screens: the admin's workflow page, the page's line, the review page's path
and conversation, the queue's step column and sections, presence."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from reviews import workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import ReviewComment, ReviewStatus, Workflow
from tests.conftest import live, open_review_page
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

LEGAL = [
    {"name": "Legal", "group": "Legal", "approvals": 2},
    {"name": "Final check", "group": REVIEWERS, "approvals": 1},
]


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def lawyers(make_user: Callable[..., User]) -> list[User]:
    return [make_user(name, "Legal") for name in ("lena", "luis")]


@pytest.fixture
def policies(make_page: Callable[..., Page], admin_user: User, lawyers: list[User]) -> Page:
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(actor=admin_user, name="Legal review", steps=LEGAL)
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    return root


@pytest.fixture
def proposal(make_page: Callable[..., Page], policies: Page, reader: User) -> Version:
    page = make_page("Refunds", "Five days.\nKeep the receipt.\n", parent=policies)
    return version_propose(
        actor=reader, page=page, body="Seven days.\nKeep the receipt.\n", change_summary="7."
    )


def _review_url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def test_it_lets_an_admin_define_and_assign_a_workflow(
    admin_user: User, make_page: Callable[..., Page], lawyers: list[User]
) -> None:
    root = make_page("Policies", "All policies.\n")
    child = make_page("Leave", "Leave.\n", parent=root)
    client = _client(admin_user)
    assert client.get("/reviews/workflows/").status_code == 200
    response = client.post(
        "/reviews/workflows/",
        {
            "name": "Legal review",
            "step_1_name": "Legal",
            "step_1_group": "Legal",
            "step_1_approvals": "2",
            "step_2_name": "Final",
            "step_2_group": REVIEWERS,
            "step_2_approvals": "1",
            "step_3_group": "",
        },
    )
    workflow = Workflow.objects.get(name="Legal review")
    assert response.status_code == 302
    assert workflows.steps_of(workflow) == [
        {"name": "Legal", "group": "Legal", "approvals": 2},
        {"name": "Final", "group": REVIEWERS, "approvals": 1},
    ]
    client.post(f"/reviews/workflows/{workflow.pk}/pages/", {"page": root.public_id})
    page = client.get(f"/p/{child.public_id}/").content.decode()
    assert "Legal review" in page and "from <a" in page and "Policies" in page


def test_it_refuses_the_workflow_screen_to_others(reviewer: User) -> None:
    assert _client(reviewer).get("/reviews/workflows/").status_code == 403


def test_it_says_when_a_group_does_not_exist(admin_user: User) -> None:
    response = _client(admin_user).post(
        "/reviews/workflows/", {"name": "X", "step_1_group": "Nobody", "step_1_approvals": "1"}
    )
    assert response.status_code == 404
    assert "names the group" in response.content.decode()


def test_it_shows_the_whole_path_on_the_review_page(
    proposal: Version, lawyers: list[User], admin_user: User
) -> None:
    version_approve(actor=lawyers[0], version=proposal, comment="Fine.")
    html = _client(lawyers[1]).get(_review_url(proposal)).content.decode()
    assert "Review path: Legal review" in html
    assert "Step 1: Legal" in html and "1 of 2 · 1 still needed" in html
    assert "Approved by <strong>lena</strong>" in html and "Fine." in html
    assert "Step 2: Final check" in html
    assert "workflow for this page changed" not in html
    workflow = workflows.applicable_workflow(proposal.page).workflow
    assert workflow is not None
    workflows.workflow_update(
        actor=admin_user, workflow=workflow, name="Legal review", steps=[{"group": REVIEWERS}]
    )
    html = _client(lawyers[1]).get(_review_url(proposal)).content.decode()
    assert "workflow for this page changed" in html


def test_it_requests_changes_and_keeps_the_conversation_across_revisions(
    proposal: Version, lawyers: list[User], reader: User
) -> None:
    url = _review_url(proposal)
    lena = _client(lawyers[0])
    open_review_page(lena, url)
    lena.post(url, {"action": "comment", "comment": "Which days?", "line": "1"})
    response = lena.post(url, {"action": "request_changes", "comment": "Say business days."})
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert proposal.review.status == ReviewStatus.CHANGES_REQUESTED
    author_view = _client(reader).get(url).content.decode()
    assert "Changes requested." in author_view and "Say business days." in author_view
    revision = version_propose(
        actor=reader,
        page=proposal.page,
        body="Seven business days.\nKeep the receipt.\n",
        change_summary="Business days.",
    )
    html = lena.get(_review_url(revision)).content.decode()
    assert "Which days?" in html and "Say business days." in html
    assert "<code>Seven days.</code>" in html  # the line the comment was on
    assert "What changed since you last looked" in html
    assert ReviewComment.objects.filter(review=revision.review).count() == 2


def test_it_puts_what_awaits_you_first_and_filters_by_step(
    proposal: Version,
    lawyers: list[User],
    reviewer: User,
    make_page: Callable[..., Page],
    reader: User,
) -> None:
    plain = version_propose(
        actor=reader, page=make_page("Lunch", "Noon.\n"), body="One.\n", change_summary="1."
    )
    rows = _client(reviewer).get("/reviews/").context["rows"]
    assert [(row.version.pk, row.waiting_on) for row in rows] == [
        (plain.pk, "you"),
        (proposal.pk, "Legal"),
    ]
    html = _client(reviewer).get("/reviews/").content.decode()
    assert html.index("Awaiting your review") < html.index("Waiting on others")
    assert "Step 1 of 2: Legal (0 of 2 approvals)" in html
    # A lawyer who is no reviewer sees what waits on Legal, not the other drafts.
    legal = _client(lawyers[0]).get("/reviews/").context["rows"]
    assert [(row.version.pk, row.waits_on_you) for row in legal] == [(proposal.pk, True)]
    filtered = _client(reviewer).get("/reviews/", {"workflow": "Legal review", "step": "1"})
    assert [row.version.pk for row in filtered.context["rows"]] == [proposal.pk]


def test_it_shows_who_is_reviewing_until_it_expires(proposal: Version, lawyers: list[User]) -> None:
    open_review_page(_client(lawyers[0]), _review_url(proposal))
    html = _client(lawyers[1]).get(_review_url(proposal)).content.decode()
    assert "lena is reviewing this now" in html
    queue = _client(lawyers[1]).get("/reviews/").context["rows"]
    assert queue[0].reviewing == ["lena"]
    later = timezone.now() + timedelta(minutes=6)
    with mock.patch("reviews.selectors.timezone.now", return_value=later):
        html = _client(lawyers[1]).get(_review_url(proposal)).content.decode()
    assert "lena is reviewing" not in html


def test_it_publishes_from_the_review_page_after_the_last_step(
    proposal: Version, lawyers: list[User], reviewer: User
) -> None:
    url = _review_url(proposal)
    for user in (*lawyers, reviewer):
        response = _client(user).post(url, {"action": "approve", "expected_live_number": "1"})
        assert response.status_code == 302, response.content
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.APPROVED
    assert live(proposal.page).body == "Seven days.\nKeep the receipt.\n"
    history = _client(reviewer).get(f"/reviews/pages/{proposal.page.public_id}/history/")
    text = history.content.decode()
    assert "lena · step 1 (Legal)" in text and "rita · step 2 (Final check)" in text
