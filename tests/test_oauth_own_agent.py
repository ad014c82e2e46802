"""A person's own agent without an admin (issue 49, point 10): on the consent screen a person
who is not an admin makes an agent of their own for the app (where admins allow it:
QUIRE_PEOPLE_MAKE_AGENTS, on by default). It reads at most what they may read (every page,
now and later, or the sections they pick), its proposals are decided by others, never by them,
and they and admins list, rename and revoke it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from agents import services as agent_services
from agents.models import Agent
from connect.models import Connection, Grant
from core.errors import Forbidden
from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from tests.fixtures_oauth import (
    PASSWORD,
    Browserless,
    CallbackServer,
    OAuthClient,
    _hidden_inputs,
    callback_query,
    chromium,
    registered_client,
)
from tests.test_oauth_connect import _tools_and_pages
from wiki.models import Page
from wiki.permissions import grant_set

pytestmark = pytest.mark.usefixtures("fresh_rate_limits")


@pytest.fixture
def sections(make_page: Callable[..., Page], admin_user: User) -> dict[str, Page]:
    """Two sections everyone reads and one only the Legal group reads."""
    legal = make_page("Legal", "Contracts.\n")
    grant_set(
        actor=admin_user, page=legal, group=Group.objects.create(name="Legal"), rights=["read"]
    )
    return {
        "Handbook": make_page("Handbook", "Open to all.\n"),
        "Tools": make_page("Tools", "Slack and mail.\n"),
        "Legal": legal,
    }


async def _make_own_agent_in_chromium(url: str, username: str, name: str) -> str:
    """Sign in at the consent screen, make a new agent reading every page, allow; the screen's
    text as the person saw it."""
    from axe_playwright_python.async_playwright import Axe

    async with chromium() as browser:
        context = await browser.new_context()
        page = await context.new_page()
        page.set_default_timeout(20_000)
        await page.goto(url)
        await page.fill("#id_username", username)
        await page.fill("#id_password", PASSWORD)
        await page.click("button[type=submit]")
        await page.wait_for_selector("h1")
        seen: str = await page.inner_text("main")
        results = await Axe().run(page)
        blocking = [
            violation["id"]
            for violation in results.response["violations"]
            if violation["impact"] in ("serious", "critical")
        ]
        assert blocking == [], blocking
        await page.get_by_label("A new agent of your own").check()
        await page.fill("#id_new_name", name)
        await page.get_by_label("Every page you may read, now and later").check()
        await page.get_by_role("button", name="Allow").click()
        await page.wait_for_load_state()
        await context.close()
        return seen


@pytest.mark.browser
def test_a_person_makes_their_own_agent_on_the_consent_screen(
    oauth_base: str, callback: CallbackServer, reader: User, sections: dict[str, Page]
) -> None:
    client = registered_client(oauth_base, callback.uri)

    async def flow() -> tuple[str, list[str]]:
        seen = await _make_own_agent_in_chromium(
            client.authorize_url(), reader.username, "reed-claude"
        )
        query = await asyncio.to_thread(callback.wait)
        assert query["state"] == client.state
        tokens = await asyncio.to_thread(client.exchange, query["code"])
        assert tokens.status_code == 200, tokens.text
        _names, _titles, pages = await _tools_and_pages(
            oauth_base + "/mcp", tokens.json()["access_token"]
        )
        return seen, pages

    seen, pages = asyncio.run(flow())
    assert "You have no agent" not in seen and "A new agent of your own" in seen
    agent = Agent.objects.get(name="reed-claude")
    assert (agent.owner, agent.all_pages, agent.can_edit_pages) == (reader, True, False)
    # It reads what its owner may read, and no more.
    assert "Handbook" in pages and "Tools" in pages and "Legal" not in pages
    assert Connection.objects.get().agent == agent
    made = AuditEvent.objects.get(action="agent.create", actor_user=reader)
    assert made.data["ownAgent"] is True


def _decide_new(person: Browserless, client: OAuthClient, **fields: Any) -> Any:
    """Allow with a new agent of one's own, `fields` filling its form."""
    url = client.authorize_url()
    screen = person.http.get(url)
    assert screen.status_code == 200, screen.text
    data: dict[str, Any] = {**_hidden_inputs(screen.text), "agent": "new", "allow": "on", **fields}
    return person.http.post(url, data=data)


