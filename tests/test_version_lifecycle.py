"""The life of a version is stated once, on the model, and every door meets the same rule."""

from __future__ import annotations

from collections.abc import Callable
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from core.errors import Conflict
from core.models import AuditEvent
from reviews.actions.create import page_create
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.withdraw import version_withdraw
from wiki.models import Page, Version, VersionStatus

pytestmark = pytest.mark.django_db


def test_it_moves_a_proposal_out_of_review_once(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Old.\n")
    version = version_propose(actor=reader, page=page, body="New.\n", change_summary="x")
    version.move_to(VersionStatus.REJECTED, by=reviewer, comment="No.")
    assert version.status == VersionStatus.REJECTED and version.decided_by == reviewer
    for status in (VersionStatus.APPROVED, VersionStatus.WITHDRAWN, VersionStatus.IN_REVIEW):
        with pytest.raises(Conflict):
            version.move_to(status)
    assert version.status == VersionStatus.REJECTED


def test_it_refuses_to_approve_a_withdrawn_proposal_naming_its_state(
    make_page: Callable[..., Page], reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Old.\n")
    version = version_propose(actor=reader, page=page, body="New.\n", change_summary="x")
    version_withdraw(actor=reader, version=version)
    with pytest.raises(Conflict, match="already withdrawn"):
        version_approve(actor=reviewer, version=version)
    assert Version.objects.get(pk=version.pk).status == VersionStatus.WITHDRAWN


def test_it_refuses_an_append_to_a_page_that_is_not_live_with_the_same_words_everywhere(
    reader: User, editor: User
) -> None:
    draft = page_create(actor=reader, title="Draft", body="Body.\n")
    with pytest.raises(Conflict, match="not live yet, so there is nothing to append to"):
        version_propose(
            actor=editor, page=draft.page, kind="append", body="More.\n", change_summary="x"
        )


def test_it_records_the_command_line_as_a_named_system_actor(
    make_page: Callable[..., Page],
) -> None:
    page = make_page("Refunds", "Body.\n")
    call_command("create_agent", "cli-bot", "--page", page.public_id, stdout=StringIO())
    created = AuditEvent.objects.get(action="agent.create")
    assert created.actor_system == "create_agent command"
    assert created.actor_user is None and created.actor_agent is None
    added = AuditEvent.objects.get(action="page_set.add")
    assert added.actor_system == "create_agent command"
