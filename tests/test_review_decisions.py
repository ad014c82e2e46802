"""Deciding in the browser: approve, edit then approve, reject, stale merges, refusals."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from core.models import AuditEvent
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.withdraw import version_withdraw
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus

if TYPE_CHECKING:
    from django.test.client import _MonkeyPatchedWSGIResponse as Response


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _post(client: Client, version: Version, action: str, **data: object) -> Response:
    page = Page.objects.get(pk=version.page_id)
    live_number = page.live_version.number if page.live_version else 0
    payload = {"action": action, "expected_live_number": live_number, **data}
    return client.post(_url(version), payload)


def test_it_shows_the_diff_the_rendered_result_and_the_other_changes(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    parent = make_page("Policies")
    page = make_page("Refunds", "We refund within 30 days.\n", tags=["billing"])
    proposal = version_propose(
        actor=proposing_agent,
        page=page,
        title="Refund policy",
        body="We refund within 60 days.\n\n**Ask** support.\n",
        tags=["billing", "money"],
        parent=parent,
        change_summary="Longer refund window",
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    assert "We refund within <del>30</del> days." in html
    assert "We refund within <ins>60</ins> days." in html
    assert "<strong>Ask</strong> support." in html  # the rendered result
    assert "<del>Refunds</del><ins>Refund policy</ins>" in html
    assert '<ins class="tag rv-tag-added">money</ins>' in html
    assert "Parent page" in html and "Policies" in html
    assert "Longer refund window" in html and "docs-bot" in html


def test_it_marks_the_appended_blocks_on_the_live_page(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("FAQ", "Existing answer.\n")
    append = version_propose(
        actor=proposing_agent, page=page, kind="append", body="## New question\n\nNew answer."
    )
    html = _client(reviewer).get(_url(append)).content.decode()
    assert "The live page with the appended blocks" in html
    start = html.index('<div class="rv-appended"')
    assert "New answer." in html[start:]
    assert "Existing answer." in html[:start]


def test_it_warns_about_invisible_characters(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("Payments", "Pay to account 1234.\n")
    proposal = version_propose(
        actor=proposing_agent, page=page, body="Pay to account \u202e4321\u202c.\n"
    )
    html = _client(reviewer).get(_url(proposal)).content.decode()
    assert "This proposal contains invisible characters" in html
    assert "\u27e6U+202E\u27e7" in html
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in html
    clean = version_propose(actor=proposing_agent, page=make_page("Clean"), body="ok")
    assert "invisible characters" not in _client(reviewer).get(_url(clean)).content.decode()


def test_it_approves_with_a_comment(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Approve", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    response = _post(_client(reviewer), proposal, "approve", comment="Thanks!")
    assert response.status_code == 302
    current = live(page)
    assert current.pk == proposal.pk
    assert (current.decided_by, current.decision_comment) == (reviewer, "Thanks!")
    assert AuditEvent.objects.filter(action="version.approve", actor_user=reviewer).count() == 1


def test_it_records_the_author_and_the_editing_reviewer(
    make_page: Callable[..., Page], reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("Edit me", "old\n")
    proposal = version_propose(actor=proposing_agent, page=page, body="new with typo\n")
    response = _post(
        _client(reviewer),
        proposal,
        "edit",
        title="Edited title",
        tags="one, two",
        body="new without typo\n",
        comment="Fixed a typo.",
    )
    assert response.status_code == 302
    current = live(page)
    assert current.pk == proposal.pk
    assert (current.body, current.title, current.tags) == (
        "new without typo\n",
        "Edited title",
        ["one", "two"],
    )
    assert current.proposed_body == "new with typo\n"
    assert current.author_agent == proposing_agent and current.decided_by == reviewer
    assert current.edited_by_reviewer


def test_it_requires_a_reason_to_reject(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Reject", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    client = _client(reviewer)
    response = _post(client, proposal, "reject", comment="   ")
    assert response.status_code == 400
    assert "Give a reason" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    response = _post(client, proposal, "reject", comment="Cite a source.")
    assert response.status_code == 302
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decision_comment) == ("rejected", "Cite a source.")
    assert live(page).body == "old\n"


def test_it_leaves_one_decision_after_a_double_submit(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    page = make_page("Twice", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    first = _post(_client(reviewer), proposal, "approve")
    assert first.status_code == 302
    again = _post(_client(reviewer), proposal, "approve")
    other = _post(_client(second_reviewer), proposal, "reject", comment="No.")
    for response in (again, other):
        assert response.status_code == 409
        assert "already approved by rita" in response.content.decode()
        assert f"v{proposal.number} of “Twice” ({page.public_id})" in response.content.decode()
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("approved", reviewer)
    assert AuditEvent.objects.filter(action="version.approve").count() == 1
    assert AuditEvent.objects.filter(action="version.reject").count() == 0


def test_it_says_clearly_that_a_withdrawn_version_cannot_be_decided(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Withdrawn", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    version_withdraw(actor=reader, version=proposal)
    response = _post(_client(reviewer), proposal, "approve")
    assert response.status_code == 409
    assert "already withdrawn" in response.content.decode()
    assert live(page).body == "old\n"


@pytest.mark.parametrize("who", ["reader", "editor", "outsider", "author"])
@pytest.mark.parametrize("action", ["approve", "edit", "reject"])
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
    actor = {"reader": reader, "editor": editor, "outsider": outsider, "author": reviewer}[who]
    client = _client(actor)
    if who == "author":
        assert "your own proposal" in client.get(_url(proposal)).content.decode()
    response = _post(client, proposal, action, comment="x", title="T", body="hacked\n")
    if who == "outsider":
        # Not the author, a reviewer or an editor: the proposal's text is not theirs to see.
        assert response.status_code == 404
    else:
        assert response.status_code == 403
        # The editor lacks the role; the reader (who wrote it) and the author are its authors.
        reason = "nly members of Reviewers can decide" if who == "editor" else "your own proposal"
        assert reason in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(page).body == "old\n"


def test_it_sends_anonymous_visitors_to_log_in(
    make_page: Callable[..., Page], reader: User
) -> None:
    page = make_page("Anon", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    response = Client().post(_url(proposal), {"action": "approve", "expected_live_number": 1})
    assert response.status_code == 302 and "/login/" in response["Location"]
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW


def test_it_offers_and_approves_a_clean_merge(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    proposal = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    client = _client(reviewer)
    html = client.get(_url(proposal)).content.decode()
    assert "merge cleanly" in html and "Approve merged" in html
    assert _post(client, proposal, "approve").status_code == 302
    # The merged result goes live under the newest number; the proposal says where it went.
    current = live(page)
    proposal.refresh_from_db()
    assert (current.body, current.merged, current.number) == ("ALPHA\n\nbeta\n\nGAMMA\n", True, 4)
    assert proposal.merged_into_id == current.pk


def test_it_lets_the_reviewer_resolve_a_conflict_in_the_editor(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Conflict", "intro\n\nWe refund within 30 days.\n")
    proposal = version_propose(actor=reader, page=page, body="intro\n\nWe refund within 60 days.\n")
    version_propose(
        actor=editor, page=page, body="intro\n\nWe refund within 14 days.\n", publish=True
    )
    client = _client(reviewer)
    response = client.get(_url(proposal))
    html = response.content.decode()
    assert "both changed the same part" in html and "Approve merged" not in html
    assert "We refund within 14 days." in html and "We refund within 60 days." in html
    prefilled = response.context["edit_form"].initial["body"]
    assert "<<<<<<< live" in prefilled and ">>>>>>> proposal" in prefilled

    # Submitting the markers unchanged is refused with a clear message; nothing changes.
    refused = _post(client, proposal, "edit", title="Conflict", body=prefilled)
    assert refused.status_code == 400
    assert "conflict markers" in refused.content.decode()
    assert live(page).body == "intro\n\nWe refund within 14 days.\n"

    resolved = "intro\n\nWe refund within 45 days.\n"
    response = _post(client, proposal, "edit", title="Conflict", body=resolved)
    assert response.status_code == 302
    current = live(page)
    proposal.refresh_from_db()
    assert (current.body, current.edited_by_reviewer) == (resolved, True)
    assert proposal.merged_into_id == current.pk and current.number > proposal.number


def test_it_refuses_an_edit_made_against_a_live_version_that_moved_on(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Moving", "one\n")
    proposal = version_propose(actor=reader, page=page, body="two\n")
    seen = live(page).number
    version_propose(actor=editor, page=page, body="three\n", publish=True)
    response = _client(reviewer).post(
        _url(proposal),
        {"action": "edit", "expected_live_number": seen, "title": "Moving", "body": "mine\n"},
    )
    assert response.status_code == 409
    assert "changed to v3 while you were reviewing" in response.content.decode()
    assert live(page).body == "three\n"


def test_it_keeps_live_changes_the_reviewer_did_not_edit(
    make_page: Callable[..., Page],
    reader: User,
    editor: User,
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    page = make_page("Old title", "one\n\ntwo\n", tags=["a"])
    stale = version_propose(actor=reader, page=page, body="ONE\n\ntwo\n")
    append = version_propose(actor=proposing_agent, page=page, kind="append", body="three")
    version_propose(
        actor=editor,  # the editor renames the page meanwhile
        page=page,
        title="New title",
        tags=["a", "b"],
        publish=True,
    )
    version_approve(
        actor=reviewer,
        version=stale,
        edited_body="ONE!\n\ntwo\n",
        expected_live_number=live(page).number,
    )
    current = live(page)
    assert (current.title, current.tags, current.body) == ("New title", ["a", "b"], "ONE!\n\ntwo\n")
    version_approve(
        actor=reviewer, version=append, edited_body="three!", expected_live_number=current.number
    )
    current = live(page)
    assert (current.title, current.tags) == ("New title", ["a", "b"])
    assert current.body == "ONE!\n\ntwo\n\nthree!\n"


def test_it_approves_a_new_page_an_agent_proposed_and_offers_the_next_proposal(
    make_page: Callable[..., Page], reader: User, reviewer: User, proposing_agent: Agent
) -> None:
    created = page_create(
        # Titles refuse zero-width characters; a soft hyphen is still hidden and still shown.
        actor=proposing_agent,
        title="Brand \u00adnew",
        body="Fresh content.\n",
    )
    waiting = version_propose(actor=reader, page=make_page("Other"), body="x")
    client = _client(reviewer)
    html = client.get(_url(created)).content.decode()
    assert "Content of the new page" in html and "<ins>Fresh content.</ins>" in html
    assert '<h1 dir="auto">Brand <span class="invisible-char"' in html  # the hidden character shows
    response = client.post(_url(created), {"action": "approve", "expected_live_number": 0})
    assert response.status_code == 302
    page = Page.objects.get(pk=created.page_id)
    assert live(page).pk == created.pk
    # The next proposal opens at once, with the decision confirmed at the top.
    assert response["Location"] == f"/reviews/pages/{waiting.page.public_id}/v{waiting.number}/"
    html = client.get(response["Location"]).content.decode()
    assert "approved." in html and "Other" in html
