"""Nothing wider than the screen, with ordinary long data: long titles, long names, page ids.

Every screen is visited at 390 px and 1280 px in Debian's Chromium, checked with axe-core and
for sideways scrolling, of the document and of any box inside it (code blocks excepted).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from agents.services import agent_create, page_set_add
from core.actors import SystemActor
from reviews.actions.propose import version_propose
from tests.test_browser_team_scale import check_screen, log_in, sized_page
from wiki.models import Page

__all__ = ["sized_page"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]

LONG_TITLES = [
    "Customer escalation procedures for enterprise accounts in the Asia-Pacific region",
    "Internationalisation-and-localisation-configuration-reference-for-the-billing-service",
    "How the on-call rotation hands over between the Dublin, Singapore and Vancouver teams",
]


def check_narrow(page: Any, screenshots: Path, name: str) -> None:
    """check_screen: no sideways scroll of the document or of any box in it, axe, a screenshot."""
    check_screen(page, screenshots, name)


@pytest.fixture
def long_site(make_page: Callable[..., Page], reader: User, admin_user: User) -> dict[str, Any]:
    """A site with long titles three levels deep, a long-named agent and a proposal."""
    top = make_page(
        LONG_TITLES[0], "Start here.\n", tags=["supportescalationsasiapacificregionenterprise"]
    )
    middle = make_page(LONG_TITLES[1], "Settings.\n", parent=top)
    leaf = make_page(LONG_TITLES[2], "Hand over at 09:00 local time.\n", parent=middle)
    for n in range(3):
        make_page(f"{LONG_TITLES[2][:60]} appendix {n}", "More.\n", parent=middle)
    version_propose(actor=admin_user, page=leaf, body="Hand over at 10:00.\n", publish=True)
    version_propose(
        actor=reader,
        page=leaf,
        body="Hand over at 11:00 local time.\n",
        change_summary="Moved-the-handover-to-11:00-for-the-Vancouver-team's-mornings",
    )
    agent, _ = agent_create(
        actor=SystemActor("tests"),
        name="customersupportescalationtriageassistant_euwest_production_01",
        description="Answers escalations for enterprise accounts " * 3,
    )
    for page in (top, middle, leaf):
        page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    agent.can_edit_pages = True
    agent.save()
    version_propose(
        actor=agent, page=middle, body="Settings, reviewed.\n", change_summary="x" * 120
    )
    return {"top": top, "middle": middle, "leaf": leaf, "agent": agent}


def test_it_keeps_every_screen_within_the_width_with_long_titles_and_ids(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    long_site: dict[str, Any],
    admin_user: User,
    reviewer: User,
) -> None:
    from playwright.sync_api import expect

    admin_user.groups.add(*reviewer.groups.all())
    page, base = sized_page, live_server.url
    leaf: Page = long_site["leaf"]
    agent: Agent = long_site["agent"]
    log_in(page, base, admin_user.username)
    check_narrow(page, screenshots, "narrow-home")
    page.goto(f"{base}/p/{leaf.public_id}/")
    expect(page.locator("h1")).to_have_text(LONG_TITLES[2])
    check_narrow(page, screenshots, "narrow-page")
    # On a phone the page tree starts folded behind its "Pages" button; unfolded it fits.
    fold = page.locator("details.sidebar-fold")
    if page.width < 800:
        expect(fold).not_to_have_attribute("open", "")
        page.locator(".sidebar-fold > summary").click()
    expect(fold.locator(".tree a[aria-current=page]")).to_be_visible()
    check_narrow(page, screenshots, "narrow-page-tree")
    page.goto(f"{base}/reviews/pages/{long_site['middle'].public_id}/history/")
    check_narrow(page, screenshots, "narrow-history-agent")
    page.goto(f"{base}/reviews/pages/{leaf.public_id}/history/")
    check_narrow(page, screenshots, "narrow-history")
    page.goto(f"{base}/reviews/pages/{leaf.public_id}/compare/?a=1&b=2")
    check_narrow(page, screenshots, "narrow-compare")
    page.goto(f"{base}/agents/")
    expect(page.locator("main")).to_contain_text(agent.name)
    check_narrow(page, screenshots, "narrow-agents")
    page.goto(f"{base}/agents/{agent.pk}/")
    check_narrow(page, screenshots, "narrow-agent")
    page.goto(f"{base}/agents/{agent.pk}/preview/?q=hand&page={leaf.public_id}")
    check_narrow(page, screenshots, "narrow-agent-preview")
    page.goto(f"{base}/search/?q=escalation")
    check_narrow(page, screenshots, "narrow-search")
    page.goto(f"{base}/p/{leaf.public_id}/edit/")
    check_narrow(page, screenshots, "narrow-edit")
    # The Move screen's place select lists the siblings' long titles.
    page.goto(f"{base}/p/{leaf.public_id}/move/")
    expect(page.get_by_label(re.compile("^Show “"))).to_be_visible()
    check_narrow(page, screenshots, "narrow-move")
    page.goto(f"{base}/reviews/")
    check_narrow(page, screenshots, "narrow-queue")


def test_it_shows_quires_own_not_found_page_in_production_settings(
    live_server: Any, sized_page: Any, screenshots: Path, settings: Any, reader: User
) -> None:
    from playwright.sync_api import expect

    assert settings.DEBUG is False
    page, base = sized_page, live_server.url
    log_in(page, base, reader.username)
    response = page.goto(f"{base}/p/pg_zzzzzzzz/")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Page not found")
    expect(page.locator("header.topbar")).to_be_visible()
    check_narrow(page, screenshots, "narrow-404")
    response = page.goto(f"{base}/no/such/address/")
    assert response is not None and response.status == 404
    expect(page.locator("h1")).to_have_text("Page not found")
    check_narrow(page, screenshots, "narrow-404-address")
