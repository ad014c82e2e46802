"""The reviewer's and the admin's day in Debian's Chromium, on a phone (390 px) and a laptop
(1280 px): no sideways scroll, no serious or critical axe-core violation, a screenshot of each
screen under test-artifacts/screenshots/."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent, PageSetEntry
from agents.services import agent_create
from core.actors import SystemActor
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from tests.conftest import live
from tests.fixtures_mcp import rpc_tool
from tests.waits import BROWSER_TIMEOUT_MS
from wiki.models import Page, Version, VersionStatus

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]

PASSWORD = "correct-horse-battery"
WIDTHS = [390, 1280]
BLOCKING = {"serious", "critical"}


@pytest.fixture(params=WIDTHS, ids=lambda width: f"{width}px")
def sized_page(request: pytest.FixtureRequest, chromium: Any) -> Iterator[Any]:
    width = request.param
    context = chromium.new_context(viewport={"width": width, "height": 860})
    page = context.new_page()
    page.set_default_timeout(BROWSER_TIMEOUT_MS)
    page.width = width  # the screenshots and checks name the width
    try:
        yield page
    finally:
        context.close()


# Boxes that may scroll sideways inside themselves (code, the editor's text area); they must
# still fit the screen.
WIDE_ON_PURPOSE = "pre, textarea"


def check_screen(page: Any, screenshots: Path, name: str) -> None:
    """No sideways scroll (of the document, or of any box inside it but code), no serious or
    critical axe violation, and a screenshot."""
    from axe_playwright_python.sync_playwright import Axe

    page.wait_for_load_state("load")
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{name} at {page.width}px scrolls sideways by {overflow}px"
    offenders = page.evaluate(
        """(skip) => {
        const width = document.documentElement.clientWidth;
        // What a closed <details> holds is not shown.
        const folded = 'details:not([open]) > :not(summary)';
        // Visually hidden text (for screen readers) is clipped to nothing: it takes no room.
        const clipped = (el) => {
            for (let a = el; a && a !== document.body; a = a.parentElement) {
                const clip = getComputedStyle(a).clip;
                if (clip && clip !== 'auto') return true;
            }
            return false;
        };
        const found = [];
        for (const el of document.body.querySelectorAll('*')) {
            const inner = el.parentElement && el.parentElement.closest(skip);
            if (inner || clipped(el) || el.closest(folded)) continue;
            const style = getComputedStyle(el);
            if (style.display === 'none' || style.visibility === 'hidden') continue;
            const box = el.getBoundingClientRect();
            if (box.width === 0 || box.height === 0) continue;
            const scrolls = !el.matches(skip) && ['auto', 'scroll'].includes(style.overflowX)
                && el.scrollWidth > el.clientWidth + 1;
            // Text that runs out of its box (a long word) sticks out although the box fits.
            const spills = style.overflowX === 'visible' && style.display !== 'inline'
                && box.left + el.scrollWidth > width + 1;
            if (scrolls || spills || box.right > width + 1) {
                const label = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
                    + (el.className && typeof el.className === 'string'
                       ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
                const right = Math.max(box.right, box.left + el.scrollWidth);
                found.push(label + ' ' + Math.round(scrolls ? el.scrollWidth : right));
            }
        }
        return found.slice(0, 8);
    }""",
        WIDE_ON_PURPOSE,
    )
    assert offenders == [], f"{name} at {page.width}px: wider than the screen: {offenders}"
    results = Axe().run(page)
    blocking = [
        (violation["id"], violation["impact"], [node["target"] for node in violation["nodes"]][:3])
        for violation in results.response["violations"]
        if violation["impact"] in BLOCKING
    ]
    assert blocking == [], f"{name} at {page.width}px: {blocking}"
    path = screenshots / f"{name}-{page.width}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 5_000


def log_in(page: Any, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/$"))


def open_menu(page: Any) -> None:
    """On a phone the top bar folds behind its Menu button."""
    toggle = page.locator(".menu-toggle")
    if toggle.is_visible():
        toggle.click()


def test_it_walks_the_reviewers_day(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    reader: User,
    editor: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    tools = make_page("Tools", "Everything we use.\n")
    shipping = make_page("Shipping", "Parcels leave within 2 days.\n\nTracking is emailed.\n")
    faq = make_page("FAQ", "## Returns\n\nWithin 30 days.\n")
    payments = make_page("Payments", "Pay to account 1234.\n")
    merge = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    slack = make_page("Slack", "Chat here.\n", parent=tools)
    quick = version_propose(
        actor=proposing_agent,
        page=shipping,
        body="Parcels leave within 1 day.\n\nTracking is emailed.\n",
        change_summary="Faster dispatch",
    )
    sneaky = version_propose(
        actor=reader,
        page=payments,
        body="Pay to account \u202e4321\u202c.\n",
        change_summary="New account",
    )
    appended = version_propose(
        actor=proposing_agent,
        page=faq,
        kind="append",
        body="## Shipping\n\nOne day.",
        change_summary="Add a shipping answer",
    )
    stale = version_propose(
        actor=reader, page=merge, body="ALPHA\n\nbeta\n\ngamma\n", change_summary="Shout alpha"
    )
    version_propose(actor=editor, page=merge, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    on_slack = version_propose(
        actor=proposing_agent, page=slack, body="Chat here, politely.\n", change_summary="Manners"
    )

    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")
    rows = page.locator("table.rv-queue tbody tr.rv-row")
    expect(rows).to_have_count(5)
    expect(rows.nth(1).locator(".rv-badge-invisible")).to_be_visible()
    expect(rows.nth(3).locator(".rv-badge-stale")).to_be_visible()
    check_screen(page, screenshots, "review-queue")

    # Filter by title, then by path prefix, author and kind (on a phone the filters fold).
    if page.width < 800:
        page.locator(".rv-filter-summary").click()
    page.fill("#f-title", "ship")
    page.locator(".rv-filters button[type=submit]").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Shipping")
    page.goto(f"{base}/reviews/?path=tools")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Slack")
    page.goto(f"{base}/reviews/?author=docs-bot&kind=append")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("FAQ")
    check_screen(page, screenshots, "review-queue-filtered")

    # Approve a small fresh change with one click from its row.
    page.goto(f"{base}/reviews/")
    rows.first.locator(".rv-row-approve button").click()
    expect(page.locator(".messages")).to_contain_text("approved")
    expect(rows).to_have_count(4)
    assert live(shipping).pk == quick.pk

    # Reject with the reason typed in the row.
    row = page.locator("tr.rv-row", has_text="Payments")
    row.locator("summary.rv-reject-button").click()
    row.locator("input[name=comment]").fill("The account number hides a right-to-left override.")
    row.locator("button.rv-reject-submit").click()
    expect(page.locator(".messages")).to_contain_text("rejected")
    expect(rows).to_have_count(3)
    sneaky.refresh_from_db()
    assert sneaky.status == VersionStatus.REJECTED
    assert "right-to-left override" in sneaky.decision_comment

    # The stale proposal: the diff is the merge against live; on a phone it starts inline and
    # the decision buttons stay at hand.
    page.goto(f"{base}/reviews/pages/{merge.public_id}/v{stale.number}/")
    expect(page.locator("#text-title")).to_contain_text("What approving applies")
    if page.width < 800:
        expect(page.locator("#text .rv-inline")).to_be_visible()
        expect(page.locator("#text table.rv-sbs")).to_be_hidden()
        expect(page.locator(".rv-decide-bar .rv-approve-button")).to_be_in_viewport()
    else:
        expect(page.locator("#text table.rv-sbs")).to_be_visible()
    expect(page.locator(".rv-rendered-diff .rv-block-added").first).to_contain_text("ALPHA")
    check_screen(page, screenshots, "review-stale-merge")

    # The append opens with the added blocks in view, the live page folded above.
    page.goto(f"{base}/reviews/pages/{faq.public_id}/v{appended.number}/")
    expect(page.locator("#appended")).to_contain_text("One day.")
    expect(page.locator(".rv-live-above")).not_to_have_attribute("open", "")
    check_screen(page, screenshots, "review-append")

    # Keyboard only for whole decisions: j selects the first row, Enter opens it, a twice
    # approves and the next proposal opens; r goes to the reason, Tab to Reject, Enter rejects.
    page.goto(f"{base}/reviews/")
    page.keyboard.press("j")
    expect(rows.first).to_have_class(re.compile("rv-row-current"))
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/reviews/pages/{faq.public_id}/v{appended.number}/$"))
    # `a` asks first: the Approve button comes into view with a note; `a` again approves.
    page.keyboard.press("a")
    expect(page.locator("#rv-approve-armed")).to_contain_text("Press a again")
    expect(page.locator("#approve-form button[type=submit]")).to_be_focused()
    assert live(faq).pk != appended.pk
    page.keyboard.press("a")
    page.wait_for_url(re.compile(rf"/reviews/pages/{merge.public_id}/v{stale.number}/$"))
    expect(page.locator(".messages")).to_contain_text("approved")
    assert live(faq).pk == appended.pk
    page.keyboard.press("r")
    expect(page.locator("#id_reject_comment")).to_be_focused()
    page.keyboard.type("Alpha is fine in lower case.")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"/reviews/pages/{slack.public_id}/v{on_slack.number}/$"))
    stale.refresh_from_db()
    assert (stale.status, stale.decision_comment) == (
        VersionStatus.REJECTED,
        "Alpha is fine in lower case.",
    )
    check_screen(page, screenshots, "review-proposal")

    # The page's history and the page itself, in the same chrome.
    page.goto(f"{base}/reviews/pages/{faq.public_id}/history/")
    expect(page.locator("nav.breadcrumbs")).to_contain_text("FAQ")
    check_screen(page, screenshots, "history")
    page.goto(f"{base}/p/{faq.public_id}/")
    expect(page.locator("article")).to_contain_text("One day.")
    open_menu(page)
    expect(page.locator(".topnav")).to_contain_text("Reviews")
    check_screen(page, screenshots, "wiki-page")


def test_it_walks_the_editors_form_with_its_preview(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    editor: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    page_row = make_page("Refunds", "We refund within 30 days.\n")
    version_propose(actor=proposing_agent, page=page_row, body="Sixty days.\n")
    page, base = sized_page, live_server.url
    log_in(page, base, editor.username)
    page.goto(f"{base}/p/{page_row.public_id}/edit/")
    expect(page.locator(".notice-pending")).to_contain_text("1 proposal is waiting")
    page.fill("textarea[name=body]", "# Refunds\n\nWe refund within **45** days.\n\n# Exceptions\n")
    expect(page.locator(".preview-output strong")).to_have_text("45")
    expect(page.locator(".preview-output h2")).to_have_text("Exceptions")
    check_screen(page, screenshots, "wiki-edit")

    # A refused save keeps the text: someone published meanwhile, so the save is refused
    # with a way to compare, and the text typed is still in the form.
    version_propose(actor=editor, page=page_row, body="Meanwhile.\n", publish=True)
    page.locator("form.page-form button[type=submit]").click()
    expect(page.locator(".form-errors-link")).to_contain_text("Compare")
    expect(page.locator("textarea[name=body]")).to_have_value(re.compile(r"\*\*45\*\*"))

    # Text typed and left unsaved is offered back on the next visit.
    page.fill("textarea[name=body]", "Text I never saved.")
    page.goto(f"{base}/p/{page_row.public_id}/edit/")
    page.locator(".draft-restore-button").click()
    expect(page.locator("textarea[name=body]")).to_have_value("Text I never saved.")

    # A new page under a parent chosen by typing part of its title.
    page.goto(f"{base}/new/")
    page.fill("input[name=title]", "Refund exceptions")
    page.fill("#id_parent_search", "refu")
    page.locator("#parent-options [role=option]", has_text="Refunds").click()
    page.fill("textarea[name=body]", "Sale items.")
    check_screen(page, screenshots, "wiki-new")
    page.locator("form.page-form button[type=submit]").click()
    expect(page.locator("nav.breadcrumbs")).to_contain_text("Refunds")
    assert Page.objects.get(title="Refund exceptions").parent_id == page_row.pk

    # A GET of a POST-only address: a page that says what to do, in the same chrome.
    page.goto(f"{base}/p/{page_row.public_id}/archive/")
    expect(page.locator("h1")).to_contain_text("does not take a GET request")
    check_screen(page, screenshots, "error-405")


def test_it_walks_the_admins_day(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    admin_user: User,
) -> None:
    from playwright.sync_api import expect

    support = make_page("Support desk", "How the support desk works.\n")
    make_page("Refund answers", "Refunds take five days.\n", parent=support)
    make_page("Escalation", "Page the on-call.\n", parent=support)
    for i in range(30):
        make_page(f"Pricing plan {i:02d}", "Prices.\n", tags=["pricing"])
    agent_create(actor=SystemActor("tests"), name="old-bot")
    page, base = sized_page, live_server.url
    log_in(page, base, admin_user.username)

    page.goto(f"{base}/agents/")
    check_screen(page, screenshots, "agents-list")
    page.goto(f"{base}/agents/new/")
    expect(page.locator("#id_owner option:checked")).to_have_text(admin_user.username)
    page.fill("#id_name", "support-bot")
    check_screen(page, screenshots, "agents-new")
    page.locator("form.ag-form button[type=submit]").click()
    page.wait_for_url(re.compile(r"/agents/\d+/token/$"))
    token = page.input_value("#agent-token")
    agent = Agent.objects.get(name="support-bot")
    assert agent.owner == admin_user and token.startswith("qa_")
    check_screen(page, screenshots, "agent-token")
    page.reload()
    expect(page.locator("body")).not_to_contain_text(token)
    expect(page.locator(".banner-info")).to_contain_text("cannot be shown again")
    assert Agent.objects.get(pk=agent.pk).token_hash == agent.token_hash

    # Add a whole subtree by typing part of its title into the picker.
    page.goto(f"{base}/agents/{agent.pk}/")
    page.fill("#id_page_search", "supp")
    option = page.locator("#page-options [role=option]", has_text="Support desk")
    expect(option).to_be_visible()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    expect(page.locator("#id_page_search")).to_have_value("support-desk — Support desk")
    page.fill("#id_use_when", "Use for any support question.")
    page.locator("#add-page button[type=submit]").click()
    expect(page.locator("ol.ag-entries > li")).to_have_count(1)
    expect(page.locator("ol.ag-entries > li").first).to_contain_text("covers 3 pages")
    # Every page with a tag, in one action.
    page.fill("#id_tag", "pricing")
    page.locator("#add-page button[type=submit]").click()
    expect(page.locator(".messages")).to_contain_text("Added 30 pages tagged “pricing”")
    assert PageSetEntry.objects.filter(agent=agent).count() == 31
    # Two calls from the agent (outside Playwright's event loop) fill its activity table.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(rpc_tool, Client(), token, "browse").result(timeout=60)
        pool.submit(rpc_tool, Client(), token, "get_page", pageId="pg_zzzzzzzz").result(60)
    page.reload()
    expect(page.locator("#activity")).to_contain_text("mcp.browse")
    check_screen(page, screenshots, "agent-page")

    # Preview: what the agent sees.
    page.goto(f"{base}/agents/{agent.pk}/preview/")
    expect(page.locator("ol.ag-browse > li")).to_have_count(33)
    page.fill("#preview-q", "refunds")
    page.locator("#search button[type=submit]").click()
    expect(page.locator("#search .result").first).to_contain_text("Refund answers")
    check_screen(page, screenshots, "agent-preview")
    assert Version.objects.count() >= 33


def test_it_holds_the_other_screens_at_both_widths(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    editor: User,
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    handbook = make_page("Team handbook", "How we work.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    make_page("A page with a very long title that must wrap on a phone screen", parent=handbook)
    version_propose(actor=editor, page=handbook, body="How we work now.\n", publish=True)
    waiting = page_create(actor=proposing_agent, title="Agent draft", body="Draft.\n")
    page, base = sized_page, live_server.url

    page.goto(f"{base}/login/")
    check_screen(page, screenshots, "login")
    log_in(page, base, reviewer.username)
    check_screen(page, screenshots, "wiki-home")
    page.goto(f"{base}/search/?q=work")
    expect(page.locator(".result").first).to_contain_text("Team handbook")
    check_screen(page, screenshots, "wiki-search")
    page.goto(f"{base}/reviews/pages/{handbook.public_id}/compare/?a=1&b=2")
    expect(page.locator("#compare")).to_contain_text("now")
    check_screen(page, screenshots, "compare")
    page.goto(f"{base}/p/{waiting.page.public_id}/")
    expect(page.locator("main")).to_contain_text("waiting for review")
    check_screen(page, screenshots, "wiki-page-waiting")
    page.goto(f"{base}/p/{handbook.public_id}/append/")
    check_screen(page, screenshots, "wiki-append")
    page.goto(f"{base}/p/pg_zzzzzzzz/")
    expect(page.locator("h1")).to_have_text("Page not found")
    check_screen(page, screenshots, "error-404")
