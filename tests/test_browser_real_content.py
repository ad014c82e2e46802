"""Every screen with real content, at a phone's 390 px and a laptop's 1280 px (issue 40).

The site holds the 18F handbook and a slice of the tldr pages (tests/fixtures_real_site.py),
long titles, agents with long names and full page sets, a two-step workflow and proposals in
every state. On each screen nothing scrolls sideways (the document, or any box in it but
code) and axe-core finds nothing serious; at desktop widths the queue gives the change more
than half its width, and the page tree's column runs the whole length of a long page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group

from tests.fixtures_real_site import RealSite, build_real_site, every_state
from tests.test_browser_team_scale import check_screen, log_in, open_menu

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


@pytest.fixture
def real_site(transactional_db: Any, tmp_path: Path) -> RealSite:
    return build_real_site(tmp_path)


@pytest.fixture
def sized(chromium: Any) -> Iterator[Any]:
    """Opens a tab of the given width; each is closed when the test ends."""
    contexts: list[Any] = []

    def open_tab(width: int, height: int = 860) -> Any:
        context = chromium.new_context(viewport={"width": width, "height": height})
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.width = width
        return page

    yield open_tab
    for context in contexts:
        context.close()


def _screens(site: RealSite) -> dict[str, str]:
    pages = {name: page.public_id for name, page in site.pages.items()}
    bot, everything = site.agents["bot"].pk, site.agents["everything"].pk
    screens = {
        "home": "/",
        "page-long": f"/p/{pages['long']}/",
        "page-tldr": f"/p/{pages['tar']}/",
        "page-workflow": f"/p/{pages['policies']}/",
        "page-new-waiting": f"/p/{site.proposals['new_page'].page.public_id}/",
        "history": f"/reviews/pages/{pages['leaf']}/history/",
        "compare": f"/reviews/pages/{pages['leaf']}/compare/?a=2&b=9",
        "queue": "/reviews/",
        "workflows": "/reviews/workflows/",
        "workflow": f"/reviews/workflows/{site.workflow_id}/",
        "agents": "/agents/",
        "agent": f"/agents/{bot}/",
        "agent-every-page": f"/agents/{everything}/",
        "agent-preview": f"/agents/{bot}/preview/?q=tar+archive&page={pages['tar']}",
        "search": "/search/?q=tar+archive",
        "edit": f"/p/{pages['long']}/edit/",
        "append": f"/p/{pages['tar']}/append/",
        "move": f"/p/{pages['leaf']}/move/",
        "new": f"/p/{pages['top']}/new-child/",
        "connections": "/oauth/connections/",
        # The team's own administration (issue 39) and a section's access (issue 36).
        "people": "/people/",
        "person": f"/people/{site.reader.pk}/",
        "groups": "/groups/",
        "group": f"/groups/{Group.objects.get(name='Reviewers').pk}/",
        "inbox": "/inbox/",
        "access": f"/p/{pages['policies']}/access/",
    }
    # Every state but two whose review page looks like the fresh edit's (the queue shows them).
    repeats = {"one_click", "own"}
    states = every_state(site).items()
    screens.update({f"review-{state}": url for state, url in states if state not in repeats})
    return screens


def test_it_fits_every_screen_of_a_real_site_at_390_and_1280(
    live_server: Any, sized: Any, screenshots: Path, real_site: RealSite
) -> None:
    """Every screen at both widths; at desktop widths also the queue's room for the change
    (1280 to 1920 px) and the page tree's column on a long page. One site for all: it takes
    a while to build."""
    for width in (390, 1280):
        check_every_screen(live_server.url, sized, screenshots, real_site, width)
    check_the_queue_gives_the_change_room(live_server.url, sized, screenshots, real_site)
    check_the_page_trees_column_runs_the_whole_page(live_server.url, sized, screenshots, real_site)


def check_every_screen(
    base: str, sized: Any, screenshots: Path, real_site: RealSite, width: int
) -> None:
    """As the admin, every screen; as the author whose proposal came back, the page and the
    form; as a member of the workflow's first step, the queue."""
    from playwright.sync_api import expect

    page = sized(width)
    log_in(page, base, real_site.admin.username)
    for name, url in _screens(real_site).items():
        response = page.goto(base + url)
        assert response is not None and response.status == 200, (name, url)
        check_screen(page, screenshots, f"real-{name}")
    # The page tree unfolded on a phone, with the whole handbook in it.
    page.goto(f"{base}/p/{real_site.pages['long'].public_id}/")
    if width < 800:
        page.locator(".sidebar-fold > summary").click()
        open_menu(page)
    check_screen(page, screenshots, "real-page-tree-and-menu")

    # The author whose proposal came back sees why, on the page and in the form.
    reader = sized(width)
    log_in(reader, base, real_site.reader.username)
    asked = real_site.proposals["changes_requested"].page
    for name, url in (
        ("asked", f"/p/{asked.public_id}/"),
        ("asked-edit", f"/p/{asked.public_id}/edit/"),
    ):
        reader.goto(base + url)
        expect(reader.locator(".changes-asked")).to_contain_text("asked for changes")
        check_screen(reader, screenshots, f"real-{name}")

    # A member of the workflow's first step: "Awaiting your review" over the others.
    lawyer = sized(width)
    log_in(lawyer, base, "luis")
    lawyer.goto(f"{base}/reviews/")
    expect(lawyer.locator(".rv-queue-group").first).to_have_text("Awaiting your review")
    check_screen(lawyer, screenshots, "real-queue-lawyer")


