"""A team runs Quire itself, in Debian's Chromium at 390 and 1280 px with axe: an admin invites
a person and gives their group a section; the person signs in through the company's OpenID
Connect provider (a real one, tests/fixtures_oidc.py), is asked by name to review there, finds
it in the inbox (read once opened) and is reminded after the due time (the clock moved)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from inbox.models import InboxItem
from people.models import SsoIdentity
from reviews import asking
from reviews.actions.propose import version_propose
from reviews.workflows import workflow_assign, workflow_create
from tests.fixtures_oidc import Provider
from tests.test_browser_team_scale import PASSWORD, check_screen, open_menu, sized_page
from wiki.models import Page

__all__ = ["sized_page"]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache", "eager_tasks"),
]

# The provider's own form loads a stylesheet from a CDN: nothing may leave this machine.
OFF_MACHINE = re.compile(r"^https?://(?!(127\.0\.0\.1|localhost)[:/])")


def stay_on_this_machine(page: Any) -> None:
    page.route(OFF_MACHINE, lambda route: route.abort())


def test_it_walks_an_admin_inviting_a_person_who_signs_in_and_finds_a_review_in_the_inbox(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    oidc_provider: Provider,
    admin_user: User,
    make_user: Callable[..., User],
    make_page: Callable[..., Page],
    mailoutbox: list[Any],
) -> None:
    from playwright.sync_api import expect

    page = sized_page
    stay_on_this_machine(page)
    base = live_server.url
    # Lena, in Legal, writes the proposal Grace will be asked about.
    lena = make_user("lena", "Legal")
    contracts = make_page("Contracts", "Our contract templates.\n")

    # The admin invites Grace into Legal from the People screen.
    # With single sign-on on, the password form is the login page's second.
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", admin_user.username)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name="Log in", exact=True).click()
    page.wait_for_url(re.compile(r"/$"))
    open_menu(page)
    page.get_by_role("link", name="People").click()
    check_screen(page, screenshots, "team-people")
    page.fill("#id_email", "grace@example.com")
    page.fill("#id_name", "Grace Hopper")
    page.get_by_label("Legal").check()
    page.get_by_role("button", name="Send the invitation").click()
    expect(page.get_by_text("Invited grace@example.com")).to_be_visible()
    check_screen(page, screenshots, "team-person")
    grace = User.objects.get(email="grace@example.com")
    assert [mail.to for mail in mailoutbox] == [["grace@example.com"]]

    # Legal gets the Contracts section on its Access screen, and decides there through a
    # workflow whose one step is Legal's.
    page.goto(f"{base}/p/{contracts.public_id}/access/")
    page.select_option("#id_group", "Legal")
    page.get_by_label("Read: see it anywhere").check()
    page.get_by_label("Propose changes").check()
    page.get_by_label("Decide proposals (review)").check()
    page.get_by_role("button", name="Grant").click()
    expect(page.locator(".access-grants")).to_contain_text("read, propose, decide")
    workflow = workflow_create(
        actor=admin_user, name="Legal review", steps=[{"name": "Legal", "group": "Legal"}]
    )
    workflow_assign(actor=admin_user, workflow=workflow, page=contracts)
    page.goto(f"{base}/groups/")
    check_screen(page, screenshots, "team-groups")
    page.get_by_role("link", name="Legal").click()
    expect(
        page.get_by_role("table").get_by_role("link", name="Contracts", exact=True)
    ).to_be_visible()
    expect(page.get_by_text("Legal review, step 1")).to_be_visible()
    check_screen(page, screenshots, "team-group")

    # Grace signs in through the company's provider, which knows her verified address.
    oidc_provider.person(
        "sub-grace", email="grace@example.com", email_verified=True, groups=["Legal"]
    )
    grace_context = page.context.browser.new_context(viewport={"width": page.width, "height": 860})
    try:
        as_grace = grace_context.new_page()
        as_grace.width = page.width
        stay_on_this_machine(as_grace)
        as_grace.goto(f"{base}/login/")
        check_screen(as_grace, screenshots, "team-login-sso")
        as_grace.get_by_role("link", name="Sign in with Example SSO").click()
        as_grace.fill("input[name=sub]", "sub-grace")
        as_grace.get_by_role("button", name="Authorize").click()
        as_grace.wait_for_url(re.compile(rf"^{re.escape(base)}/$"))
        assert SsoIdentity.objects.get(subject="sub-grace").user == grace

        # Someone proposes a change in Contracts: it waits on Legal, so on Grace.
        proposal = version_propose(
            actor=lena, page=contracts, body="Templates, reviewed.\n", change_summary="Wording"
        )
        as_grace.reload()
        open_menu(as_grace)
        inbox_link = as_grace.get_by_role("link", name=re.compile(r"^Inbox"))
        expect(inbox_link.locator(".count")).to_have_text("1")

        # The admin asks Grace by name, on the review page.
        review_url = f"{base}/reviews/pages/{contracts.public_id}/v{proposal.number}/"
        page.goto(review_url)
        page.select_option("#ask-person", "grace")
        page.get_by_role("button", name="Ask", exact=True).click()
        expect(page.get_by_text("Asked grace to review it.")).to_be_visible()
        check_screen(page, screenshots, "team-review-asked")

        as_grace.reload()
        open_menu(as_grace)
        inbox_link = as_grace.get_by_role("link", name=re.compile(r"^Inbox"))
        expect(inbox_link.locator(".count")).to_have_text("2")
        inbox_link.click()
        expect(
            as_grace.get_by_role("button", name=re.compile("Asked of you by name"))
        ).to_be_visible()
        check_screen(as_grace, screenshots, "team-inbox")

        # Two days pass (the clock moved in the test): the reminder reaches her inbox.
        assert asking.reviews_remind(now=timezone.now() + timedelta(hours=49)) == {
            "deciders": 1,
            "admins": 0,
        }
        as_grace.reload()
        expect(
            as_grace.get_by_role("button", name=re.compile("Reminder: still waiting"))
        ).to_be_visible()
        mails = [mail.subject for mail in mailoutbox if mail.to == ["grace@example.com"]]
        assert mails[-2:] == [
            "[Quire] ada asks you to review Contracts (v2)",
            "[Quire] Reminder: Contracts (v2) still waits",
        ]
        check_screen(as_grace, screenshots, "team-inbox-reminded")

        # Opening one marks it read.
        as_grace.get_by_role("button", name=re.compile("Asked of you by name")).click()
        as_grace.wait_for_url(re.compile(rf"/reviews/pages/{contracts.public_id}/v\d+/$"))
        asked = InboxItem.objects.get(recipient=grace, kind="review_asked")
        assert asked.read_at is not None
        open_menu(as_grace)
        expect(
            as_grace.get_by_role("link", name=re.compile(r"^Inbox")).locator(".count")
        ).to_have_text("2")
    finally:
        grace_context.close()
