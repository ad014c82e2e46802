"""Screens tried as a new user would, in Debian's Chromium at 390 and 1280 px (issue 50):
long workflow names, one search box and one "New page" on the home screen, the queue's key
hints only where there is a keyboard, the group's webhook field, the password reset screens."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from agents.models import Agent
from people import services as people_services
from reviews import workflows
from reviews.actions.create import page_create
from reviews.models import WORKFLOW_NAME_MAX
from tests import test_browser_team_scale as team_scale
from tests.test_browser_team_scale import check_screen, log_in
from wiki.models import Page
from wiki.roles import REVIEWERS

sized_page = team_scale.sized_page  # the 390 and 1280 px pages

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("throttle_cache"),
]


def visible(page: Any, selector: str) -> int:
    return sum(1 for each in page.locator(selector).all() if each.is_visible())


def test_it_fits_a_long_unbroken_workflow_name_on_the_workflows_screen(
    live_server: Any, sized_page: Any, screenshots: Path, admin_user: User, reviewer: User
) -> None:
    name = "Legal" * (WORKFLOW_NAME_MAX // 5)
    step = "Counsel" * 14
    workflow = workflows.workflow_create(
        actor=admin_user, name=name, steps=[{"name": step, "group": REVIEWERS, "approvals": 1}]
    )
    page, base = sized_page, live_server.url
    log_in(page, base, admin_user.username)
    page.goto(f"{base}/reviews/workflows/")
    check_screen(page, screenshots, "workflows-long-name")
    page.goto(f"{base}/reviews/workflows/{workflow.pk}/")
    check_screen(page, screenshots, "workflow-long-name")
    # What a person who types 200 characters sends: refused, next to the field, still fitting.
    page.goto(f"{base}/reviews/workflows/")
    page.evaluate("document.querySelector('#id_name').removeAttribute('maxlength')")
    page.fill("#id_name", "X" * 200)
    page.fill("#step_1_name", "Check")
    page.select_option("#step_1_group", REVIEWERS)
    page.get_by_role("button", name="Create the workflow").click()
    assert "at most 100 characters" in page.locator(".field-error, [role=alert]").first.inner_text()
    check_screen(page, screenshots, "workflow-name-refused")


def test_it_shows_one_search_box_and_one_new_page_button_on_the_home_screen(
    live_server: Any,
    sized_page: Any,
    screenshots: Path,
    make_page: Callable[..., Page],
    editor: User,
) -> None:
    make_page("Team handbook", "How we work.\n")
    page, base = sized_page, live_server.url
    log_in(page, base, editor.username)
    assert visible(page, "input[type=search]") == 1
    assert visible(page, "a:text-is('New page')") == 1
    check_screen(page, screenshots, "home-once")


def test_it_shows_the_queues_key_hints_only_beside_a_keyboard(
    live_server: Any,
    sized_page: Any,
    make_page: Callable[..., Page],
    reviewer: User,
    proposing_agent: Agent,
) -> None:
    page_create(actor=proposing_agent, title="Agent draft", body="Draft.\n")
    page, base = sized_page, live_server.url
    log_in(page, base, reviewer.username)
    page.goto(f"{base}/reviews/")
    page.locator(".rv-keys").wait_for(state="attached")
    assert page.locator(".rv-keys").is_visible() is (page.width > 800)


def test_it_gives_the_groups_webhook_field_the_width_and_style_of_the_other_fields(
    live_server: Any, sized_page: Any, screenshots: Path, admin_user: User
) -> None:
    group = people_services.group_create(actor=admin_user, name="Legal")
    page, base = sized_page, live_server.url
    log_in(page, base, admin_user.username)
    page.goto(f"{base}/groups/{Group.objects.get(pk=group.pk).pk}/")
    field = page.locator("#id_webhook_url")
    style = field.evaluate(
        """(el) => { const s = getComputedStyle(el), form = el.closest('form');
        return {width: el.getBoundingClientRect().width, form: form.getBoundingClientRect().width,
                radius: s.borderTopLeftRadius, padding: s.paddingLeft, font: s.fontFamily}; }"""
    )
    text_input = page.evaluate(
        """() => { const probe = document.createElement('input'); probe.type = 'text';
        document.querySelector('main').appendChild(probe); const s = getComputedStyle(probe);
        const seen = {radius: s.borderTopLeftRadius, padding: s.paddingLeft, font: s.fontFamily};
        probe.remove(); return seen; }"""
    )
    assert style["width"] >= style["form"] - 2, style
    assert {key: style[key] for key in ("radius", "padding", "font")} == text_input
    check_screen(page, screenshots, "group-webhook")


def test_it_shows_the_password_reset_screens_at_both_widths(
    live_server: Any, sized_page: Any, screenshots: Path, reader: User
) -> None:
    page, base = sized_page, live_server.url
    page.goto(f"{base}/login/")
    page.get_by_role("link", name="Forgot your password?").click()
    check_screen(page, screenshots, "password-reset")
    page.fill("input[name=email]", "reed@example.com")
    page.get_by_role("button", name="Email me a link").click()
    page.get_by_role("heading", name="Check your email").wait_for()
    check_screen(page, screenshots, "password-reset-sent")