def _queue_columns(page: Any) -> dict[str, float]:
    return dict(
        page.evaluate(
            """() => {
            const table = document.querySelector('table.rv-queue');
            const cells = [...table.querySelectorAll('tbody tr.rv-row > td:first-child')];
            return {
                table: table.getBoundingClientRect().width,
                head: table.querySelector('thead th').getBoundingClientRect().width,
                narrowest: Math.min(...cells.map((c) => c.getBoundingClientRect().width)),
                rows: cells.length,
                document: document.documentElement.scrollWidth,
            };
        }"""
        )
    )


def check_the_queue_gives_the_change_room(
    base: str, sized: Any, screenshots: Path, real_site: RealSite
) -> None:
    """From 1280 to 1920 px the first column, the page and its change, is at least half the
    queue's width, in every row; a reason box opens without widening a column."""
    for width in (1280, 1440, 1920):
        page = sized(width)
        log_in(page, base, real_site.admin.username)
        page.goto(f"{base}/reviews/")
        columns = _queue_columns(page)
        assert columns["rows"] >= 10 and columns["document"] <= width, columns
        assert columns["head"] >= 0.5 * columns["table"], (width, columns)
        assert columns["narrowest"] >= 0.5 * columns["table"], (width, columns)
        # A reason box opens over the row: the columns stay as they were.
        page.locator(".rv-row-reject > summary").first.click()
        reason = page.locator(".rv-row-reject[open] input[name=comment]")
        assert reason.bounding_box()["width"] >= 250
        assert _queue_columns(page)["head"] == columns["head"]
        check_screen(page, screenshots, "real-queue-desktop")


def check_the_page_trees_column_runs_the_whole_page(
    base: str, sized: Any, screenshots: Path, real_site: RealSite
) -> None:
    """The tree's column (and its background) is as long as the page, and the tree stays in
    view when the page is scrolled to its end."""
    page = sized(1280, 800)
    log_in(page, base, real_site.admin.username)
    page.goto(f"{base}/p/{real_site.pages['long'].public_id}/")
    heights = page.evaluate(
        """() => ({
            sidebar: document.querySelector('.sidebar').getBoundingClientRect().height,
            main: document.querySelector('main').getBoundingClientRect().height,
            screen: innerHeight,
        })"""
    )
    assert heights["main"] > 3 * heights["screen"], heights  # a long page indeed
    assert heights["sidebar"] >= heights["main"] - 1, heights
    # Scrolled to its end, the tree is still in view beside the text.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    box = page.locator(".sidebar-fold").bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= heights["screen"], box
    page.screenshot(path=str(screenshots / "real-long-page-end-1280.png"))
