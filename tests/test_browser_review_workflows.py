"""Review workflows in Debian's Chromium at 390 and 1280 px, axe passing: an admin defines a
two-step workflow and assigns it with the page picker; two reviewers decide a proposal under
it, the second by keyboard alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from reviews.actions.propose import version_propose
from reviews.models import Workflow
from tests import test_browser_team_scale as team_scale
from tests.conftest import live
from tests.test_browser_team_scale import check_screen, log_in
from wiki.models import Page, VersionStatus
from wiki.roles import REVIEWERS

sized_page = team_scale.sized_page  # the 390 and 1280 px pages, as that file's walks use

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


def test_it_defines_assigns_and_decides_a_workflow(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
    reviewer: User,
) -> None:
    from playwright.sync_api import expect

    lawyer = make_user("lena", "Legal")  # Legal only: the step names its group
    policies = make_page("Policies", "All policies.\n")
    refunds = make_page("Refunds", "Refunds take five days.\n", parent=policies)
    page, base = sized_page, live_server.url

    log_in(page, base, admin_user.username)
    page.goto(f"{base}/reviews/workflows/")
    page.fill("#id_name", "Legal review")
    page.fill("#step_1_name", "Legal")
    page.select_option("#step_1_group", "Legal")
    page.fill("#step_1_approvals", "1")
    page.fill("#step_2_name", "Final check")
    page.select_option("#step_2_group", REVIEWERS)
    page.fill("#step_2_approvals", "1")
    check_screen(page, screenshots, "workflow-new")
    page.get_by_role("button", name="Create the workflow").click()
    expect(page.locator(".messages, [role=status]").first).to_contain_text("saved")
    workflow = Workflow.objects.get(name="Legal review")
    page.fill("#id_page_search", "Polic")
    option = page.locator("#page-options [role=option]", has_text="Policies").first
    expect(option).to_be_visible()
    page.wait_for_load_state("networkidle")  # the picker's last answer is in
    option.click()
    expect(page.locator("#page-options")).to_be_hidden()
    page.get_by_role("button", name="Assign").click()
    expect(page.locator(".wf-pages").first).to_contain_text("policies")
    check_screen(page, screenshots, "workflow-assigned")
    assert list(workflow.assignments.values_list("page__public_id", flat=True)) == [
        policies.public_id
    ]
    page.goto(f"{base}/p/{refunds.public_id}/")
    expect(page.locator(".page-workflow")).to_contain_text("Legal review")
    expect(page.locator(".page-workflow")).to_contain_text("from Policies")
    page.context.clear_cookies()

    proposal = version_propose(
        actor=reader, page=refunds, body="Refunds take seven days.\n", change_summary="Seven."
    )
    review_url = f"{base}/reviews/pages/{refunds.public_id}/v{proposal.number}/"

    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")
    expect(page.locator(".rv-queue")).to_contain_text("Waits on Legal")
    page.goto(review_url)
    expect(page.locator(".rv-cannot-decide")).to_contain_text("members of Legal decide")
    page.context.clear_cookies()

    log_in(page, base, lawyer.username)
    page.goto(f"{base}/reviews/")
    expect(page.locator(".rv-queue-group").first).to_have_text("Awaiting your review")
    page.goto(review_url)
    expect(page.locator(".rv-path")).to_contain_text("Step 1: Legal")
    check_screen(page, screenshots, "workflow-review-step-1")
    page.fill("#id_approve_comment", "Legal is fine with it.")
    page.locator("#approve-form button[type=submit]").click()
    page.wait_for_url(lambda url: "/v" not in url or url != review_url)
    proposal.refresh_from_db()
    assert (proposal.status, proposal.review.step) == (VersionStatus.IN_REVIEW, 1)
    page.context.clear_cookies()

    # The second reviewer decides by keyboard alone: Tab to the comment, type, Tab, Enter.
    log_in(page, base, reviewer.username)
    page.goto(review_url)
    expect(page.locator(".rv-path")).to_contain_text("Approved by lena")
    # lena looked at it a moment ago, but she cannot decide step 2: the presence sign names
    # only the people who may decide the step the review waits at (reviews.deciders).
    expect(page.locator(".rv-path")).not_to_contain_text("is reviewing")
    check_screen(page, screenshots, "workflow-review-step-2")
    for _ in range(200):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.id") == (
            "id_approve_comment"
        ):
            break
    else:
        pytest.fail("the approval comment cannot be reached with Tab")
    page.keyboard.type("Final check done.")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.closest('#approve-form') !== null")
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != review_url)
    proposal.refresh_from_db()
    assert proposal.status == VersionStatus.APPROVED
    assert live(refunds).body == "Refunds take seven days.\n"
    page.goto(review_url)
    expect(page.locator(".rv-path")).to_contain_text("Final check done.")
    check_screen(page, screenshots, "workflow-review-approved")
