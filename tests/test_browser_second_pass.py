"""The newcomer's walk, second pass, in Debian's Chromium at 390 px and 1280 px: a form saves
once, the pickers find part of a word, a page moves with its links and agents' sets."""

from __future__ import annotations

import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from agents.selectors import visible_pages
from agents.services import page_set_add
from core.actors import SystemActor
from reviews.actions.propose import version_propose
from tests.fixtures_mcp import MCP, AgentKey
from tests.test_browser_narrow import check_narrow
from tests.test_browser_team_scale import log_in, sized_page
from wiki.models import Page

__all__ = ["sized_page"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


def test_it_makes_one_page_when_the_editor_goes_back_and_saves_again(
    live_server: Any, sized_page: Any, screenshots: Path, editor: User
) -> None:
    from playwright.sync_api import expect

    page, base = sized_page, live_server.url
    log_in(page, base, editor.username)
    page.goto(f"{base}/new/")
    page.fill("#id_title", "Release checklist")
    page.fill("#id_body", "- [ ] tag the release\n- [x] write the notes\n")
    page.get_by_role("button", name="Create and publish").click()
    page.wait_for_url(re.compile(r"/p/pg_[a-z2-7]{8}/$"))
    first_url = page.url
    expect(page.locator("article .task-box")).to_have_count(2)
    expect(page.locator("article .task-done")).to_have_text("\u2611")
    check_narrow(page, screenshots, "once-created")

    # Back to the form (the browser puts the text back) and save again: the first save's
    # page is shown, nothing is made twice.
    page.go_back()
    page.wait_for_url(re.compile(r"/new/$"))
    expect(page.locator("#id_title")).to_have_value("Release checklist")
    page.get_by_role("button", name="Create and publish").click()
    page.wait_for_url(first_url)
    expect(page.locator(".messages")).to_contain_text("This form was already saved")
    assert Page.objects.filter(title="Release checklist").count() == 1

    # A new form with the same title under the same parent asks first.
    page.goto(f"{base}/new/")
    page.fill("#id_title", "release checklist")
    page.get_by_role("button", name="Create and publish").click()
    expect(page.locator(".field-error")).to_contain_text(
        "A page titled “Release checklist” already exists at the top level"
    )
    expect(page.get_by_label("Yes, create a second page with this title here")).not_to_be_checked()
    check_narrow(page, screenshots, "once-same-title")
    assert Page.objects.filter(title__iexact="Release checklist").count() == 1


def test_it_finds_reviews_by_part_of_a_word_in_every_page_picker(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    admin_user: User,
) -> None:
    from playwright.sync_api import expect

    process = make_page("Process")
    make_page("Code reviews", parent=process)
    make_page("Onboarding")
    agent = Agent.objects.create(name="docs-bot")
    page, base = sized_page, live_server.url
    log_in(page, base, admin_user.username)
    for screen, url in (
        ("picker-parent", f"{base}/new/"),
        ("picker-page-set", f"{base}/agents/{agent.pk}/"),
    ):
        page.goto(url)
        page.locator(".picker-input").fill("revi")
        options = page.locator(".picker-options [role=option]")
        expect(options).to_have_count(1)
        expect(options.first).to_contain_text("Code reviews")
        expect(options.first).to_contain_text("process/code-reviews")
        check_narrow(page, screenshots, screen)


def test_it_moves_a_page_in_the_browser_keeping_links_and_agents_sets(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    editor: User,
) -> None:
    from playwright.sync_api import expect

    make_page("Guides")
    tools = make_page("Tools")
    slack = make_page("Slack", "Chat rules.\n", parent=tools)
    etiquette = make_page("Etiquette", "Be kind.\n", parent=slack)
    index = make_page("Index", f"See [[{slack.public_id}]] and [[{etiquette.public_id}]].\n")
    bot = Agent.objects.create(name="slack-bot")
    page_set_add(actor=SystemActor("tests"), agent=bot, page=slack)

    page, base = sized_page, live_server.url
    log_in(page, base, editor.username)
    page.goto(f"{base}/p/{slack.public_id}/")
    page.get_by_role("link", name="Move").click()
    expect(page.locator("h1")).to_have_text("Move “Slack”")
    page.wait_for_load_state("load")  # the picker's script is set up
    page.locator(".picker-input").fill("guid")
    page.locator(".picker-options [role=option]", has_text="Guides").click()
    check_narrow(page, screenshots, "move-page")
    page.get_by_role("button", name="Move").click()
    page.wait_for_url(f"{base}/p/{slack.public_id}/")
    expect(page.locator(".messages")).to_contain_text("its address is now guides/slack")
    expect(page.locator("nav.breadcrumbs")).to_contain_text("Guides")
    check_narrow(page, screenshots, "moved-page")

    etiquette.refresh_from_db()
    assert etiquette.path == "guides/slack/etiquette"
    # The links still lead to both pages, and the agent's set still holds them.
    page.goto(f"{base}/p/{index.public_id}/")
    page.locator("article a.page-link", has_text="Etiquette").click()
    page.wait_for_url(f"{base}/p/{etiquette.public_id}/")
    assert {slack.pk, etiquette.pk} <= set(visible_pages(bot).values_list("pk", flat=True))
    # The history records the move.
    page.goto(f"{base}/reviews/pages/{slack.public_id}/history/")
    expect(page.locator("main")).to_contain_text("Moved under “Guides”.")
    check_narrow(page, screenshots, "moved-history")


def test_it_reorders_a_page_among_its_siblings_by_keyboard(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    make_agent: Callable[..., AgentKey],
    editor: User,
) -> None:
    from playwright.sync_api import expect

    tools = make_page("Tools")
    for title in ("Alpha", "Bravo", "Charlie"):
        make_page(title, parent=tools)
    charlie = Page.objects.get(title="Charlie")
    key = make_agent("tools-bot")
    key.give(tools)

    page, base = sized_page, live_server.url
    log_in(page, base, editor.username)
    page.goto(f"{base}/p/{charlie.public_id}/")
    page.get_by_role("link", name="Move").click()
    place = page.get_by_label("Show “Charlie”")
    expect(place).to_have_value(Page.objects.get(title="Bravo").public_id)
    check_narrow(page, screenshots, "reorder-page")
    # By keyboard: choose, Tab to the button, Enter.
    place.focus()
    place.select_option("first")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Place it")).to_be_focused()
    page.keyboard.press("Enter")
    page.wait_for_url(f"{base}/p/{charlie.public_id}/")
    expect(page.locator(".messages")).to_contain_text("“Charlie” now comes first")
    siblings = page.locator("aside.sidebar a[aria-current=page]").locator("xpath=../..")
    expect(siblings.locator(":scope > li .tree-title")).to_have_text(["Charlie", "Alpha", "Bravo"])
    check_narrow(page, screenshots, "reordered-page")
    # The agent's browse lists them in the new order too (the official client, over HTTP).
    with ThreadPoolExecutor(max_workers=1) as pool:
        browse = pool.submit(MCP(base).ok, key, "browse").result(timeout=60)
    assert [p["title"] for p in browse["pages"]] == ["Tools", "Charlie", "Alpha", "Bravo"]


def test_it_badges_a_homoglyph_and_an_override_in_the_rendered_panes(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    payments = make_page("Payments", "Pay through the portal.\n")
    proposal = version_propose(
        actor=proposing_agent,
        page=payments,
        body="Pay at **p\u0430ypal.com**.\n\nOpen `\u202egpj.exe` to pay.\n",
        change_summary="A quicker way to pay",
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/pages/{payments.public_id}/v{proposal.number}/")
    for pane in (".rv-rendered-diff", ".rv-rendered-frame"):
        lookalike = page.locator(f"{pane} .lookalike-char")
        expect(lookalike).to_be_visible()
        expect(lookalike).to_have_text("\u0430")
        expect(lookalike).to_have_attribute("title", re.compile("CYRILLIC SMALL LETTER A"))
        expect(page.locator(f"{pane} .invisible-char")).to_have_text("\u27e6U+202E\u27e7")
    check_narrow(page, screenshots, "review-rendered-badges")


def test_it_publishes_an_approved_stale_proposal_as_the_newest_version(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    editor: User,
    reader: User,
    reviewer: User,
) -> None:
    from playwright.sync_api import expect

    merge = make_page("Merge", "alpha\n\nbeta\n\ngamma\n")
    stale = version_propose(
        actor=reader, page=merge, body="ALPHA\n\nbeta\n\ngamma\n", change_summary="Shout alpha"
    )
    version_propose(actor=editor, page=merge, body="alpha\n\nbeta\n\nGAMMA\n", publish=True)
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/pages/{merge.public_id}/v{stale.number}/")
    page.locator("form:has(input[name=action][value=approve]) button[type=submit]").first.click()
    expect(page.locator(".messages")).to_contain_text("It went live as v4")
    page.goto(f"{base}/reviews/pages/{merge.public_id}/history/")
    rows = page.locator("table.rv-history tbody tr")
    expect(rows.first).to_contain_text("v4")
    expect(rows.first.locator(".rv-badge-live")).to_be_visible()
    proposal_row = rows.filter(has=page.get_by_role("link", name="v2", exact=True))
    expect(proposal_row).to_contain_text("merged into v4")
    expect(page.get_by_role("button", name="Revert to v2")).to_have_count(0)
    check_narrow(page, screenshots, "history-merged-into")
    page.goto(f"{base}/p/{merge.public_id}/")
    expect(page.locator(".meta", has_text="updated")).to_contain_text("v4")
    expect(page.locator("article")).to_contain_text("ALPHA")
    expect(page.locator("article")).to_contain_text("GAMMA")


def test_it_offers_approve_in_the_queue_only_beside_the_whole_change(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    shipping = make_page("Shipping", "Parcels leave within 2 days.\n\nTracking is emailed.\n")
    faq = make_page("FAQ", "## Returns\n\nWithin 30 days.\n")
    long_page = make_page("Long", "".join(f"Line {n}.\n\n" for n in range(12)))
    version_propose(
        actor=proposing_agent, page=shipping, body="Parcels leave within 1 day.\n\nTracking.\n"
    )
    version_propose(actor=proposing_agent, page=faq, kind="append", body="## Shipping\n\nOne day.")
    version_propose(
        actor=proposing_agent, page=long_page, body="".join(f"LINE {n}.\n\n" for n in range(12))
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")
    rows = page.locator("tr.rv-row")
    expect(rows).to_have_count(3)
    approvable = rows.filter(has=page.locator(".rv-row-approve"))
    expect(approvable).to_have_count(2)
    for n in range(2):
        row = approvable.nth(n)
        lines = row.locator(".rv-row-preview .rv-inline > div")
        assert lines.count() >= 2
        for i in range(lines.count()):
            expect(lines.nth(i)).to_be_visible()
    expect(approvable.first.locator(".rv-row-preview")).to_contain_text("1 day")
    # The change too long to show whole opens the review page instead.
    long_row = rows.filter(has_text="Long")
    expect(long_row.locator(".rv-row-approve")).to_have_count(0)
    expect(long_row.get_by_role("link", name="Review")).to_be_visible()
    check_narrow(page, screenshots, "queue-whole-change")


def _placeholder_fits(page: Any, selector: str) -> bool:
    """Whether the placeholder of the input at `selector` shows whole in its box."""
    return bool(
        page.evaluate(
            """(selector) => {
            const input = document.querySelector(selector);
            const style = getComputedStyle(input);
            const canvas = document.createElement('canvas').getContext('2d');
            canvas.font = style.font;
            const room = input.clientWidth - parseFloat(style.paddingLeft)
                - parseFloat(style.paddingRight);
            return canvas.measureText(input.placeholder).width <= room;
        }""",
            selector,
        )
    )


def test_it_gives_the_review_screens_room_to_read(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    body = "".join(f"Paragraph {n} says something ordinary about shipping.\n\n" for n in range(6))
    shipping = make_page("Shipping", body)
    proposal = version_propose(
        actor=proposing_agent, page=shipping, body=body.replace("ordinary", "new")
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    # The queue's inline reject box shows its whole placeholder.
    page.goto(f"{base}/reviews/")
    row = page.locator("tr.rv-row").first
    row.locator("summary.rv-reject-button").click()
    expect(row.locator("input[name=comment]")).to_be_visible()
    assert _placeholder_fits(page, "tr.rv-row details[open] input[name=comment]")
    check_narrow(page, screenshots, "queue-reject-open")
    # The review page: the markdown and rendered diffs one above the other where two columns
    # would wrap every line; edit-then-approve previews like the editor.
    page.goto(f"{base}/reviews/pages/{shipping.public_id}/v{proposal.number}/")
    markdown = page.locator(".rv-diffs-markdown").bounding_box()
    rendered = page.locator(".rv-diffs-rendered").bounding_box()
    assert markdown is not None and rendered is not None
    assert rendered["y"] >= markdown["y"] + markdown["height"] - 1
    page.locator("details.rv-editor > summary").click()
    editor = page.locator("details.rv-editor textarea[name=body]")
    editor.fill("# Shipping\n\nWe ship **fast**.\n")
    expect(page.locator("details.rv-editor .preview-output strong")).to_have_text("fast")
    check_narrow(page, screenshots, "review-edit-preview")


def test_it_undoes_an_approval_from_the_queue_in_time(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    shipping = make_page("Shipping", "Parcels leave within 2 days.\n")
    proposal = version_propose(
        actor=proposing_agent, page=shipping, body="Parcels leave within 1 day.\n"
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")
    page.locator("tr.rv-row .rv-row-approve button").first.click()
    expect(page.locator(".messages")).to_contain_text("approved")
    assert Page.objects.get(pk=shipping.pk).live_version_id == proposal.pk
    page.locator(".messages").get_by_role("link", name="Undo").click()
    page.get_by_role("button", name="Undo the approval").click()
    expect(page.locator(".messages")).to_contain_text("it waits for review again")
    check_narrow(page, screenshots, "review-undone")
    proposal.refresh_from_db()
    assert proposal.status == "in_review"
    page.goto(f"{base}/p/{shipping.public_id}/")
    expect(page.locator("article")).to_contain_text("within 2 days")
    page.goto(f"{base}/reviews/")
    expect(page.locator("tr.rv-row")).to_have_count(1)
