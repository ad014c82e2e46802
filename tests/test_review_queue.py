"""The review queue: what waits, oldest first, filters, the nav count, the reviewer's home."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents.models import Agent
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from wiki.models import Page, Version, VersionStatus


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_lists_waiting_versions_oldest_first_with_their_details(
    make_page: Callable[..., Page], reader: User, reviewer: User, proposing_agent: Agent
) -> None:
    first = make_page("Refunds", "old\n")
    second = make_page("Shipping", "old\n")
    by_person = version_propose(
        actor=reader, page=first, body="new\n", change_summary="Fix refund days"
    )
    by_agent = version_propose(
        actor=proposing_agent, page=second, kind="append", body="more", change_summary="Add FAQ"
    )
    response = _client(reviewer).get("/reviews/")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.index("Fix refund days") < html.index("Add FAQ")
    assert f"/reviews/pages/{first.public_id}/v{by_person.number}/" in html
    assert f"/reviews/pages/{second.public_id}/v{by_agent.number}/" in html
    assert "docs-bot" in html and "reed" in html
    assert "Append" in html and "Replace" in html
    rows = [row.version.pk for row in response.context["rows"]]
    assert rows == [by_person.pk, by_agent.pk]


def test_it_flags_stale_proposals(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Stale", "a\n")
    proposal = version_propose(actor=reader, page=page, body="b\n")
    response = _client(reviewer).get("/reviews/")
    assert [row.stale for row in response.context["rows"]] == [False]
    version_propose(actor=editor, page=page, body="c\n", publish=True)
    response = _client(reviewer).get("/reviews/")
    assert [(row.version.pk, row.stale) for row in response.context["rows"]] == [
        (proposal.pk, True)
    ]
    assert "rv-badge-stale" in response.content.decode()


def test_it_offers_each_agent_with_a_waiting_proposal_once_by_name(
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
    second_agent: Agent,
) -> None:
    idle = Agent.objects.create(name="alpha-bot", can_edit_pages=True)
    one, two, three = make_page("One"), make_page("Two"), make_page("Three")
    version_propose(actor=second_agent, page=one, body="x")
    version_propose(actor=second_agent, page=two, body="y")
    version_propose(actor=proposing_agent, page=three, body="z")
    decided = version_propose(actor=idle, page=one, body="w")
    version_reject(actor=reviewer, version=decided, comment="Not this one.")
    response = _client(reviewer).get("/reviews/")
    # The queue's author filter suggests these (reviews reads them through the versions).
    assert response.context["agents"] == ["docs-bot", "triage-bot"]


def test_it_filters_by_agent_page_and_kind_of_author(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    proposing_agent: Agent,
    second_agent: Agent,
) -> None:
    one, two = make_page("One"), make_page("Two")
    mine = version_propose(actor=proposing_agent, page=one, body="x")
    other = version_propose(actor=second_agent, page=two, body="y")
    human = version_propose(actor=reader, page=two, body="z")
    client = _client(reviewer)

    def listed(query: str) -> list[int]:
        return [row.version.pk for row in client.get(f"/reviews/?{query}").context["rows"]]

    assert listed("agent=docs-bot") == [mine.pk]
    assert listed(f"page={two.public_id}") == [other.pk, human.pk]
    assert listed("author_kind=agent") == [mine.pk, other.pk]
    assert listed("author_kind=human") == [human.pk]
    assert listed("author_kind=nonsense") == [mine.pk, other.pk, human.pk]


def test_it_shows_the_waiting_count_in_the_navigation_for_reviewers_only(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page()
    version_propose(actor=reader, page=page, body="new")
    html = _client(reviewer).get("/reviews/").content.decode()
    assert 'aria-label="1 waiting">1</span>' in html
    response = _client(editor).get(f"/p/{page.public_id}/")
    assert 'href="/reviews/"' not in response.content.decode()
    assert _client(editor).get("/reviews/").status_code == 403
    assert _client(reader).get("/reviews/").status_code == 403


def test_it_shows_the_reviewers_recent_decisions(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    page = make_page("Decided")
    approved = version_propose(actor=reader, page=page, body="yes")
    version_approve(actor=reviewer, version=approved)
    rejected = version_propose(actor=reader, page=page, body="no")
    version_reject(actor=reviewer, version=rejected, comment="Not accurate.")
    other = version_propose(actor=reader, page=page, body="theirs")
    version_reject(actor=second_reviewer, version=other, comment="Someone else.")
    response = _client(reviewer).get("/reviews/")
    assert [v.pk for v in response.context["recent_decisions"]] == [rejected.pk, approved.pk]
    assert "Your recent decisions" in response.content.decode()


def test_it_renders_the_queue_with_the_same_number_of_queries_for_5_and_500(
    make_page: Callable[..., Page], reviewer: User, add_proposals: Callable[..., None]
) -> None:
    parent = make_page("Parent", "The pages below sit under it.\n")
    # Under a parent: a row that followed its page's parent would cost a query per row.
    pages = [make_page(f"Page {i}", f"body {i}\n", parent=parent) for i in range(5)]
    for page in pages:
        page.refresh_from_db()
    client = _client(reviewer)
    client.get("/reviews/")  # warm the session and caches

    def measure() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/reviews/")
        assert response.status_code == 200
        return len(queries), len(response.context["rows"])

    add_proposals(pages, 5)
    small, small_rows = measure()
    for page in pages:
        page.refresh_from_db()
    add_proposals(pages, 495)
    large, large_rows = measure()
    assert (small_rows, large_rows) == (5, 100)  # one screen of the oldest 100
    assert Version.objects.filter(status=VersionStatus.IN_REVIEW).count() == 500
    assert small == large
    print(f"queue queries: {small} with 5, {large} with 500")
    # + who else is reviewing the rows, and the workflows for the filter (review workflows),
    # + who may decide the rows (reviews.deciders: the members, whether section grants apply).
    # + the people asked by name on the rows (reviews.asking), the inbox's unread count.
    # + the rows shown whole (reviews.shown: one INSERT) and the last batch to undo.
    assert large <= 18
