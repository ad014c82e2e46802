"""Page history: every version with its marks, compare any two, revert."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from tests.conftest import live
from wiki.models import Page, Version


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_it_lists_every_version_with_status_author_approver_and_marks(
    make_page: Callable[..., Page],
    reader: User,
    editor: User,
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    page = make_page("History", "one\n")
    edited = version_propose(actor=proposing_agent, page=page, body="two\n")
    version_approve(
        actor=reviewer,
        version=edited,
        edited_body="two, edited\n",
        expected_live_number=1,
        comment="Tidied.",
    )
    rejected = version_propose(actor=reader, page=page, body="three\n")
    version_reject(actor=reviewer, version=rejected, comment="Not now.")
    page_revert(actor=editor, page=page, to_version=Version.objects.get(page=page, number=1))
    response = _client(reader).get(f"/reviews/pages/{page.public_id}/history/")
    assert response.status_code == 200
    assert [v.number for v in response.context["versions"]] == [4, 3, 2, 1]
    html = response.content.decode()
    for text in (
        "docs-bot",
        "rita",
        "Tidied.",
        "Not now.",
        "edited by reviewer",
        "revert of v1",
        "Rejected",
        "Approved",
    ):
        assert text in html
    assert "Revert to v" not in html  # a reader cannot revert


def test_it_compares_any_two_versions(make_page: Callable[..., Page], editor: User) -> None:
    page = make_page("Compare", "first words here\n")
    version_propose(actor=editor, page=page, body="second words here\n", publish=True)
    version_propose(actor=editor, page=page, body="third words here\n", publish=True)
    response = _client(editor).get(f"/reviews/pages/{page.public_id}/compare/?a=1&b=3")
    assert response.status_code == 200
    html = response.content.decode()
    assert "<del>first</del> words here" in html and "<ins>third</ins> words here" in html
    assert (
        _client(editor).get(f"/reviews/pages/{page.public_id}/compare/?a=1&b=9").status_code == 404
    )
    bad = _client(editor).get(f"/reviews/pages/{page.public_id}/compare/?a=x")
    assert bad.status_code == 302


def test_it_compares_the_title_and_tags_as_the_review_page_does(
    make_page: Callable[..., Page], editor: User
) -> None:
    page = make_page("Refunds", "Five days.\n", tags=["money", "old"])
    version_propose(
        actor=editor, page=page, title="Refund rules", tags=["money", "new"], publish=True
    )
    html = _client(editor).get(f"/reviews/pages/{page.public_id}/compare/?a=1&b=2").content
    text = html.decode()
    assert '<dd class="rv-title-diff">' in text
    assert '<del class="tag rv-tag-removed">old</del>' in text
    assert '<ins class="tag rv-tag-added">new</ins>' in text
    assert '<span class="tag">money</span>' in text


@pytest.mark.parametrize("who", ["editor", "reviewer"])
def test_it_reverts_to_an_earlier_version(
    make_page: Callable[..., Page], editor: User, reviewer: User, who: str
) -> None:
    page = make_page("Revert", "original\n")
    version_propose(actor=editor, page=page, body="vandalised\n", publish=True)
    actor = editor if who == "editor" else reviewer
    response = _client(actor).post(
        f"/reviews/pages/{page.public_id}/history/", {"to_number": 1, "comment": ""}
    )
    assert response.status_code == 302
    current = live(page)
    assert current.reverted_from is not None
    assert (current.number, current.body, current.reverted_from.number) == (3, "original\n", 1)


def test_it_refuses_a_revert_to_readers_and_to_unapproved_versions(
    make_page: Callable[..., Page], reader: User, editor: User
) -> None:
    page = make_page("No revert", "original\n")
    version_propose(actor=editor, page=page, body="current\n", publish=True)
    pending = version_propose(actor=reader, page=page, body="pending\n")
    response = _client(reader).post(f"/reviews/pages/{page.public_id}/history/", {"to_number": 1})
    assert response.status_code == 403
    assert "Only members of Editors, Reviewers can revert this page" in response.content.decode()
    response = _client(editor).post(
        f"/reviews/pages/{page.public_id}/history/", {"to_number": pending.number}
    )
    assert response.status_code == 400
    assert "v3 was never live" in response.content.decode()
    assert live(page).body == "current\n"


def test_it_answers_404_for_a_forged_page_id(db: None, reader: User) -> None:
    client = _client(reader)
    assert client.get("/reviews/pages/pg_zzzzzzzz/history/").status_code == 404
    assert client.get("/reviews/pages/not-an-id/history/").status_code == 404
    assert client.get("/reviews/pages/pg_zzzzzzzz/v1/").status_code == 404
