"""The review page's GET writes nothing (docs/reviewing.md: "a GET never writes"); what the
page showed travels in its forms, and a decision on a diff that changed since is refused."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from reviews import workflows
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.models import DiffShown, ReviewVisit
from tests.conftest import live, open_review_page
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db

WRITES = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.I)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _writes(client: Client, url: str) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return [query["sql"] for query in queries.captured_queries if WRITES.match(query["sql"])]


def _shown(html: str) -> str:
    [token] = set(re.findall(r'name="shown" value="([0-9a-f]+)"', html))
    return token


def test_a_get_of_the_review_page_writes_nothing(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)

    # The first look, and a look again (a visit to move on before): no INSERT, no UPDATE.
    assert _writes(client, _url(proposal)) == []
    open_review_page(client, _url(proposal))
    assert _writes(client, _url(proposal)) == []
    # The author's own look, and the page of a decided proposal with its undo.
    assert _writes(_client(reader), _url(proposal)) == []
    version_approve(actor=reviewer, version=proposal)
    assert _writes(client, _url(proposal)) == []


def test_the_page_records_what_it_showed_only_when_it_says_it_was_shown(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Hours", "Open 9 to 5.\n")
    proposal = version_propose(actor=reader, page=page, body="Open 8 to 5.\n")
    client = _client(reviewer)
    html = client.get(_url(proposal)).content.decode()
    assert not ReviewVisit.objects.exists() and not DiffShown.objects.exists()

    # A digest the page did not show records presence, never "shown".
    seen = f"{_url(proposal)}seen/"
    assert client.post(seen, {"shown": "0" * 64}).status_code == 204
    assert ReviewVisit.objects.filter(user=reviewer).count() == 1
    assert not DiffShown.objects.exists()
    assert client.post(seen, {"shown": _shown(html)}).status_code == 204
    assert DiffShown.objects.filter(user=reviewer, version=proposal, where="page").count() == 1
    # Its digest is keyed to the person: another reviewer cannot send it as theirs.
    assert _client(reader).post(seen, {"shown": _shown(html)}).status_code == 204
    assert not DiffShown.objects.filter(user=reader).exists()


def _edited_meanwhile(
    make_page: Callable[..., Page], admin_user: User, reader: User, reviewer: User, client: Client
) -> tuple[Version, str]:
    """A proposal waiting on two approvals; the client's reviewer opens its page, then the
    first reviewer edits it and approves it (1 of 2). Returns it and the page as opened."""
    page = make_page("Refunds", "Refunds take five days.\n\nKeep the receipt.\n\nCall us.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Two eyes",
        steps=[{"name": "Review", "group": REVIEWERS, "approvals": 2}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=page)
    proposal = version_propose(
        actor=reader, page=page, body="Refunds take seven days.\n\nKeep the receipt.\n\nMail us.\n"
    )
    opened = client.get(_url(proposal)).content.decode()
    version_approve(
        actor=reviewer,
        version=proposal,
        edited_body="Refunds take thirty days.\n\nKeep the receipt.\n\nMail us.\n",
    )
    return proposal, opened


def test_it_refuses_a_decision_on_a_diff_that_changed_since_the_page_was_opened(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    reviewer: User,
    second_reviewer: User,
) -> None:
    client = _client(second_reviewer)
    proposal, opened = _edited_meanwhile(make_page, admin_user, reader, reviewer, client)
    page = proposal.page

    # The second approval would publish a text its reviewer was never shown: refused.
    response = client.post(
        f"{_url(proposal)}approve/",
        {"shown": _shown(opened), "expected_live_number": live(page).number, "step": 1},
    )
    assert response.status_code == 409
    html = response.content.decode()
    assert "The proposal changed since you opened it: review the new diff" in html
    assert "thirty" in html  # the page shows the diff as it is now
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(page).body.startswith("Refunds take five days.")
    assert not DiffShown.objects.filter(user=second_reviewer).exists()

    # Approved from the page showing the new diff, it goes live; what it showed is recorded.
    response = client.post(
        f"{_url(proposal)}approve/",
        {"shown": _shown(html), "expected_live_number": live(page).number, "step": 1},
    )
    assert response.status_code == 302
    assert live(page).body == "Refunds take thirty days.\n\nKeep the receipt.\n\nMail us.\n"
    assert DiffShown.objects.filter(user=second_reviewer, version=proposal).count() == 1


def test_it_refuses_a_part_approval_on_a_diff_that_changed_since(
    make_page: Callable[..., Page],
    admin_user: User,
    reader: User,
    reviewer: User,
    second_reviewer: User,
) -> None:
    client = _client(second_reviewer)
    proposal, opened = _edited_meanwhile(make_page, admin_user, reader, reviewer, client)

    response = client.post(
        f"{_url(proposal)}partial/",
        {
            "shown": _shown(opened),
            "expected_live_number": live(proposal.page).number,
            "step": 1,
            "refuse": "2",
            "confirm": "1",
        },
        follow=True,
    )
    assert "The proposal changed since you opened it" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(proposal.page).body.startswith("Refunds take five days.")
