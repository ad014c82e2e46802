"""The queue's batch selection in Debian's Chromium at 390 and 1280 px: tick boxes,
shift-click ranges, "Select the low-risk ones", one comment, approve, undo all; no sideways
scroll and no serious axe violation, screenshots under test-artifacts/screenshots/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from reviews.actions.propose import version_propose
from reviews.models import DecisionBatch
from tests.conftest import live
from tests.test_browser_team_scale import check_screen, log_in, sized_page
from wiki.models import Page, Version, VersionStatus

__all__ = ["sized_page"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]

SMALL_FIXES = [
    ("Shipping", "Parcels leave within 2 days.\n", "Parcels leave within 1 day.\n"),
    ("Returns", "Returns within 30 days.\n", "Returns within 30 calendar days.\n"),
    ("Support hours", "Open 9 to 5.\n", "Open 9 to 6.\n"),
    ("Onboarding", "Read the handbok first.\n", "Read the handbook first.\n"),
]


def test_it_selects_and_decides_a_batch_in_the_queue(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    small = []
    for title, before, after in SMALL_FIXES:
        page = make_page(title, before)
        small.append(version_propose(actor=proposing_agent, page=page, body=after))
    long_page = make_page("Handbook", "".join(f"Rule {n}.\n" for n in range(12)))
    long = version_propose(
        actor=proposing_agent,
        page=long_page,
        body="".join(f"Rule {n}, rewritten.\n" for n in range(12)),
        change_summary="Rewrite every rule.",
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")

    boxes = page.locator("input.rv-pick")
    count = page.locator(".rv-batch-count")
    expect(boxes).to_have_count(5)
    expect(count).to_have_text("None selected")
    expect(page.get_by_role("button", name="Clear")).to_be_hidden()
    check_screen(page, screenshots, "batch-queue")

    # The low-risk ones: the small fresh wording changes shown whole; not the changed
    # numbers (dispatch days, opening hours), not the long rewrite.
    page.get_by_role("button", name="Select the low-risk ones").click()
    expect(count).to_have_text("2 selected")
    for proposal, ticked in zip(small, [False, True, False, True], strict=True):
        box = page.locator(f"#pick-{proposal.pk}")
        expect(box).to_be_checked() if ticked else expect(box).not_to_be_checked()
    expect(page.locator(f"#pick-{long.pk}")).not_to_be_checked()
    page.get_by_role("button", name="Clear").click()
    expect(count).to_have_text("None selected")

    # A range: the first, then shift-click the third.
    boxes.nth(0).click()
    boxes.nth(2).click(modifiers=["Shift"])
    expect(count).to_have_text("3 selected")
    expect(boxes.nth(1)).to_be_checked()
    expect(boxes.nth(3)).not_to_be_checked()
    page.fill("#rv-batch-comment", "Small fixes, read in the queue.")
    check_screen(page, screenshots, "batch-selected")

    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".messages")).to_contain_text("3 proposals approved in one action")
    undo = page.locator("#batch-undo")
    expect(undo).to_contain_text("You approved 3 proposals in one action")
    check_screen(page, screenshots, "batch-approved")
    approved = [Version.objects.get(pk=p.pk) for p in small[:3]]
    assert [v.status for v in approved] == [VersionStatus.APPROVED] * 3
    assert all(live(v.page).pk == v.pk for v in approved)
    assert [v.decision_comment for v in approved] == ["Small fixes, read in the queue."] * 3

    # A long change is not shown whole in its row: ticked alone, the batch refuses it.
    page.locator(f"#pick-{long.pk}").click()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".messages")).to_contain_text("Nothing was decided")
    expect(page.locator(".messages")).to_contain_text("Handbook")
    check_screen(page, screenshots, "batch-refused")
    assert Version.objects.get(pk=long.pk).status == VersionStatus.IN_REVIEW

    undo.get_by_role("button", name="Undo all").click()
    expect(page.locator(".messages")).to_contain_text("The batch is taken back: 3 proposals")
    assert all(Version.objects.get(pk=p.pk).status == VersionStatus.IN_REVIEW for p in small[:3])
    assert DecisionBatch.objects.get().undone_at is not None


def test_it_approves_part_of_a_change_on_the_review_page(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    from playwright.sync_api import expect

    policy = "# Refunds\n\nRefunds take 5 days.\n\nAsk support by email.\n\nGift cards are final.\n"
    page_row = make_page("Refunds", policy)
    proposal = version_propose(
        actor=proposing_agent,
        page=page_row,
        body=policy.replace("5 days", "3 days")
        .replace("email.", "email or chat.")
        .replace("are final", "can be refunded")
        + "\nSee [[pg_aaaaaaaa]].\n",
        change_summary="Faster refunds, chat, gift cards.",
    )
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/pages/{page_row.public_id}/v{proposal.number}/")
    expect(page.locator(".rv-checks")).to_contain_text("Broken link")
    expect(page.locator(".rv-change-kind")).to_contain_text("numbers, dates, links")
    check_screen(page, screenshots, "partial-review")

    page.locator(".rv-partial > summary").click()
    page.locator("#refuse-3").check()
    page.fill("#reason-hunk-3", "Gift cards stay final.")
    check_screen(page, screenshots, "partial-choose")
    page.get_by_role("button", name="Preview what is kept").click()
    expect(page.locator("main")).to_contain_text("You keep 2 of 3 changes and refuse 1")
    expect(page.locator(".rv-rendered")).to_contain_text("Gift cards are final.")
    check_screen(page, screenshots, "partial-preview")
    assert Version.objects.get(pk=proposal.pk).status == VersionStatus.IN_REVIEW

    page.get_by_role("button", name="Approve the kept changes").click()
    expect(page.locator(".messages")).to_contain_text("approved without 1 refused change")
    expect(page.locator(".rv-refused-hunks")).to_contain_text("Gift cards stay final.")
    check_screen(page, screenshots, "partial-approved")
    # The gift cards and the broken link after them were one block: both refused.
    assert live(page_row).body == policy.replace("5 days", "3 days").replace(
        "email.", "email or chat."
    )
