"""Both ways back from approved are in Version.TRANSITIONS (issue 50): an approval taken back
in time reopens the proposal and removes the copy it went live as; no other path takes them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from core.errors import Conflict
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.undo import version_approve_undo
from wiki.models import Page, Version, VersionStatus

pytestmark = pytest.mark.django_db


def test_it_states_both_ways_back_from_approved_in_the_table() -> None:
    assert Version.TRANSITIONS[VersionStatus.APPROVED] == {VersionStatus.IN_REVIEW, Version.REMOVED}
    for status in (VersionStatus.REJECTED, VersionStatus.WITHDRAWN):
        assert Version.TRANSITIONS[status] == frozenset()


def test_it_takes_the_ways_back_only_through_reopen_and_remove(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Old.\n")
    version = version_propose(actor=reader, page=page, body="New.\n", change_summary="x")
    version_approve(actor=reviewer, version=version)
    version.refresh_from_db()
    with pytest.raises(ValueError, match="reopen"):
        version.move_to(VersionStatus.IN_REVIEW)
    with pytest.raises(Conflict, match="already approved"):
        version.move_to(VersionStatus.REJECTED)
    undone = version_approve_undo(actor=reviewer, version=version)
    assert undone.status == VersionStatus.IN_REVIEW
    with pytest.raises(Conflict):
        undone.remove()  # a waiting proposal is never deleted
    assert Version.objects.filter(pk=undone.pk).exists()
