"""The reviewer's whole path in Debian's Chromium: queue, diff, reject, edit, approve, live."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.conftest import live
from tests.fixtures_mcp import MCP, AgentKey
from wiki.models import Page, Version, VersionStatus

REFUNDS = """# Refund policy

Customers can ask for a refund within 30 days of purchase.

Refunds go back to the original payment method.

Contact support@example.com for anything else.
"""
SHIPPING = """# Shipping

Parcels leave the warehouse within 2 working days.

Tracking links are emailed when a parcel leaves.
"""


def _propose_over_mcp(mcp: MCP, key: AgentKey, **arguments: Any) -> dict[str, Any]:
    """Call update_page with the official MCP client, outside Playwright's event loop."""

    def call() -> dict[str, Any]:
        asyncio.set_event_loop(None)
        # A whole-page replace starts from the version the agent read.
        mcp.ok(key, "get_page_source", pageId=arguments["pageId"])
        return mcp.ok(key, "update_page", **arguments)

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result(timeout=60)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_walks_the_reviewers_whole_path(
    live_server: Any,
    mcp: MCP,
    editor_agent: AgentKey,
    make_page: Callable[..., Page],
    reviewer: User,
    browser_page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    refunds = make_page("Refund policy", REFUNDS, tags=["billing"])
    shipping = make_page("Shipping", SHIPPING, tags=["logistics"])
    editor_agent.give(refunds, shipping)
    # Two proposals an agent made through MCP: one hides a right-to-left override.
    sneaky = _propose_over_mcp(
        mcp,
        editor_agent,
        pageId=refunds.public_id,
        markdown=REFUNDS.replace("within 30 days", "within 3\u202e0\u202c days").replace(
            "original payment method", "store credit only"
        ),
        changeSummary="Clarify how refunds are paid.",
    )
    helpful = _propose_over_mcp(
        mcp,
        editor_agent,
        pageId=shipping.public_id,
        markdown=SHIPPING.replace("2 working days", "1 working day"),
        tags=["logistics", "delivery"],
        changeSummary="Faster dispatch since the new warehouse opened.",
    )
    assert sneaky["status"] == helpful["status"] == "in_review"

    page = browser_page
    base = live_server.url

    # Log in.
    page.goto(f"{base}/login/?next=/reviews/")
    page.fill("input[name=username]", reviewer.username)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")

    # The queue: both proposals, oldest first, with the count in the navigation.
    expect(page).to_have_url(re.compile(r"/reviews/$"))
    queue_link = page.get_by_role("link", name=re.compile(r"^Reviews"))
    expect(queue_link.locator(".count")).to_have_text("2")
    rows = page.locator("table.rv-queue tbody tr.rv-row")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("Refund policy")
    expect(rows.nth(0)).to_contain_text("docs-bot")
    expect(rows.nth(1)).to_contain_text("Faster dispatch")
    page.screenshot(path=str(screenshots / "review-queue.png"), full_page=True)

    # The first proposal: the diff shows the changed words and the hidden character.
    rows.nth(0).locator("a.rv-queue-link").click()
    expect(page.locator(".rv-invisible-banner")).to_contain_text(
        "This proposal contains invisible characters"
    )
    changed = page.locator("table.rv-sbs tr.rv-changed")
    expect(changed.first.locator("td.rv-new ins").first).to_be_visible()
    expect(page.locator("table.rv-sbs")).to_contain_text("⟦U+202E⟧")
    # Word level: only the changed words are marked, each on its side.
    refunds_row = page.locator("table.rv-sbs tr.rv-changed", has_text="store")
    expect(refunds_row.locator("td.rv-old del")).to_have_text(["original", "payment", "method"])
    expect(refunds_row.locator("td.rv-new ins")).to_have_text(["store", "credit", "only"])
    page.screenshot(path=str(screenshots / "review-proposal.png"), full_page=True)

    # The inline layout shows the same marks.
    page.click("label[for=text-inline]")
    expect(page.locator("#text .rv-inline")).to_be_visible()
    expect(page.locator("#text table.rv-sbs")).to_be_hidden()

    # Rejecting needs a reason; with one, the proposal is rejected.
    page.click("#reject-form button.rv-reject-button")
    expect(page.locator(".rv-field-error")).to_contain_text("Give a reason")
    page.fill("#id_reject_comment", "The refund window hides a right-to-left override.")
    page.click("#reject-form button.rv-reject-button")
    # The next proposal opens at once, with the decision confirmed at the top.
    expect(page.locator(".messages")).to_contain_text("rejected")
    expect(page.locator("h1")).to_contain_text("Shipping")
    page.goto(f"{base}/reviews/pages/{refunds.public_id}/v{sneaky['versionNumber']}/")
    expect(page.locator(".rv-decision")).to_contain_text("Rejected by rita")
    expect(page.locator(".rv-decision")).to_contain_text("right-to-left override")

    # The second proposal: edit it, then approve it.
    page.goto(f"{base}/reviews/")
    expect(page.locator("table.rv-queue tbody tr.rv-row")).to_have_count(1)
    page.locator("a.rv-queue-link", has_text="Shipping").click()
    expect(page.locator("table.rv-sbs ins").filter(has_text="1")).not_to_have_count(0)
    expect(page.locator(".rv-fields")).to_contain_text("delivery")
    page.click("details.rv-editor summary")
    edited = SHIPPING.replace("2 working days", "1 working day (2 in December)")
    page.fill("details.rv-editor textarea[name=body]", edited)
    page.fill("#id_edit_comment", "Kept the December exception.")
    page.click("button.rv-edit-approve-button")
    # Nothing else waits: back to the queue, which is empty.
    expect(page.locator(".messages")).to_contain_text("edited and approved")
    expect(page.locator(".rv-empty")).to_contain_text("Nothing is waiting for review.")
    page.goto(f"{base}/reviews/pages/{shipping.public_id}/v{helpful['versionNumber']}/")
    expect(page.locator(".rv-decision")).to_contain_text("Approved by rita")
    expect(page.locator(".rv-decision")).to_contain_text("edited by the reviewer")

    # The live page shows the edited text.
    page.goto(f"{base}/p/{shipping.public_id}/")
    expect(page.locator("article")).to_contain_text("1 working day (2 in December)")

    current = live(shipping)
    assert current.number == helpful["versionNumber"]
    assert current.body == edited and current.edited_by_reviewer
    assert current.author_agent_id == editor_agent.agent.pk and current.decided_by == reviewer
    rejected = Version.objects.get(page=refunds, number=sneaky["versionNumber"])
    assert rejected.status == VersionStatus.REJECTED
    assert live(refunds).body == REFUNDS
    assert (screenshots / "review-queue.png").stat().st_size > 10_000
    assert (screenshots / "review-proposal.png").stat().st_size > 10_000