def test_it_reads_only_the_sections_picked_and_only_those_the_person_may_read(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    reader: User,
    sections: dict[str, Page],
) -> None:
    client = registered_client(oauth_base, callback.uri)
    person = browserless(reader.username)
    screen = person.screen(client.authorize_url()).text
    assert "Handbook" in screen and "Tools" in screen and "Legal" not in screen

    picked = [str(sections["Tools"].pk), str(sections["Legal"].pk)]  # Legal: not theirs to give
    allowed = _decide_new(
        person, client, new_name="reed-tools", new_reads="picked", new_pages=picked
    )

    assert callback_query(allowed, callback.uri)["code"]
    agent = Agent.objects.get(name="reed-tools")
    assert not agent.all_pages and agent.owner == reader
    assert [entry.page.title for entry in agent.page_set.select_related("page")] == ["Tools"]


def test_it_says_what_is_missing_and_grants_nothing(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    reader: User,
    sections: dict[str, Page],
    owned_agent: Any,
) -> None:
    client = registered_client(oauth_base, callback.uri)
    person = browserless(reader.username)
    nothing = _decide_new(person, client, new_name="reed-bot", new_reads="picked")
    assert "Pick the pages your agent may read" in nothing.text
    taken = _decide_new(person, client, new_name="helpdesk-bot")  # another's agent's name
    assert "An agent named &#x27;helpdesk-bot&#x27; already exists" in taken.text
    assert not Agent.objects.filter(owner=reader).exists()
    assert not Grant.objects.exists() and not Connection.objects.exists()


def test_where_admins_switched_it_off_the_screen_says_to_ask_one(
    oauth_base: str,
    browserless: Callable[[str], Browserless],
    callback: CallbackServer,
    reader: User,
    settings: Any,
) -> None:
    settings.QUIRE_PEOPLE_MAKE_AGENTS = False
    client = registered_client(oauth_base, callback.uri)
    person = browserless(reader.username)
    screen = person.screen(client.authorize_url()).text
    assert "You have no agent you may connect an app to." in screen
    assert "A new agent of your own" not in screen
    refused = _decide_new(person, client, new_name="reed-bot")
    assert "making your own agent is switched off here" in refused.text.lower()
    assert not Agent.objects.exists() and not Grant.objects.exists()


def test_its_proposals_are_decided_by_others_never_by_its_owner(
    make_user: Callable[..., User], reviewer: User, sections: dict[str, Page]
) -> None:
    rhea = make_user("rhea", "Reviewers")
    agent = agent_services.agent_create_own(
        actor=rhea, name="rhea-claude", all_pages=True, can_edit_pages=True
    )
    page = sections["Handbook"]
    proposal = version_propose(
        actor=agent, page=page, body="Agent text.\n", change_summary="Agent edit"
    )
    with pytest.raises(Forbidden):
        version_approve(actor=rhea, version=proposal)
    version_approve(actor=reviewer, version=proposal)


def test_its_owner_and_admins_rename_and_revoke_it_and_no_one_else(
    make_user: Callable[..., User], reader: User, admin_user: User, sections: dict[str, Page]
) -> None:
    agent = agent_services.agent_create_own(actor=reader, name="reed-claude", all_pages=True)
    owner, stranger, admin = Client(), Client(), Client()
    owner.force_login(reader)
    stranger.force_login(make_user("sam"))
    admin.force_login(admin_user)

    listed = owner.get("/oauth/connections/").content.decode()
    assert "Your agents" in listed and 'value="reed-claude"' in listed
    assert stranger.post(f"/oauth/agents/{agent.pk}/rename/", {"name": "x"}).status_code == 404
    assert stranger.post(f"/oauth/agents/{agent.pk}/revoke/").status_code == 404
    owner.post(f"/oauth/agents/{agent.pk}/rename/", {"name": "reed-desk"})
    agent.refresh_from_db()
    assert agent.name == "reed-desk" and agent.is_active
    # The owner may not widen it past renaming: the rest is an admin's.
    with pytest.raises(Forbidden):
        agent_services.agent_update(actor=reader, agent=agent, can_edit_pages=True)
    owner.post(f"/oauth/agents/{agent.pk}/revoke/")
    agent.refresh_from_db()
    assert not agent.is_active

    again = agent_services.agent_create_own(actor=reader, name="reed-two", all_pages=True)
    assert "reed-two" in admin.get("/agents/").content.decode()
    admin.post(f"/oauth/agents/{again.pk}/revoke/")
    again.refresh_from_db()
    assert not again.is_active
