"""Who decides a workflow step: the members of the step's group, through every door.

A member of Legal who is not in Reviewers is emailed about a Legal step; they open the review
link, find it in their queue, and approve it in the browser and over REST. One rule
(reviews.deciders) answers for the decision, the mail, the queue and the Approve button.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import Group, User
from django.core.mail import EmailMessage
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Agent
from core.errors import Conflict
from reviews import outbox, workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.rules import decision_refusal
from reviews.deciders import deciders, deciders_of
from reviews.models import Notification, Review
from reviews.selectors import with_reviews
from tests.conftest import live
from tests.fixtures_web import rest_client
from wiki import permissions
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

LEGAL_ONLY = [{"name": "Legal", "group": "Legal", "approvals": 1}]
LEGAL_THEN_REVIEWERS = [
    {"name": "Legal", "group": "Legal", "approvals": 1},
    {"name": "Final check", "group": REVIEWERS, "approvals": 1},
]


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _under(make_page: Callable[..., Page], admin: User, steps: list[dict[str, object]]) -> Page:
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(actor=admin, name="Legal review", steps=steps)
    workflows.workflow_assign(actor=admin, workflow=workflow, page=root)
    return make_page("Refunds", "Five days.\n", parent=root)


@pytest.fixture
def lena(make_user: Callable[..., User]) -> User:
    """In Legal, not in Reviewers (the issue's outside steps: nobody added her there)."""
    return make_user("lena", "Legal")


@pytest.fixture
def agent(make_user: Callable[..., User]) -> Agent:
    return Agent.objects.create(name="docs-bot", owner=make_user("owen"), can_edit_pages=True)


def test_it_lets_a_legal_member_who_is_no_reviewer_decide_in_the_browser(
    make_page: Callable[..., Page],
    admin_user: User,
    lena: User,
    agent: Agent,
    mailoutbox: list[EmailMessage],
) -> None:
    page = _under(make_page, admin_user, LEGAL_ONLY)
    proposal = version_propose(actor=agent, page=page, body="Seven days.\n")
    # She is emailed, with the review link...
    assert Notification.objects.filter(version=proposal, recipient=lena).exists()
    outbox.send_review_requests(lena.pk)
    mail = [m for m in mailoutbox if lena.email in m.to]
    assert len(mail) == 1 and _url(proposal) in mail[0].body
    client = _client(lena)
    # ...the link opens the proposal with its Approve button (not a 404)...
    html = client.get(_url(proposal)).content.decode()
    assert "Seven days." in html and "rv-approve-button" in html
    # ...the queue lists it as waiting on her (not a 403)...
    queue = client.get("/reviews/")
    assert queue.status_code == 200
    assert queue.context["rows"][0].version == proposal
    assert queue.context["rows"][0].waits_on_you
    # ...and her approval publishes it.
    response = client.post(
        _url(proposal), {"action": "approve", "expected_live_number": 1, "step": 1}
    )
    assert response.status_code == 302, response.content.decode()[:500]
    assert live(page).body == "Seven days.\n"


def test_it_lets_a_legal_member_who_is_no_reviewer_decide_over_rest(
    make_page: Callable[..., Page], admin_user: User, lena: User, agent: Agent
) -> None:
    page = _under(make_page, admin_user, LEGAL_ONLY)
    proposal = version_propose(actor=agent, page=page, body="Seven days.\n")
    api = rest_client(lena)
    listed = api.get("/api/v1/reviews/")
    assert listed.status_code == 200, listed.content
    assert [r["number"] for r in listed.json()["results"]] == [proposal.number]
    read = api.get(f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/")
    assert read.status_code == 200
    approved = api.post(
        f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/approve",
        {"step": 1},
        format="json",
    )
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == VersionStatus.APPROVED


def test_it_shows_a_legal_member_only_the_proposals_waiting_on_legal(
    make_page: Callable[..., Page], admin_user: User, lena: User, reader: User
) -> None:
    page = _under(make_page, admin_user, LEGAL_ONLY)
    legal = version_propose(actor=reader, page=page, body="Seven days.\n")
    elsewhere = make_page("Lunch", "Noon.\n")
    other = version_propose(actor=reader, page=elsewhere, body="One.\n")
    rows = _client(lena).get("/reviews/").context["rows"]
    assert [row.version for row in rows] == [legal]
    assert _client(lena).get(_url(other)).status_code == 404  # a draft she does not judge


def test_it_refuses_a_legal_member_at_the_reviewers_step(
    make_page: Callable[..., Page],
    admin_user: User,
    lena: User,
    make_user: Callable[..., User],
    reader: User,
    reviewer: User,
) -> None:
    page = _under(make_page, admin_user, LEGAL_THEN_REVIEWERS)
    proposal = version_propose(actor=reader, page=page, body="Seven days.\n")
    version_approve(actor=lena, version=proposal, step=1)
    proposal.refresh_from_db()
    # At step 2 the deciders are Reviewers (and admins, as before workflows); not lena twice.
    assert list(deciders(proposal.review)) == [admin_user, reviewer]
    html = _client(lena).get(_url(proposal)).content.decode()
    assert "rv-approve-button" not in html and "already approved this text" in html


def test_it_answers_who_decides_with_one_rule_for_every_door(
    make_page: Callable[..., Page],
    admin_user: User,
    make_user: Callable[..., User],
    agent: Agent,
    reviewer: User,
) -> None:
    lena, luis = make_user("lena", "Legal"), make_user("luis", "Legal")
    page = _under(make_page, admin_user, LEGAL_ONLY)
    agent.owner = luis  # his agent: he may not decide what it proposes
    agent.save()
    proposal = version_propose(actor=agent, page=page, body="Seven days.\n")
    proposal.refresh_from_db()
    allowed = set(deciders(proposal.review))
    assert allowed == {lena}
    asked = {n.recipient for n in Notification.objects.filter(version=proposal)}
    assert asked == allowed
    for person in (lena, luis, reviewer, admin_user):
        may = decision_refusal(person, proposal) is None
        assert may == (person in allowed), person


def test_it_never_decides_from_approvals_a_listing_loaded_before_the_decision(
    make_page: Callable[..., Page],
    admin_user: User,
    make_user: Callable[..., User],
    agent: Agent,
) -> None:
    """The queue loads each review's approvals once, into a list on the review (a public
    `Prefetch(..., to_attr=...)`); the rule reads that list, and a decision taken with such a
    copy decides from the rows it locks, so a second one by the same person is refused."""
    luis = make_user("luis", "Legal", REVIEWERS)
    make_user("rosa", REVIEWERS)
    page = _under(make_page, admin_user, LEGAL_THEN_REVIEWERS)
    proposal = version_propose(actor=agent, page=page, body="Seven days.\n")
    listed = with_reviews(Version.objects.filter(pk=proposal.pk)).get()
    accesses = permissions.accesses_at([listed.page])
    with CaptureQueriesContext(connection) as queries:
        assert luis.pk in deciders_of([listed.review], accesses)[listed.pk]
    assert not [q for q in queries.captured_queries if "reviews_approval" in q["sql"]]
    version_approve(actor=luis, version=listed, step=1)
    # Step 2 (Reviewers): luis is a reviewer, but he counts once in this review.
    again = with_reviews(Version.objects.filter(pk=proposal.pk)).get()
    assert again.review.step == 1
    assert luis.pk not in deciders_of([again.review])[again.pk]
    with pytest.raises(Conflict, match="counts once"):
        version_approve(actor=luis, version=listed, step=2)
    with pytest.raises(Conflict, match="counts once"):
        version_approve(actor=luis, version=again, step=2)


def test_it_mails_and_shows_admins_a_proposal_nobody_can_decide(
    make_page: Callable[..., Page],
    admin_user: User,
    make_user: Callable[..., User],
    agent: Agent,
) -> None:
    lone = make_user("lone", "Legal")
    page = _under(make_page, admin_user, LEGAL_ONLY)
    agent.owner = lone  # the only lawyer owns the agent: nobody may decide its proposal
    agent.save()
    proposal = version_propose(actor=agent, page=page, body="Seven days.\n")
    proposal.refresh_from_db()
    assert list(deciders(proposal.review)) == []
    admins_told = Notification.objects.filter(version=proposal, recipient=admin_user)
    assert admins_told.exists()
    html = _client(admin_user).get("/reviews/").content.decode()
    assert "Nobody can decide this step" in html


def _reviews_under_grants(
    make_page: Callable[..., Page], make_user: Callable[..., User], admin: User, count: int
) -> list[Review]:
    """`count` proposals in sections with grants (read and decide to Legal, a subsection of
    each granted back to Staff): the case that used to cost 2 queries per review."""
    legal = Group.objects.get_or_create(name="Legal")[0]
    staff = Group.objects.get_or_create(name="Staff")[0]
    sam = make_user(f"sam{count}", "Staff", "Legal")
    for number in range(count):
        section = make_page(f"Section {count}-{number}", "Text.\n")
        inner = make_page(f"Inner {count}-{number}", "Text.\n", parent=section)
        permissions.grant_set(actor=admin, page=section, group=legal, rights=["read", "decide"])
        permissions.grant_set(actor=admin, page=inner, group=staff, rights=["read"])
        version_propose(actor=sam, page=inner, body=f"Proposal {number}.\n")
    return list(
        Review.objects.filter(version__page__title__startswith=f"Inner {count}-").select_related(
            "version__page", "version__author_agent"
        )
    )


def test_it_answers_who_decides_many_reviews_under_grants_in_three_queries(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reviewer: User,
) -> None:
    lana = make_user("lana", "Legal", "Staff")
    for count in (2, 12):
        reviews = _reviews_under_grants(make_page, make_user, admin_user, count)
        assert len(reviews) == count
        with CaptureQueriesContext(connection) as queries:
            found = deciders_of(reviews)
        # The grants above the pages, the people of the groups concerned, the approvals.
        assert len(queries) == 3, [query["sql"][:120] for query in queries]
        # Legal decides there (an admin too); a Reviewer outside Legal does not, nor the author.
        for review in reviews:
            assert lana.pk in found[review.version_id]
            assert admin_user.pk in found[review.version_id]
            assert reviewer.pk not in found[review.version_id]
            assert review.version.author_user_id not in found[review.version_id]


def test_it_shows_the_policys_real_reason_in_the_queue_cell(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
) -> None:
    """Issue 46: the cell said "Members of Reviewers decide this step" to a member of
    Reviewers whose real reason is that they already approved this text at step 1."""
    both = make_user("bea", "Legal", REVIEWERS)
    refunds = _under(make_page, admin_user, LEGAL_THEN_REVIEWERS)
    proposal = version_propose(actor=reader, page=refunds, body="Seven days.\n")
    version_approve(actor=both, version=proposal)
    html = _client(both).get("/reviews/").content.decode()
    cell = html[
        html.index("rv-cannot-decide") : html.index("</span>", html.index("rv-cannot-decide"))
    ]
    assert "already approved this text" in cell, cell
    assert "Members of Reviewers decide this step" not in html


def test_it_names_the_group_granted_decide_in_the_queue_row_at_the_default_step(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    lena: User,
) -> None:
    """Issue 46: in a section whose `decide` is granted to Legal only, a Legal member's queue
    row of a proposal she may not decide (her agent's) said "Waits on Reviewers"; the
    decision is Legal's, as the mail and the buttons say."""
    legal = Group.objects.get(name="Legal")
    section = make_page("Contracts", "Signed ones.\n")
    page = make_page("NDA", "Two years.\n", parent=section)
    permissions.grant_set(actor=admin_user, page=section, group=legal, rights=["read", "decide"])
    bot = Agent.objects.create(name="legal-bot", owner=lena, can_edit_pages=True)
    proposal = version_propose(actor=bot, page=page, body="Three years.\n")
    response = _client(lena).get("/reviews/")
    [row] = response.context["rows"]
    assert row.version == proposal and not row.waits_on_you
    assert row.waiting_on == "Legal"
    html = response.content.decode()
    assert "Waits on Legal" in html and "Waits on Reviewers" not in html
    # A colleague in Legal decides it: the row waits on her.
    [theirs] = _client(make_user("luis", "Legal")).get("/reviews/").context["rows"]
    assert theirs.waits_on_you
