"""No silent erase: a revision of one's own pending draft keeps the draft's base, whatever
live version it names, so approving it merges with what went live since."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User

from agents.models import Agent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from tests.conftest import live
from wiki.models import Page


def test_it_keeps_the_drafts_base_when_a_revision_names_the_newer_live_version(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    editor: User,
    reviewer: User,
) -> None:
    agent = Agent.objects.create(name="docs-bot", owner=make_user("owen"), can_edit_pages=True)
    page = make_page("Refunds", "Intro.\n\nRefunds take five days.\n\nOutro.\n")
    version_propose(actor=agent, page=page, body="Intro.\n\nRefunds take seven days.\n\nOutro.\n")
    # A person publishes meanwhile: the intro changes.
    version_propose(
        actor=editor,
        page=page,
        body="Welcome.\n\nRefunds take five days.\n\nOutro.\n",
        publish=True,
    )
    live_number = live(page).number
    # The agent revises its draft (the text get_page_source gave it) and passes the
    # liveVersion it was shown beside it as baseVersion.
    revision = version_propose(
        actor=agent,
        page=page,
        body="Intro.\n\nRefunds take seven working days.\n\nOutro.\n",
        base_number=live_number,
    )
    assert revision.base_version is not None and revision.base_version.number == 1
    version_approve(actor=reviewer, version=revision)
    # The person's edit survives: merged three-way, not erased.
    assert live(page).body == "Welcome.\n\nRefunds take seven working days.\n\nOutro.\n"
