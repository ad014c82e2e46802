"""In Debian's Chromium: the review page says it was shown with a POST of its own (its GET
writes nothing), and that is what lets a batch decide a long change opened there, and what
shows the reviewer to the others."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from reviews.actions.propose import version_propose
from reviews.models import DiffShown, ReviewVisit
from tests.test_browser_team_scale import log_in
from wiki.models import Page, Version, VersionStatus

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


def test_a_long_change_opened_in_the_browser_may_then_be_decided_in_a_batch(
    live_server: Any,
    browser_page: Any,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
) -> None:
    from playwright.sync_api import expect

    handbook = make_page("Handbook", "".join(f"Rule {n}.\n" for n in range(12)))
    long = version_propose(
        actor=reader, page=handbook, body="".join(f"Rule {n}, rewritten.\n" for n in range(12))
    )
    page, base = browser_page, live_server.url
    log_in(page, base, reviewer.username)

    with page.expect_response(lambda response: response.url.endswith("/seen/")) as seen:
        page.goto(f"{base}/reviews/pages/{handbook.public_id}/v{long.number}/")
    assert seen.value.status == 204
    assert ReviewVisit.objects.filter(user=reviewer, version=long).exists()
    assert DiffShown.objects.filter(user=reviewer, version=long, where="page").exists()

    page.goto(f"{base}/reviews/")
    page.locator(f"#pick-{long.pk}").click()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".messages")).to_contain_text("approved in one action")
    assert Version.objects.get(pk=long.pk).status == VersionStatus.APPROVED


def test_the_queue_says_in_a_post_which_rows_it_showed_whole(
    live_server: Any,
    browser_page: Any,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
) -> None:
    from playwright.sync_api import expect

    hours = make_page("Hours", "Open 9 to 5.\n")
    short = version_propose(actor=reader, page=hours, body="Open 8 to 5.\n")
    handbook = make_page("Handbook", "".join(f"Rule {n}.\n" for n in range(12)))
    long = version_propose(
        actor=reader, page=handbook, body="".join(f"Rule {n}, rewritten.\n" for n in range(12))
    )
    page, base = browser_page, live_server.url
    log_in(page, base, reviewer.username)

    with page.expect_response(lambda response: response.url.endswith("/reviews/seen/")) as seen:
        page.goto(f"{base}/reviews/")
    assert seen.value.status == 204
    shown = DiffShown.objects.filter(user=reviewer, where="queue")
    assert list(shown.values_list("version", flat=True)) == [short.pk]  # not the long one

    page.locator(f"#pick-{short.pk}").click()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator(".messages")).to_contain_text("approved in one action")
    assert Version.objects.get(pk=short.pk).status == VersionStatus.APPROVED
    assert Version.objects.get(pk=long.pk).status == VersionStatus.IN_REVIEW
