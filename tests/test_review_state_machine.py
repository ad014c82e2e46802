"""A review as one state machine: a decision names the step it was given for and is refused
once the review has moved on; one person counts once per review, across steps; a reviewer's
edit resets the approvals given to the text before it and says so to the next approver."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.mail import EmailMessage
from django.db import connection
from django.test import Client

from core.errors import Conflict
from reviews import outbox, workflows
from reviews.actions.decide import version_approve, version_request_changes
from reviews.actions.propose import version_propose
from reviews.models import Approval, Review, ReviewStatus
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

TWO_LEGAL_THEN_ONE_REVIEWER = [
    {"name": "Legal", "group": "Legal", "approvals": 2},
    {"name": "Final check", "group": REVIEWERS, "approvals": 1},
]


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


@pytest.fixture
def refunds(make_page: Callable[..., Page], admin_user: User, people: list[User]) -> Page:
    """A page under "2 from Legal, then 1 from Reviewers" (made once the people are)."""
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(
        actor=admin_user, name="Legal review", steps=TWO_LEGAL_THEN_ONE_REVIEWER
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    return make_page("Refunds", "Refunds take five days.\n", parent=root)


@pytest.fixture
def people(request: pytest.FixtureRequest, make_user: Callable[..., User]) -> list[User]:
    """Lawyers: Legal only, or (parametrized "both") reviewers too, as teams may have."""
    both = getattr(request, "param", "") == "both"
    groups = ("Legal", REVIEWERS) if both else ("Legal",)
    return [make_user(name, *groups) for name in ("lena", "luis", "lara", "leo")]


def _status(version: Version) -> tuple[str, int]:
    version.refresh_from_db()
    review = Review.objects.get(version=version)
    return version.status, review.step + 1


@pytest.mark.parametrize("people", ["both"], indirect=True)
def test_it_refuses_two_people_for_three_approvals(
    refunds: Page, people: list[User], reader: User, reviewer: User
) -> None:
    lena, luis = people[:2]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    version_approve(actor=lena, version=proposal, step=1)
    version_approve(actor=luis, version=proposal, step=1)
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)
    with pytest.raises(Conflict, match="one person counts once"):
        version_approve(actor=lena, version=proposal, step=2)
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)
    assert live(refunds).body == "Refunds take five days.\n"
    # Over REST too, and the page tells her why instead of offering the button.
    api = _client(lena).post(
        f"/api/v1/pages/{refunds.public_id}/versions/{proposal.number}/approve",
        {"step": 2},
        content_type="application/json",
    )
    assert api.status_code == 409
    assert "rv-approve-button" not in _client(lena).get(_url(proposal)).content.decode()
    version_approve(actor=reviewer, version=proposal, step=2)
    assert live(refunds).body == "Seven days.\n"


@pytest.mark.parametrize("people", ["both"], indirect=True)
def test_it_refuses_an_approval_from_a_page_opened_at_an_earlier_step(
    refunds: Page, people: list[User], reader: User
) -> None:
    lena, luis, lara = people[:3]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    opened = _client(lara).get(_url(proposal)).content.decode()
    assert 'name="step" value="1"' in opened  # the form carries the step it shows
    version_approve(actor=lena, version=proposal, step=1)
    version_approve(actor=luis, version=proposal, step=1)
    # lara sends the form she opened at step 1; the proposal waits at step 2 now.
    response = _client(lara).post(
        _url(proposal), {"action": "approve", "expected_live_number": 1, "step": 1}
    )
    assert response.status_code == 409
    page = response.content.decode()
    assert "moved on since you opened it" in page and "reload the proposal" in page
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)
    assert not Approval.objects.filter(version=proposal, user=lara).exists()
    assert live(refunds).body == "Refunds take five days.\n"


@pytest.mark.parametrize("people", ["both"], indirect=True)
def test_it_refuses_a_rest_decision_for_a_step_left_behind(
    refunds: Page, people: list[User], reader: User
) -> None:
    lena, luis, lara = people[:3]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    version_approve(actor=lena, version=proposal, step=1)
    version_approve(actor=luis, version=proposal, step=1)
    url = f"/api/v1/pages/{refunds.public_id}/versions/{proposal.number}"
    for action, body in (("approve", {"step": 1}), ("reject", {"step": 1, "comment": "No."})):
        response = _client(lara).post(f"{url}/{action}", body, content_type="application/json")
        assert response.status_code == 409, response.content
        error = response.json()["error"]
        assert "moved on" in error["message"] and error["detail"]["step"] == 2
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)


@pytest.mark.django_db(transaction=True)
def test_it_counts_four_racing_approvals_at_step_one_for_step_one_only(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
) -> None:
    """Four lawyers (reviewers too) approve at once at step 1, which needs two: two count,
    two are refused as given for a step the review has left; nothing is published. Each
    names step 1, as the review page each had open sends it: a request naming no step
    approves the step the review waits at when the request reads it, which on a busy machine
    can already be step 2 for the third, and is then rightly counted there."""
    lawyers = [make_user(name, "Legal", REVIEWERS) for name in ("lena", "luis", "lara", "leo")]
    page = make_page("Race", "old\n")
    workflow = workflows.workflow_create(
        actor=admin_user, name="Legal", steps=TWO_LEGAL_THEN_ONE_REVIEWER
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=page)
    proposal = version_propose(actor=reader, page=page, body="new\n")
    url = f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/approve"
    barrier = threading.Barrier(len(lawyers))
    statuses: dict[str, int] = {}

    def approve(user: User) -> None:
        client = _client(user)
        barrier.wait()
        try:
            response = client.post(
                url, {"comment": "Yes.", "step": 1}, content_type="application/json"
            )
            statuses[user.username] = response.status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=approve, args=(lawyer,)) for lawyer in lawyers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses.values()) == [200, 200, 409, 409], statuses
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)
    assert Approval.objects.filter(version=proposal).count() == 2
    assert live(page).body == "old\n"


def test_it_resets_approvals_when_a_reviewer_edits_then_approves(
    refunds: Page,
    people: list[User],
    reader: User,
    reviewer: User,
    mailoutbox: list[EmailMessage],
    settings: Any,
) -> None:
    settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS = 0  # each email at once, not gathered
    lena, luis = people[:2]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    outbox.send_review_requests(lena.pk)  # asked once: the text as the author wrote it
    version_approve(actor=lena, version=proposal, step=1)
    # luis edits the text (an injection lena never saw) and approves it at step 1.
    version_approve(
        actor=luis,
        version=proposal,
        step=1,
        edited_body="Seven days. Send refunds to account 1234.\n",
        expected_live_number=1,
    )
    # lena's approval was of the text before: step 1 still needs a second approval.
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 1)
    assert Approval.objects.get(version=proposal, user=lena).reset
    assert live(refunds).body == "Refunds take five days.\n"
    # The next approver is told, on the page and in the mail.
    html = _client(lena).get(_url(proposal)).content.decode()
    assert "The text changed during the review." in html
    assert "luis edited the text at step 1" in html and "(lena) were reset" in html
    outbox.send_review_requests(lena.pk)
    told = [m for m in mailoutbox if lena.email in m.to]
    assert told and "THE TEXT CHANGED DURING THE REVIEW: luis edited the text" in told[-1].body
    # lena approves the edited text: step 1 is done; a reviewer publishes it.
    version_approve(actor=lena, version=proposal, step=1)
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 2)
    version_approve(actor=reviewer, version=proposal, step=2)
    assert live(refunds).body == "Seven days. Send refunds to account 1234.\n"


def test_it_sends_the_review_back_to_step_one_when_the_last_step_edits(
    refunds: Page, people: list[User], reader: User, reviewer: User
) -> None:
    lena, luis = people[:2]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    version_approve(actor=lena, version=proposal, step=1)
    version_approve(actor=luis, version=proposal, step=1)
    version_approve(
        actor=reviewer,
        version=proposal,
        step=2,
        edited_body="Seven working days.\n",
        expected_live_number=1,
    )
    # Legal approved other words: they decide again; the reviewer's approval still counts.
    assert _status(proposal) == (VersionStatus.IN_REVIEW, 1)
    assert live(refunds).body == "Refunds take five days.\n"
    version_approve(actor=lena, version=proposal, step=1)
    version_approve(actor=luis, version=proposal, step=1)
    assert _status(proposal)[0] == VersionStatus.APPROVED
    assert live(refunds).body == "Seven working days.\n"


def test_it_allows_only_the_moves_its_table_names(
    refunds: Page, people: list[User], reader: User
) -> None:
    lena = people[0]
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    review = Review.objects.get(version=proposal)
    assert set(Review.TRANSITIONS) == {
        "approve",
        "merge",
        "publish",
        "reject",
        "request_changes",
        "revise",
        "withdraw",
        "undo",
        "take_back",  # a step's approval, with the batch that gave it (reviews.batch)
    }
    version_request_changes(actor=lena, version=proposal, comment="Which days?", step=1)
    with pytest.raises(Conflict, match="waits for its author's revision"):
        version_request_changes(actor=lena, version=proposal, comment="Again.")
    with pytest.raises(Conflict, match="waits for its author's revision"):
        version_approve(actor=lena, version=proposal)
    review.refresh_from_db()
    assert review.status == ReviewStatus.CHANGES_REQUESTED
    with pytest.raises(Conflict):
        review.check_move("undo")
