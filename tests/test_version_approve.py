"""Approving proposals: appends land on top, stale replaces are never approved blindly."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from core.errors import Conflict, Forbidden
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from tests.conftest import live
from wiki.models import Page, VersionStatus


def test_it_makes_the_approved_version_live(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Approve me", "old\n")
    proposal = version_propose(actor=reader, page=page, body="new\n")
    version_approve(actor=reviewer, version=proposal, comment="fine")
    current = live(page)
    assert current.pk == proposal.pk
    assert current.body == "new\n"
    assert current.decided_by == reviewer


def test_it_lands_an_append_on_top_of_a_later_change(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Appendix", "first paragraph\n")
    append = version_propose(actor=reader, page=page, kind="append", body="appended paragraph")
    version_propose(actor=editor, page=page, body="rewritten paragraph\n", publish=True)
    version_approve(actor=reviewer, version=append)
    assert live(page).body == "rewritten paragraph\n\nappended paragraph\n"


def test_it_refuses_a_stale_replace_that_conflicts(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Stale", "line one\n")
    proposal = version_propose(actor=reader, page=page, body="line from reader\n")
    version_propose(actor=editor, page=page, body="line from editor\n", publish=True)
    with pytest.raises(Conflict) as info:
        version_approve(actor=reviewer, version=proposal)
    assert info.value.detail["conflicts"]
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.IN_REVIEW
    assert live(page).body == "line from editor\n"


def test_it_merges_a_stale_replace_whose_changes_do_not_overlap(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    proposal = version_propose(actor=reader, page=page, body="ALPHA\n\nbeta\n\ngamma\n")
    version_propose(actor=editor, page=page, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    version_approve(actor=reviewer, version=proposal)
    current = live(page)
    assert current.body == "ALPHA\n\nbeta\n\nGAMMA\n"
    assert current.merged


def test_it_refuses_the_author_and_non_reviewers(
    make_page: Callable[..., Page], reader: User, editor: User, reviewer: User
) -> None:
    page = make_page("Rights")
    own = version_propose(actor=reviewer, page=page, body="mine")
    with pytest.raises(Forbidden):
        version_approve(actor=reviewer, version=own)
    theirs = version_propose(actor=reader, page=page, body="theirs")
    for actor in (reader, editor):
        with pytest.raises(Forbidden):
            version_approve(actor=actor, version=theirs)


def test_it_refuses_to_decide_twice(
    make_page: Callable[..., Page], reader: User, reviewer: User, second_reviewer: User
) -> None:
    page = make_page("Twice")
    proposal = version_propose(actor=reader, page=page, body="x")
    version_approve(actor=reviewer, version=proposal)
    with pytest.raises(Conflict):
        version_reject(actor=second_reviewer, version=proposal, comment="no")


def test_it_reverts_to_an_earlier_version(make_page: Callable[..., Page], editor: User) -> None:
    page = make_page("Revert", "v1\n")
    first = live(page)
    version_propose(actor=editor, page=page, body="v2\n", publish=True)
    reverted = page_revert(actor=editor, page=page, to_version=first)
    assert live(page).pk == reverted.pk
    assert reverted.body == "v1\n"
    assert reverted.number == 3
    assert reverted.reverted_from == first
