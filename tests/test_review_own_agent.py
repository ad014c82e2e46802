"""Nobody approves their own words: a reviewer cannot decide what an agent they own proposed.

The rule is one function in reviews/actions/rules.py; the web review page, the queue and the REST
API all go through it, so each refuses the same way and says why.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from core.errors import Forbidden
from core.models import AuditEvent
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.models import Notification
from tests.conftest import live
from tests.fixtures_web import rest_client
from wiki.models import Page, Version, VersionStatus


@pytest.fixture
def owned_agent(reviewer: User) -> Agent:
    """An agent that the reviewer `rita` owns."""
    return Agent.objects.create(name="ritas-bot", owner=reviewer, can_edit_pages=True)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _review_url(version: Version) -> str:
    return f"/reviews/pages/{version.page.public_id}/v{version.number}/"


def _propose(page: Page, agent: Agent) -> Version:
    return version_propose(
        actor=agent, page=page, body="Agent text.\n", change_summary="Agent edit"
    )


def _untouched(page: Page, version: Version) -> None:
    version.refresh_from_db()
    assert version.status == VersionStatus.IN_REVIEW
    assert version.decided_by is None
    assert live(page).body == "Person text.\n"
    assert not AuditEvent.objects.filter(action__in=["version.approve", "version.reject"]).exists()


@pytest.mark.parametrize("decide", ["approve", "reject"])
def test_it_refuses_the_owner_in_the_service(
    make_page: Callable[..., Page], reviewer: User, owned_agent: Agent, decide: str
) -> None:
    page = make_page("Refunds", "Person text.\n")
    proposal = _propose(page, owned_agent)
    with pytest.raises(Forbidden) as refused:
        if decide == "approve":
            version_approve(actor=reviewer, version=proposal)
        else:
            version_reject(actor=reviewer, version=proposal, comment="No.")
    assert "ritas-bot is your agent" in refused.value.message
    assert "another reviewer" in refused.value.message
    _untouched(page, proposal)


@pytest.mark.parametrize("action", ["approve", "edit", "reject"])
def test_it_refuses_the_owner_on_the_review_page_and_says_why(
    make_page: Callable[..., Page], reviewer: User, owned_agent: Agent, action: str
) -> None:
    page = make_page("Refunds", "Person text.\n")
    proposal = _propose(page, owned_agent)
    client = _client(reviewer)
    html = client.get(_review_url(proposal)).content.decode()
    assert "ritas-bot is your agent" in html
    assert "rv-approve-button" not in html and "rv-reject-button" not in html
    assert "rv-edit-approve-button" not in html
    response = client.post(
        _review_url(proposal),
        {"action": action, "expected_live_number": 1, "comment": "x", "body": "Mine.\n"},
    )
    assert response.status_code == 403
    _untouched(page, proposal)


@pytest.mark.parametrize("action", ["approve", "reject"])
def test_it_refuses_the_owner_through_the_rest_api(
    make_page: Callable[..., Page], reviewer: User, owned_agent: Agent, action: str
) -> None:
    page = make_page("Refunds", "Person text.\n")
    proposal = _propose(page, owned_agent)
    response = rest_client(reviewer).post(
        f"/api/v1/pages/{page.public_id}/versions/{proposal.number}/{action}",
        {"comment": "Fine by me."},
        format="json",
    )
    assert response.status_code == 403
    error = response.json()["error"]
    assert error["code"] == "forbidden"
    assert "ritas-bot is your agent" in error["message"]
    _untouched(page, proposal)


def test_it_lets_another_reviewer_decide_the_owners_agent(
    make_page: Callable[..., Page],
    reviewer: User,
    second_reviewer: User,
    owned_agent: Agent,
) -> None:
    page = make_page("Refunds", "Person text.\n")
    proposal = _propose(page, owned_agent)
    html = _client(second_reviewer).get(_review_url(proposal)).content.decode()
    assert "rv-approve-button" in html and "your agent" not in html
    response = _client(second_reviewer).post(
        _review_url(proposal), {"action": "approve", "expected_live_number": 1}
    )
    assert response.status_code == 302
    assert live(page).pk == proposal.pk


def test_it_marks_the_owners_agent_in_the_queue_and_never_offers_it_next(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    owned_agent: Agent,
    proposing_agent: Agent,
) -> None:
    mine = _propose(make_page("Refunds", "Person text.\n"), owned_agent)
    other = _propose(make_page("Shipping", "Person text.\n"), proposing_agent)
    html = _client(reviewer).get("/reviews/").content.decode()
    row_of_mine = html[html.index(_review_url(mine)) :].split("</tr>")[0]
    row_of_other = html[html.index(_review_url(other)) :].split("</tr>")[0]
    assert "is your agent, so you cannot decide what it proposes" in row_of_mine
    assert "your agent" not in row_of_other
    # After deciding something else, "Next proposal" skips the one the reviewer cannot decide.
    person = version_propose(actor=reader, page=make_page("Third"), body="p\n")
    version_approve(actor=reviewer, version=other)
    html = _client(reviewer).get(_review_url(other)).content.decode()
    assert f"Next proposal: Third v{person.number}" in html
    assert _review_url(mine) not in html


def test_it_does_not_ask_the_owner_to_review_their_own_agent(
    make_page: Callable[..., Page], reviewer: User, second_reviewer: User, owned_agent: Agent
) -> None:
    proposal = _propose(make_page("Refunds", "Person text.\n"), owned_agent)
    asked = set(
        Notification.objects.filter(version=proposal).values_list("recipient__username", flat=True)
    )
    assert asked == {"rob"}


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_owner_sees_why_in_the_browser(
    live_server: Any,
    make_page: Callable[..., Page],
    reviewer: User,
    owned_agent: Agent,
    browser_page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    proposal = _propose(make_page("Refunds", "Person text.\n"), owned_agent)
    browser = browser_page
    browser.goto(f"{live_server.url}/login/?next=/reviews/")
    browser.fill("input[name=username]", reviewer.username)
    browser.fill("input[name=password]", "correct-horse-battery")
    browser.click("button[type=submit]")
    row = browser.locator("table.rv-queue tbody tr.rv-row").first
    expect(row).to_contain_text(
        re.compile("ritas-bot is your agent, so you cannot decide what it proposes", re.I)
    )
    row.locator("a.rv-queue-link").click()
    expect(browser.locator(".rv-cannot-decide")).to_contain_text("ritas-bot is your agent")
    expect(browser.locator(".rv-approve-button")).to_have_count(0)
    expect(browser.locator(".rv-reject-button")).to_have_count(0)
    browser.screenshot(path=str(screenshots / "review-own-agent.png"), full_page=True)
    assert browser.url.endswith(_review_url(proposal))
