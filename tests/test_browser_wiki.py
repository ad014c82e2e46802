"""The people's side of the wiki in Debian's Chromium: read, write, search, attach, propose."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from core.models import AuditEvent
from tests.conftest import live
from wiki.models import Page, Version, VersionStatus

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]

PASSWORD = "correct-horse-battery"
HANDBOOK = """# Team handbook

How the support team works, day to day.
"""
ESCALATION = """# Escalation

Page the on-call engineer when a customer cannot log in for more than an hour.
"""
REFUNDS = """# Refund policy

Customers can ask for a refund within 30 days of purchase.
"""


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = tmp_path


def _log_in(page: Any, base: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def _search(page: Any, query: str) -> None:
    box = page.locator(".topbar-search input[name=q]")
    box.fill(query)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/search/\?q="))


def test_it_walks_an_editors_page_from_creation_to_archive_and_back(
    live_server: Any,
    editor: User,
    make_page: Callable[..., Page],
    browser_page: Any,
    screenshots: Path,
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect

    handbook = make_page("Team handbook", HANDBOOK, tags=["support"])
    escalation = make_page("Escalation", ESCALATION, parent=handbook)
    page = browser_page
    base = live_server.url

    # Logged in through the form, the editor lands on the home page with the tree.
    _log_in(page, base, editor.username)
    expect(page).to_have_url(f"{base}/")
    expect(page.locator(".whoami")).to_have_text("edna")
    # The sidebar tree folds the handbook (one page under it); the sections list opens it.
    sidebar = page.locator("aside.sidebar .tree")
    expect(sidebar.locator("a.leaf")).to_have_count(1)
    expect(sidebar.locator(".tree-title")).to_have_text("Team handbook")
    expect(sidebar.locator(".tree-count")).to_have_text("+1")
    sections = page.locator("ul.sections")
    expect(sections.locator("a.section-title")).to_have_text("Team handbook")
    expect(sections.locator(".section-children a")).to_have_text("Escalation")

    # Open the handbook and add a page under it.
    sidebar.get_by_role("link", name="Team handbook").click()
    expect(page.locator("h1")).to_have_text("Team handbook")
    page.get_by_role("link", name="New child page").click()
    expect(page.locator("h1")).to_have_text("New page under “Team handbook”")
    page.fill("#id_title", "On-call rota")
    page.fill(
        "#id_body",
        "Who answers the pager each week.\n\n"
        "| Week | Engineer |\n"
        "| ---- | -------- |\n"
        "| 1 | Priya |\n"
        "| 2 | Tomasz |\n\n"
        f"When in doubt, follow [[{escalation.public_id}]].\n",
    )
    page.fill("#id_tags", "support, pager")
    page.fill("#id_change_summary", "Start the rota.")
    page.get_by_role("button", name="Create and publish").click()

    # Redirected to the new page, rendered live.
    expect(page).to_have_url(re.compile(r"/p/pg_[a-z2-7]{8}/$"))
    rota = Page.objects.get(title="On-call rota")
    assert page.url == f"{base}/p/{rota.public_id}/"
    assert rota.parent_id == handbook.pk and live(rota).status == VersionStatus.APPROVED
    expect(page.locator(".messages")).to_contain_text("Published “On-call rota”.")
    expect(page.locator("h1")).to_have_text("On-call rota")
    article = page.locator("article.prose")
    expect(article.locator("table td")).to_have_text(["1", "Priya", "2", "Tomasz"])
    link = article.locator("a.page-link")
    expect(link).to_have_text("Escalation")
    expect(link).to_have_attribute("href", f"/p/{escalation.public_id}/")
    expect(page.locator("ul.tags li.tag")).to_have_text(["support", "pager"])
    expect(page.locator(".breadcrumbs")).to_contain_text("Team handbook")
    expect(page.locator(".tree [aria-current=page]")).to_have_text("On-call rota")

    # Attach a small CSV and see it listed.
    csv = tmp_path / "rota.csv"
    csv.write_text("week,engineer\n1,Priya\n2,Tomasz\n")
    page.set_input_files("form.upload-form input[type=file]", str(csv))
    page.locator("form.upload-form").get_by_role("button", name="Upload", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Attached rota.csv.")
    attachment_rows = page.locator("table.attachments tbody tr")
    expect(attachment_rows).to_have_count(1)
    expect(attachment_rows.first.get_by_role("link", name="rota.csv")).to_be_visible()
    expect(attachment_rows.first).to_contain_text("text/csv")
    assert list(rota.attachments.values_list("name", flat=True)) == ["rota.csv"]
    page.screenshot(path=str(screenshots / "wiki-page.png"), full_page=True)

    # The top-bar search finds it, with the matching word marked in the excerpt.
    _search(page, "Tomasz")
    result = page.locator("ol.results li.result", has_text="On-call rota")
    expect(result).to_have_count(1)
    expect(result.locator("p.result-excerpt mark").first).to_have_text(
        re.compile("tomasz", re.IGNORECASE)
    )
    expect(page.locator(".topbar-search input[name=q]")).to_have_value("Tomasz")
    page.screenshot(path=str(screenshots / "wiki-search.png"), full_page=True)

    # Archive it, accepting the confirm dialog: gone from the tree and from search.
    result.locator("a.result-title").click()
    questions: list[str] = []

    def accept(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.accept()

    page.on("dialog", accept)
    page.get_by_role("button", name="Archive", exact=True).click()
    expect(page.locator(".banner-warning")).to_contain_text("This page is archived.")
    assert questions and questions[0].startswith("Archive this page?")
    expect(page.locator(".tree").get_by_role("link", name="On-call rota")).to_have_count(0)
    expect(page.locator(".tree").get_by_role("link", name="Escalation")).to_be_visible()
    rota.refresh_from_db()
    assert rota.archived
    _search(page, "Tomasz")
    expect(page.locator("main")).to_contain_text("No pages match “Tomasz”.")
    expect(page.locator("ol.results li")).to_have_count(0)

    # Restore it from its page (reached from the home page's archived list).
    page.goto(f"{base}/")
    page.locator("section.panel", has_text="Archived pages").get_by_role(
        "link", name="On-call rota"
    ).click()
    page.get_by_role("button", name="Restore", exact=True).click()
    expect(page.locator(".messages")).to_contain_text("Restored “On-call rota”.")
    expect(page.locator(".banner-warning")).to_have_count(0)
    expect(page.locator(".tree").get_by_role("link", name="On-call rota")).to_be_visible()
    _search(page, "Tomasz")
    expect(page.locator("ol.results li.result", has_text="On-call rota")).to_have_count(1)
    rota.refresh_from_db()
    assert not rota.archived
    assert (screenshots / "wiki-page.png").stat().st_size > 10_000
    assert (screenshots / "wiki-search.png").stat().st_size > 10_000


def test_it_keeps_a_readers_proposed_edit_out_of_the_live_page(
    live_server: Any, reader: User, make_page: Callable[..., Page], browser_page: Any
) -> None:
    from playwright.sync_api import expect

    refunds = make_page("Refund policy", REFUNDS)
    page = browser_page
    base = live_server.url

    _log_in(page, base, reader.username)
    expect(page).to_have_url(f"{base}/")
    page.locator(".tree").get_by_role("link", name="Refund policy").click()
    expect(page.get_by_role("button", name="Archive", exact=True)).to_have_count(0)
    page.get_by_role("link", name="Propose an edit").click()
    expect(page.locator("h1")).to_have_text("Propose an edit to “Refund policy”")
    expect(page.locator("#id_body")).to_have_value(REFUNDS)
    page.fill("#id_body", REFUNDS.replace("30 days", "60 days"))
    page.fill("#id_change_summary", "The window doubled in March.")
    page.get_by_role("button", name="Submit for review").click()

    expect(page).to_have_url(f"{base}/p/{refunds.public_id}/")
    expect(page.locator(".messages")).to_contain_text(
        "Your change was submitted for review as v2. The page shows the live version"
    )
    article = page.locator("article.prose")
    expect(article).to_contain_text("within 30 days")
    expect(article).not_to_contain_text("60 days")
    notice = page.locator(".banner-info")
    expect(notice).to_contain_text("1 proposal waiting for review")
    expect(notice).to_contain_text("yours is v2")

    assert live(refunds).number == 1
    proposal = Version.objects.get(page=refunds, number=2)
    assert proposal.status == VersionStatus.IN_REVIEW
    assert proposal.author_user == reader and "60 days" in proposal.body


def test_it_shows_the_servers_refusal_of_a_too_long_title_next_to_the_field(
    live_server: Any,
    editor: User,
    make_page: Callable[..., Page],
    browser_page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    make_page("Team handbook", HANDBOOK)
    pages_before, versions_before = Page.objects.count(), Version.objects.count()
    events_before = AuditEvent.objects.count()
    page = browser_page
    base = live_server.url

    _log_in(page, base, editor.username)
    expect(page).to_have_url(f"{base}/")
    page.goto(f"{base}/new/")
    title = page.locator("#id_title")
    expect(title).to_have_attribute("maxlength", "200")
    # The browser would cut the text at 200; remove the limit to prove the server refuses.
    title.evaluate("element => element.removeAttribute('maxlength')")
    title.fill("x" * 201)
    page.fill("#id_body", "Too long a title.\n")
    page.get_by_role("button", name="Create and publish").click()

    expect(page).to_have_url(f"{base}/new/")
    expect(page.locator(".form-errors")).to_contain_text("Please correct the errors below.")
    field = page.locator(".field-invalid", has=page.locator("#id_title"))
    expect(field.locator(".field-error")).to_contain_text(re.compile(r"Title .*200"))
    # What was typed is kept, so it can be shortened instead of retyped.
    expect(page.locator("#id_title")).to_have_value("x" * 201)
    expect(page.locator("#id_body")).to_have_value("Too long a title.\n")
    page.screenshot(path=str(screenshots / "wiki-edit-error.png"), full_page=True)

    assert Page.objects.count() == pages_before
    assert Version.objects.count() == versions_before
    assert AuditEvent.objects.count() == events_before
    assert (screenshots / "wiki-edit-error.png").stat().st_size > 10_000


def test_it_locks_the_login_form_after_too_many_wrong_passwords(
    live_server: Any, reader: User, browser_page: Any, settings: Any
) -> None:
    from playwright.sync_api import expect

    settings.QUIRE_LOGIN_MAX_FAILURES = 3
    settings.QUIRE_LOGIN_WINDOW_SECONDS = 300
    page = browser_page
    base = live_server.url

    for _ in range(3):
        _log_in(page, base, reader.username, "wrong-password")
        expect(page.locator(".form-errors")).to_contain_text(
            "Please enter a correct username and password"
        )
    # Now even the right password is refused, and the form says why and what to do.
    _log_in(page, base, reader.username)
    expect(page.locator(".form-errors")).to_contain_text(
        "Too many failed attempts to log in with this username. Wait 5 minutes and try again"
    )
    expect(page).to_have_url(re.compile(r"/login/$"))
    page.goto(f"{base}/")
    expect(page).to_have_url(re.compile(r"/login/\?next=/$"))
