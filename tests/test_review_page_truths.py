"""What the review screens say is what happens: tried as a new user would (issue 40).

A proposal written before its page moved does not claim approving moves it back; after an
Undo the message names the version that is live; a request for changes reaches its author
where they revise; a workflow without steps is refused in the browser's words; the REST list
filters by the workflow id /api/v1/workflows/ gives; the page's workflow line ends its sentence
without a stray space."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki.models import Page
from wiki.roles import REVIEWERS
from wiki.services import page_move

pytestmark = pytest.mark.django_db


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _text(html: str) -> str:
    """The words a reader sees: tags dropped (inline ones join their words), white space
    folded."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


def test_it_does_not_list_a_move_back_that_approving_will_not_make(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    engineering = make_page("Engineering", "Teams.\n")
    policies = make_page("Policies", "Rules.\n")
    page = make_page("Refunds", "Thirty days.\n", parent=engineering)
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    page_move(actor=editor, page=page, parent=policies)

    html = (
        _client(reviewer)
        .get(f"/reviews/pages/{page.public_id}/v{proposal.number}/")
        .content.decode()
    )

    assert "Parent page" not in html
    # It says where the page stays, since the proposal was written elsewhere.
    assert "written when the page was under Engineering" in _text(html)
    assert "approving keeps it under Policies" in _text(html)
    version_approve(actor=reviewer, version=proposal)
    page.refresh_from_db()
    assert page.parent_id == policies.pk and live(page).body == "Sixty days.\n"


def test_it_lists_a_move_the_proposal_itself_makes(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    engineering = make_page("Engineering", "Teams.\n")
    policies = make_page("Policies", "Rules.\n")
    page = make_page("Refunds", "Thirty days.\n", parent=engineering)
    proposal = version_propose(actor=reader, page=page, parent=policies)

    html = (
        _client(reviewer)
        .get(f"/reviews/pages/{page.public_id}/v{proposal.number}/")
        .content.decode()
    )

    assert "Parent page Engineering → Policies" in _text(html)


def test_it_names_the_version_live_after_an_undo(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    version_propose(actor=editor, page=page, body="Forty days.\n", publish=True)
    rejected = version_propose(actor=reader, page=page, body="Fifty days.\n")
    version_reject(actor=reviewer, version=rejected, comment="No.")
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    assert proposal.number == 4
    client = _client(reviewer)
    url = f"/reviews/pages/{page.public_id}/v4/"
    client.post(url, {"action": "approve", "expected_live_number": "2"})

    undone = _text(client.post(url, {"action": "undo"}, follow=True).content.decode())

    assert live(page).number == 2
    assert "readers and agents see v2 as before" in undone
    assert "see v4" not in undone


def test_it_shows_the_request_for_changes_where_its_author_revises(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    proposal = version_propose(actor=reader, page=page, body="Sixty days.\n")
    version_request_changes(
        actor=reviewer, version=proposal, comment="Say which cases the sixty days cover."
    )
    client = _client(reader)

    for url in (f"/p/{page.public_id}/", f"/p/{page.public_id}/edit/"):
        shown = _text(client.get(url).content.decode())
        assert (
            f"{reviewer.username} asked for changes to your proposal v{proposal.number}: "
            "“Say which cases the sixty days cover.”"
        ) in shown, url
    # Others reading the page do not get the author's conversation.
    assert "asked for changes" not in _text(
        _client(reviewer).get(f"/p/{page.public_id}/").content.decode()
    )


def test_it_shows_the_request_for_changes_on_a_new_page_waiting(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    parent = make_page("Policies", "Rules.\n")
    version = page_create(actor=reader, title="Lunch", body="Soup.\n", parent=parent)
    new = version.page
    version_request_changes(actor=reviewer, version=version, comment="Name the days.")

    shown = _text(_client(reader).get(f"/p/{new.public_id}/").content.decode())

    assert f"{reviewer.username} asked for changes to your proposal v1: “Name the days.”" in shown


def test_it_words_a_workflow_without_steps_for_the_browser(admin_user: User) -> None:
    response = _client(admin_user).post(
        "/reviews/workflows/", {"name": "Legal review", "step_1_group": "", "step_2_group": ""}
    )

    shown = _text(response.content.decode())
    assert response.status_code == 400
    assert "Give the workflow at least one step: choose a group" in shown
    assert '[{"name"' not in response.content.decode() and "[{&quot;name" not in shown


def test_it_filters_the_review_list_by_the_workflow_id_it_lists(
    make_page: Callable[..., Page], admin_user: User, make_user: Callable[..., User], reader: User
) -> None:
    make_user("lena", "Legal", REVIEWERS)
    root = make_page("Policies", "Rules.\n")
    page = make_page("Refunds", "Thirty days.\n", parent=root)
    other = make_page("Lunch", "Soup.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Legal review",
        steps=[{"name": "Legal", "group": "Legal", "approvals": 1}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    version_propose(actor=reader, page=page, body="Sixty days.\n")
    version_propose(actor=reader, page=other, body="Bread.\n")
    client = _client(admin_user)
    listed = client.get("/api/v1/workflows/").json()
    workflow_id = next(w["id"] for w in listed if w["name"] == "Legal review")

    by_id = client.get(f"/api/v1/reviews/?workflow={workflow_id}").json()
    by_name = client.get("/api/v1/reviews/?workflow=Legal review").json()

    assert by_id["count"] == 1 and by_id["results"][0]["pageId"] == page.public_id
    assert by_name["count"] == 1
    assert client.get("/api/v1/reviews/?workflow=999999").json()["count"] == 0


def test_it_ends_the_workflow_line_without_a_space_before_the_full_stop(
    make_page: Callable[..., Page], admin_user: User, reader: User
) -> None:
    root = make_page("Policies", "Rules.\n")
    page = make_page("Refunds", "Thirty days.\n", parent=root)
    lone = make_page("Lunch", "Soup.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Legal review",
        steps=[{"name": "Review", "group": REVIEWERS, "approvals": 1}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)

    for user in (admin_user, reader):
        for shown in (page, root, lone):
            line = re.search(
                r'<p class="muted small page-workflow">(.*?)</p>',
                _client(user).get(f"/p/{shown.public_id}/").content.decode(),
                re.S,
            )
            assert line is not None
            words = _text(line.group(1))
            assert words.endswith(".") and not words.endswith(" ."), words
            assert re.search(r"\s\.", words) is None, words


def test_it_leaves_no_stray_mark_inside_a_changed_list() -> None:
    from lxml import html as lxml_html

    from reviews.rendered_diff import rendered_diff
    from wiki.markdown import render_markdown

    old = render_markdown("> Search files.\n\n- Search for a pattern within files:\n")
    new = render_markdown("> Find patterns in files.\n\n- Search for a pattern in files:\n")

    marked = lxml_html.fragment_fromstring(str(rendered_diff(old, new).html), create_parent="div")

    lists = marked.xpath("//ul | //ol")
    assert lists and all(child.tag == "li" for item in lists for child in item)
    assert marked.xpath("//ins") and marked.xpath("//del")
