"""Shared by the tests that credentials are refused: a token, a page around a line, and an
agent's proposal to comment on."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from reviews.actions.propose import version_propose
from wiki.models import Page, Version

# Made up, in GitHub's shape.
GITHUB = "ghp_aybhHitbwJuQ5gKeiOLS4GMtbtK4FEzkQxYI"


def paragraph(text: str) -> str:
    """The text as line 3 of a page: a heading, a blank line, the text, more prose."""
    return f"# Deploy notes\n\n{text}\n\nAsk the platform team if in doubt.\n"


@pytest.fixture
def agent_proposal(make_page: Callable[..., Page], make_user: Callable[..., User]) -> Version:
    """An agent's proposal waiting for a reviewer: "Refunds", five days made seven."""
    owner = make_user("owen")
    agent = Agent.objects.create(name="support-bot", owner=owner, can_edit_pages=True)
    page = make_page("Refunds", "Five days.\n")
    return version_propose(
        actor=agent, page=page, body="Seven days.\n", change_summary="Say seven."
    )
