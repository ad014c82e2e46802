"""Permissions per section in Debian's Chromium at 390 and 1280 px, axe passing: an admin
opens a Legal section's Access screen from the page, grants the section to Legal (read and
decide), sees where each right comes from on a page under it, and a person outside Legal no
longer finds the section in the tree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests import test_browser_team_scale as team_scale
from tests.test_browser_team_scale import check_screen, log_in
from wiki.models import Page, PageGrant

sized_page = team_scale.sized_page  # the 390 and 1280 px pages, as that file's walks use

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


def test_it_grants_a_section_to_a_group_in_the_browser(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    reader: User,
) -> None:
    from playwright.sync_api import expect

    make_user("lena", "Legal")
    legal = make_page("Legal counsel", "Contracts and advice.\n")
    nda = make_page("Non-disclosure", "Sign before day one.\n", parent=legal)
    page, base, width = sized_page, live_server.url, sized_page.width

    log_in(page, base, admin_user.username)
    page.goto(f"{base}/p/{legal.public_id}/")
    page.get_by_role("link", name="Access").click()
    expect(page.locator("h1")).to_contain_text("Who may do what on “Legal counsel”")
    expect(page.locator(".access-rights")).to_contain_text("Everyone")
    page.select_option("#id_group", "Legal")
    page.get_by_label("Read: see it anywhere").check()
    page.get_by_label("Decide proposals (review)").check()
    check_screen(page, screenshots, f"access-grant-{width}")
    page.get_by_role("button", name="Grant").click()
    expect(page.locator(".messages, [role=status]").first).to_contain_text(
        "Legal may now read, decide"
    )
    expect(page.locator(".access-grants")).to_contain_text("read, decide")
    check_screen(page, screenshots, f"access-granted-{width}")
    grant = PageGrant.objects.get(page=legal)
    assert (grant.group.name, grant.rights) == ("Legal", ["read", "decide"])

    # On a page under it, each right says where it comes from.
    page.goto(f"{base}/p/{nda.public_id}/access/")
    rights = page.locator(".access-rights")
    expect(rights.locator("tr", has_text="Read")).to_contain_text("legal-counsel")
    expect(rights.locator("tr", has_text="Publish")).to_contain_text("The default")
    check_screen(page, screenshots, f"access-inherited-{width}")
    page.context.clear_cookies()

    # A person outside Legal: the section is gone from the tree and its address.
    log_in(page, base, reader.username)
    page.goto(f"{base}/")
    expect(page.locator("main")).not_to_contain_text("Legal counsel")
    response = page.goto(f"{base}/p/{nda.public_id}/")
    assert response is not None and response.status == 404
