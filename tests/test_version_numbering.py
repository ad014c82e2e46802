"""Version numbers run forwards: the live version is always the page's newest number.

A proposal approved after a newer version went live (a stale replace merged, an append
landing on later changes) goes live as a new version; the proposal keeps its own number,
approved and "merged into" the new one.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from core.errors import InvalidArgument
from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus

pytestmark = pytest.mark.django_db


def _numbers(page: Page) -> list[tuple[int, str]]:
    return list(page.versions.order_by("number").values_list("number", "status"))


def test_it_publishes_a_merged_stale_proposal_as_the_newest_number(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    assert (stale.number, live(page).number) == (2, 3)

    returned = version_approve(actor=reviewer, version=stale, comment="Fine.")

    now = live(page)
    assert now.number == 4 and now.body == "ALPHA\n\nbeta\n\nGAMMA\n"
    assert (now.status, now.merged, now.decided_by, now.author_user) == (
        VersionStatus.APPROVED,
        True,
        reviewer,
        reader,
    )
    assert now.base_version is not None and now.base_version.number == 3
    stale.refresh_from_db()
    assert returned.pk == stale.pk and stale.merged_into_id == now.pk
    assert (
        stale.status == VersionStatus.APPROVED and stale.proposed_body == "ALPHA\n\nbeta\n\ngamma\n"
    )
    assert _numbers(page) == [(1, "approved"), (2, "approved"), (3, "approved"), (4, "approved")]
    page.refresh_from_db()
    assert page.last_version_number == 4
    event = AuditEvent.objects.get(action="version.approve")
    assert (event.version_number, event.data["published_as"]) == (2, 4)


def test_it_publishes_an_append_over_later_changes_as_the_newest_number(
    make_page: Callable[..., Page], editor: User, reviewer: User, proposing_agent: Agent
) -> None:
    page = make_page("FAQ", "Q1?\n")
    append = version_propose(actor=proposing_agent, page=page, kind="append", body="Q2?")
    version_propose(actor=editor, page=page, body="Q1? Yes.\n", publish=True)
    version_approve(actor=reviewer, version=append)
    now = live(page)
    assert (now.number, now.body, now.author_agent) == (4, "Q1? Yes.\n\nQ2?\n", proposing_agent)
    append.refresh_from_db()
    assert append.merged_into_id == now.pk


def test_it_keeps_the_number_of_a_proposal_written_against_what_is_live(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Fresh", "one\n")
    proposal = version_propose(actor=reader, page=page, body="two\n")
    version_approve(actor=reviewer, version=proposal)
    assert live(page).pk == proposal.pk and Version.objects.filter(page=page).count() == 2


def test_it_shows_merged_into_in_the_history_and_offers_no_revert_to_it(
    make_page: Callable[..., Page],
    editor: User,
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    version_approve(actor=reviewer, version=stale)
    html = client_as(editor).get(f"/reviews/pages/{page.public_id}/history/").content.decode()
    assert "merged into v4" in html
    assert "Revert to v2" not in html and "Revert to v3" in html and "Revert to v4" not in html
    # The live one is the newest: listed first.
    assert html.index(">v4</a>") < html.index(">v3</a>") < html.index(">v2</a>")
    stale.refresh_from_db()
    with pytest.raises(InvalidArgument, match="merged with newer changes as v4; revert to v4"):
        page_revert(actor=editor, page=page, to_version=stale)


def test_it_says_where_the_merged_proposal_went_live(
    make_page: Callable[..., Page],
    editor: User,
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    client = client_as(reviewer)
    response = client.post(
        f"/reviews/pages/{page.public_id}/v{stale.number}/",
        {"action": "approve", "expected_live_number": "3"},
        follow=True,
    )
    assert "It went live as v4, together with the changes published since it was written." in (
        response.content.decode()
    )


def test_it_tells_the_api_where_a_merged_proposal_went_live(
    make_page: Callable[..., Page],
    editor: User,
    reader: User,
    reviewer: User,
    client_as: Callable[[User], Client],
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    client = client_as(reviewer)
    approved = client.post(
        f"/api/v1/pages/{page.public_id}/versions/{stale.number}/approve",
        {},
        content_type="application/json",
    )
    assert approved.status_code == 200, approved.content
    assert (approved.json()["number"], approved.json()["mergedInto"]) == (2, 4)
    listed = client.get(f"/api/v1/pages/{page.public_id}/versions/").json()
    rows = listed["results"] if isinstance(listed, dict) else listed
    by_number = {row["number"]: row for row in rows}
    assert by_number[2]["mergedInto"] == 4 and by_number[4]["live"] is True
    assert by_number[4]["mergedInto"] is None
