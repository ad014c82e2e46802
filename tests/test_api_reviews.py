"""REST API decisions: the review list, approve / reject / withdraw, merges, conflicts, refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from agents.models import Agent
from core.models import AuditEvent
from reviews.actions.propose import version_propose
from reviews.actions.withdraw import version_withdraw
from tests.conftest import live
from tests.fixtures_web import rest_client
from wiki.models import Page, Version, VersionStatus


def _url(version: Version, action: str) -> str:
    return f"/api/v1/pages/{version.page.public_id}/versions/{version.number}/{action}"


def _error(response: Any) -> dict[str, Any]:
    body: dict[str, Any] = response.json()["error"]
    return body


def _unchanged(page: Page, version: Version, body: str) -> None:
    version.refresh_from_db()
    assert version.status == VersionStatus.IN_REVIEW
    assert live(page).body == body


def test_it_lists_versions_in_review_oldest_first(
    make_page: Callable[..., Page], reader: User, reviewer: User, proposing_agent: Agent
) -> None:
    one, two = make_page("One"), make_page("Two")
    first = version_propose(actor=reader, page=one, body="a", change_summary="First")
    second = version_propose(actor=proposing_agent, page=two, kind="append", body="b")
    results = rest_client(reviewer).get("/api/v1/reviews/").json()["results"]
    assert [(r["pageId"], r["number"]) for r in results] == [
        (one.public_id, first.number),
        (two.public_id, second.number),
    ]
    assert results[0]["changeSummary"] == "First" and results[0]["pageTitle"] == "One"
    assert results[1]["kind"] == "append" and results[1]["author"]["kind"] == "agent"
    assert results[0]["reviewUrl"].endswith(f"/reviews/pages/{one.public_id}/v{first.number}/")
    agents_only = rest_client(reviewer).get("/api/v1/reviews/", {"author_kind": "agent"}).json()
    assert [r["number"] for r in agents_only["results"]] == [second.number]


def test_it_approves_with_a_comment(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Approve", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    response = rest_client(reviewer).post(
        _url(proposal, "approve"), {"comment": "Good."}, format="json"
    )
    assert response.status_code == 200
    data = response.json()
    assert (data["status"], data["live"], data["decidedBy"], data["comment"]) == (
        "approved",
        True,
        "rita",
        "Good.",
    )
    assert live(page).body == "new\n"


def test_it_rejects_with_a_reason_and_refuses_without_one(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Reject", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    api = rest_client(reviewer)
    for payload in ({}, {"comment": ""}, {"comment": "   "}):
        response = api.post(_url(proposal, "reject"), payload, format="json")
        assert response.status_code == 400
        assert _error(response)["code"] == "invalid_argument"
        assert "reason is required" in _error(response)["message"]
        _unchanged(page, proposal, "old\n")
    response = api.post(_url(proposal, "reject"), {"comment": "Cite a source."}, format="json")
    assert response.status_code == 200
    assert (response.json()["status"], response.json()["comment"]) == ("rejected", "Cite a source.")


def test_it_lets_only_the_author_withdraw(
    make_page: Callable[..., Page], reader: User, reviewer: User, outsider: User
) -> None:
    page = make_page("Withdraw", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    refused = rest_client(reviewer).post(_url(proposal, "withdraw"))
    assert refused.status_code == 403 and _error(refused)["code"] == "forbidden"
    assert "only the author of a proposal can withdraw it" in _error(refused)["message"]
    # Someone who may not even read the proposal finds none.
    assert rest_client(outsider).post(_url(proposal, "withdraw")).status_code == 404
    _unchanged(page, proposal, "old\n")
    response = rest_client(reader).post(_url(proposal, "withdraw"))
    assert response.status_code == 200 and response.json()["status"] == "withdrawn"


def test_it_answers_409_when_the_version_is_not_in_review(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    page = make_page("Decided", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    assert rest_client(reviewer).post(_url(proposal, "approve")).status_code == 200
    for client, action, payload in (
        (rest_client(reviewer), "approve", {}),
        (rest_client(second_reviewer), "reject", {"comment": "Too late."}),
        (rest_client(reader), "withdraw", {}),
    ):
        response = client.post(_url(proposal, action), payload, format="json")
        assert response.status_code == 409
        assert _error(response)["code"] == "conflict"
        expected = (
            "is approved, not in review" if action == "withdraw" else "already approved by rita"
        )
        assert expected in _error(response)["message"]
    assert AuditEvent.objects.filter(action="version.approve").count() == 1
    assert live(page).pk == proposal.pk


def test_it_refuses_to_approve_a_withdrawn_version(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Withdrawn", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    version_withdraw(actor=reader, version=proposal)
    response = rest_client(reviewer).post(_url(proposal, "approve"))
    assert response.status_code == 409
    assert "already withdrawn" in _error(response)["message"]
    assert _error(response)["detail"]["status"] == "withdrawn"
    assert live(page).body == "old\n"


def test_it_answers_404_for_a_forged_version_number_or_page_id(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Forged", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    api = rest_client(reviewer)
    for url in (
        f"/api/v1/pages/{page.public_id}/versions/99/approve",
        f"/api/v1/pages/pg_zzzzzzzz/versions/{proposal.number}/approve",
        f"/api/v1/pages/{page.public_id}x/versions/{proposal.number}/reject",
        f"/api/v1/pages/{page.public_id}/versions/-1/approve",
    ):
        response = api.post(url, {"comment": "x"}, format="json")
        assert response.status_code == 404, url
        assert _error(response)["code"] == "not_found"
    _unchanged(page, proposal, "old\n")


@pytest.mark.parametrize("who", ["reader", "editor", "outsider", "author", "anonymous"])
@pytest.mark.parametrize("action", ["approve", "reject"])
def test_it_refuses_decisions_to_anyone_but_another_reviewer(
    make_page: Callable[..., Page],
    reader: User,
    editor: User,
    outsider: User,
    reviewer: User,
    who: str,
    action: str,
) -> None:
    page = make_page("Rights", "old\n")
    author = reviewer if who == "author" else reader
    proposal = version_propose(actor=author, page=page, body="new\n")
    actors = {"reader": reader, "editor": editor, "outsider": outsider, "author": reviewer}
    client = rest_client(actors[who]) if who in actors else APIClient()
    response = client.post(_url(proposal, action), {"comment": "x"}, format="json")
    expected = {"anonymous": 401, "outsider": 404}.get(who, 403)
    assert response.status_code == expected
    if who == "outsider":
        # Not the author, a reviewer or an editor: the proposal's text is not theirs to see.
        assert _error(response)["code"] == "not_found"
    elif who in actors:
        # The editor lacks the role; the reader (who wrote it) and the author are its authors.
        reason = "only members of Reviewers can decide" if who == "editor" else "your own proposal"
        assert reason in _error(response)["message"]
    else:
        assert "error" in response.json()
    _unchanged(page, proposal, "old\n")


def test_it_merges_the_second_of_two_proposals_when_their_edits_do_not_overlap(
    make_page: Callable[..., Page], reader: User, proposing_agent: Agent, reviewer: User
) -> None:
    page = make_page("Two proposals", "alpha\n\nbeta\n\ngamma\n")
    first = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    second = version_propose(actor=proposing_agent, page=page, body="alpha\n\nbeta\n\nGAMMA\n")
    api = rest_client(reviewer)
    assert api.post(_url(first, "approve")).status_code == 200
    detail = api.get(f"/api/v1/pages/{page.public_id}/versions/{second.number}/").json()
    assert detail["stale"] is True
    response = api.post(_url(second, "approve"))
    assert response.status_code == 200
    assert response.json()["merged"] is True
    assert live(page).body == "ALPHA\n\nbeta\n\nGAMMA\n"


def test_it_refuses_the_second_of_two_overlapping_proposals_with_the_conflict(
    make_page: Callable[..., Page], reader: User, proposing_agent: Agent, reviewer: User
) -> None:
    page = make_page("Overlap", "intro\n\nWe refund within 30 days.\n")
    first = version_propose(actor=reader, page=page, body="intro\n\nWe refund within 14 days.\n")
    second = version_propose(
        actor=proposing_agent, page=page, body="intro\n\nWe refund within 60 days.\n"
    )
    api = rest_client(reviewer)
    assert api.post(_url(first, "approve")).status_code == 200
    response = api.post(_url(second, "approve"), {"comment": "ok"}, format="json")
    assert response.status_code == 409
    error = _error(response)
    assert error["code"] == "conflict" and "overlap" in error["message"]
    assert error["detail"]["liveVersion"] == first.number
    assert error["detail"]["conflicts"] == [
        {
            "field": "markdown",
            "base": "We refund within 30 days.\n",
            "live": "We refund within 14 days.\n",
            "proposal": "We refund within 60 days.\n",
        }
    ]
    _unchanged(page, second, "intro\n\nWe refund within 14 days.\n")
    assert AuditEvent.objects.filter(action="version.approve").count() == 1


def test_it_refuses_an_approval_reviewed_against_an_older_live_version(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Expected", "a\n\nb\n")
    proposal = version_propose(actor=reader, page=page, body="A\n\nb\n")
    version_propose(actor=editor, page=page, body="a\n\nB\n", publish=True)
    response = rest_client(reviewer).post(
        _url(proposal, "approve"), {"expectedLiveVersion": 1}, format="json"
    )
    assert response.status_code == 409 and "while you were reviewing" in _error(response)["message"]
    _unchanged(page, proposal, "a\n\nB\n")


def test_it_lists_reviews_with_the_same_number_of_queries_for_5_and_50(
    make_page: Callable[..., Page], reviewer: User, add_proposals: Callable[..., None]
) -> None:
    pages = [make_page(f"Page {i}") for i in range(5)]
    api = rest_client(reviewer)

    def measure() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as queries:
            response = api.get("/api/v1/reviews/")
        assert response.status_code == 200
        return len(queries), len(response.json()["results"])

    api.get("/api/v1/reviews/")  # the key's first use is recorded once, outside the measure
    add_proposals(pages, 5)
    small, small_rows = measure()
    for page in pages:
        page.refresh_from_db()
    add_proposals(pages, 45)
    large, large_rows = measure()
    assert (small_rows, large_rows) == (5, 50)
    assert small == large
