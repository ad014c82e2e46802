"""The admin's agent screens: create, tokens, page-set curation, preview and activity."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from agents import selectors
from agents.models import Agent, PageSetEntry
from agents.services import USE_WHEN_MAX_LINES, page_set_add
from core.actors import SystemActor
from core.models import AuditEvent
from core.tokens import token_hash
from reviews.actions.create import page_create
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import AgentKey, rpc, rpc_tool
from .fixtures_web import count_queries

MakePage = Callable[..., Page]
ClientAs = Callable[[User], Client]
TOKEN = re.compile(r"qa_[A-Za-z0-9_-]{40,}")


@pytest.fixture
def admin(client_as: ClientAs, admin_user: User) -> Client:
    return client_as(admin_user)


def detail_url(agent: Agent) -> str:
    return reverse("agents:detail", args=[agent.pk])


def preview_url(agent: Agent, **params: str) -> str:
    url = reverse("agents:preview", args=[agent.pk])
    if params:
        url += "?" + "&".join(f"{key}={value}" for key, value in params.items())
    return url


def shown_token(response: Any) -> str:
    """The token on the page a create or rotate redirects to (shown there once)."""
    if response.status_code == 302:
        response = response.client.get(response["Location"])
    assert response.status_code == 200, response.content
    tokens = set(TOKEN.findall(response.content.decode()))
    assert len(tokens) == 1, tokens
    return tokens.pop()


def text(response: Any) -> str:
    """The screen's own content, without the shared chrome (the sidebar lists every page)."""
    body = response.content.decode()
    if "<main" in body:
        body = body[body.index("<main") : body.index("</main>")]
    return html.unescape(body)


def table_row(body: str, name: str) -> str:
    start = body.index(f">{name}</a>")
    return body[start : body.index("</tr>", start)]


def entry_order(agent: Agent) -> list[str]:
    return list(
        PageSetEntry.objects.filter(agent=agent)
        .order_by("position")
        .values_list("page__public_id", flat=True)
    )


# --- who may use the screens -----------------------------------------------------------------


def _screens(agent: Agent, page: Page) -> list[tuple[str, str]]:
    pid = page.public_id
    return [
        ("get", reverse("agents:list")),
        ("get", reverse("agents:new")),
        ("post", reverse("agents:new")),
        ("get", detail_url(agent)),
        ("get", preview_url(agent)),
        ("post", reverse("agents:edit", args=[agent.pk])),
        ("post", reverse("agents:rotate", args=[agent.pk])),
        ("post", reverse("agents:revoke", args=[agent.pk])),
        ("post", reverse("agents:page_set_add", args=[agent.pk])),
        ("post", reverse("agents:page_set_update", args=[agent.pk, pid])),
        ("post", reverse("agents:page_set_move", args=[agent.pk, pid])),
        ("post", reverse("agents:page_set_remove", args=[agent.pk, pid])),
    ]


@pytest.mark.parametrize("who", ["reader", "editor", "reviewer"])
def test_it_refuses_every_screen_to_people_who_are_not_admins(
    request: pytest.FixtureRequest,
    who: str,
    client_as: ClientAs,
    make_agent: Callable[..., AgentKey],
    make_page: MakePage,
) -> None:
    page = make_page("Refunds")
    key = make_agent("support-bot", pages=(page,))
    client = client_as(request.getfixturevalue(who))
    before = token_hash(key.token)
    for method, url in _screens(key.agent, page):
        response = getattr(client, method)(
            url, {"name": "x", "direction": "up", "page": page.public_id}
        )
        assert response.status_code == 403, (method, url, response.status_code)
        assert key.token not in response.content.decode()
    key.agent.refresh_from_db()
    assert key.agent.is_active and key.agent.token_hash == before
    assert entry_order(key.agent) == [page.public_id]
    assert Agent.objects.count() == 1


def test_it_sends_anonymous_visitors_to_log_in(
    make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    page = make_page("Refunds")
    key = make_agent("support-bot", pages=(page,))
    for method, url in _screens(key.agent, page):
        response = getattr(Client(), method)(url)
        assert response.status_code == 302, (method, url)
        assert response["Location"].startswith(reverse("login"))


def test_it_lets_in_a_user_with_the_change_agent_permission(
    client_as: ClientAs, reader: User, make_agent: Callable[..., AgentKey]
) -> None:
    make_agent("support-bot")
    reader.user_permissions.add(Permission.objects.get(codename="change_agent"))
    response = client_as(User.objects.get(pk=reader.pk)).get(reverse("agents:list"))
    assert response.status_code == 200
    assert "support-bot" in text(response)


def test_it_shows_the_agents_link_to_admins_only(
    client_as: ClientAs, admin_user: User, reader: User
) -> None:
    link = f'href="{reverse("agents:list")}"'
    assert link in client_as(admin_user).get(reverse("wiki:home")).content.decode()
    assert link not in client_as(reader).get(reverse("wiki:home")).content.decode()


# --- list and create -------------------------------------------------------------------------


def test_it_lists_agents_with_owner_status_token_prefix_and_set_size(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    pages = [make_page(f"Page {n}") for n in range(3)]
    active = make_agent("support-bot", pages=tuple(pages))
    Agent.objects.filter(pk=active.agent.pk).update(owner=editor, description="Answers customers.")
    revoked = make_agent("old-bot", can_edit=True)
    admin.post(reverse("agents:revoke", args=[revoked.agent.pk]))
    body = text(admin.get(reverse("agents:list")))
    row = table_row(body, "support-bot")
    assert "Answers customers." in row and editor.username in row
    assert active.token[:10] + "…" in row and "active" in row and ">3</a>" in row
    assert "read only" in row
    old = table_row(body, "old-bot")
    assert "revoked" in old and "proposes edits" in old and ">0</a>" in old
    assert "New agent" in body


def test_it_creates_an_agent_and_shows_its_token_only_once(
    admin: Client, editor: User, fresh_rate_limits: None, settings: Any
) -> None:
    response = admin.post(
        reverse("agents:new"),
        {"name": "support-bot", "description": "Answers customers.", "owner": editor.pk},
        follow=True,
    )
    token = shown_token(response)
    # The token page came after a redirect: reloading it shows no token and makes none.
    assert response.redirect_chain[-1][0].endswith("/token/")
    again = admin.get(response.redirect_chain[-1][0])
    assert again.status_code == 200 and not TOKEN.findall(again.content.decode())
    assert "cannot be shown again" in again.content.decode()
    assert Agent.objects.filter(name="support-bot").count() == 1
    agent = Agent.objects.get(name="support-bot")
    assert agent.token_hash == token_hash(token)
    assert agent.owner == editor and agent.description == "Answers customers."
    assert agent.can_edit_pages is False and agent.is_active
    page = text(response)
    assert "shown only this once" in page
    assert settings.QUIRE_BASE_URL + "/mcp" in page
    config = json.loads(
        page[page.index('<pre id="client-config"') :].split(">", 1)[1].split("</pre>", 1)[0]
    )
    server = config["mcpServers"]["quire"]
    assert server["url"].endswith("/mcp") and server["type"] == "http"
    assert server["headers"] == {"Authorization": f"Bearer {token}"}
    assert "no-store" in response["Cache-Control"]
    # The token authenticates at the MCP endpoint: the agent gets its (empty) page set.
    assert rpc_tool(Client(), token, "browse")["structuredContent"] == {"pages": []}
    for url in (detail_url(agent), reverse("agents:list"), preview_url(agent)):
        assert token not in admin.get(url).content.decode()
    assert token[:10] + "…" in text(admin.get(detail_url(agent)))


def test_it_creates_an_agent_that_may_propose_edits(admin: Client) -> None:
    shown_token(admin.post(reverse("agents:new"), {"name": "docs-bot", "can_edit_pages": "on"}))
    assert Agent.objects.get(name="docs-bot").can_edit_pages is True


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("", "This field is required."),
        ("   ", "This field is required."),
        ("x" * 101, "at most 100 characters"),
        ("support-bot", "already exists"),
    ],
)
def test_it_refuses_a_bad_name_and_stores_nothing(
    admin: Client, make_agent: Callable[..., AgentKey], name: str, error: str
) -> None:
    make_agent("support-bot")
    response = admin.post(reverse("agents:new"), {"name": name})
    assert response.status_code == 400
    assert error in text(response)
    assert not TOKEN.search(response.content.decode())
    assert Agent.objects.count() == 1


# --- one agent: settings and tokens ----------------------------------------------------------


def test_it_saves_the_settings(
    admin: Client, make_agent: Callable[..., AgentKey], editor: User
) -> None:
    key = make_agent("support-bot")
    response = admin.post(
        reverse("agents:edit", args=[key.agent.pk]),
        {
            "name": "support-bot",
            "description": "Now also billing.",
            "owner": editor.pk,
            "can_edit_pages": "on",
        },
    )
    assert response.status_code == 302
    key.agent.refresh_from_db()
    assert key.agent.description == "Now also billing."
    assert key.agent.owner == editor and key.agent.can_edit_pages
    changes = text(admin.get(detail_url(key.agent))).split("Changes by admins", 1)[1]
    assert "agent.update</code> by ada" in changes


def test_it_keeps_an_owner_whose_account_was_deactivated(
    admin: Client, make_agent: Callable[..., AgentKey], editor: User
) -> None:
    key = make_agent("support-bot")
    Agent.objects.filter(pk=key.agent.pk).update(owner=editor)
    User.objects.filter(pk=editor.pk).update(is_active=False)
    body = admin.get(detail_url(key.agent)).content.decode()
    assert f'<option value="{editor.pk}" selected>' in body
    response = admin.post(
        reverse("agents:edit", args=[key.agent.pk]),
        {"name": "support-bot", "description": "Still Edna's.", "owner": editor.pk},
    )
    assert response.status_code == 302
    key.agent.refresh_from_db()
    assert key.agent.owner == editor and key.agent.description == "Still Edna's."


def test_it_refuses_renaming_to_a_taken_name_and_changes_nothing(
    admin: Client, make_agent: Callable[..., AgentKey]
) -> None:
    key = make_agent("support-bot")
    make_agent("docs-bot")
    response = admin.post(
        reverse("agents:edit", args=[key.agent.pk]),
        {"name": "docs-bot", "description": "Changed.", "can_edit_pages": "on"},
    )
    assert response.status_code == 400
    assert "already exists" in text(response)
    key.agent.refresh_from_db()
    assert key.agent.name == "support-bot" and key.agent.description == ""
    assert not key.agent.can_edit_pages


def test_it_rotates_the_token_and_the_old_one_stops_working(
    admin: Client, make_agent: Callable[..., AgentKey], fresh_rate_limits: None
) -> None:
    key = make_agent("support-bot")
    old_hash = key.agent.token_hash
    response = admin.post(reverse("agents:rotate", args=[key.agent.pk]), follow=True)
    new_token = shown_token(response)
    assert "previous token stopped working" in text(response)
    key.agent.refresh_from_db()
    assert key.agent.token_hash == token_hash(new_token) != old_hash
    assert token_hash(key.token) != key.agent.token_hash
    assert selectors.agent_by_token(key.token) is None
    assert selectors.agent_by_token(new_token) == key.agent
    assert rpc(Client(), key.token, "tools/list").status_code == 401
    assert new_token not in admin.get(detail_url(key.agent)).content.decode()


def test_it_revokes_an_agent_and_a_new_token_switches_it_back_on(
    admin: Client, make_agent: Callable[..., AgentKey], fresh_rate_limits: None
) -> None:
    key = make_agent("support-bot")
    response = admin.post(reverse("agents:revoke", args=[key.agent.pk]), follow=True)
    assert "Revoked support-bot" in text(response)
    key.agent.refresh_from_db()
    assert not key.agent.is_active
    assert selectors.agent_by_token(key.token) is None
    assert rpc(Client(), key.token, "tools/list").status_code == 401
    again = admin.post(reverse("agents:revoke", args=[key.agent.pk]), follow=True)
    assert "already revoked" in text(again)
    token = shown_token(admin.post(reverse("agents:rotate", args=[key.agent.pk])))
    key.agent.refresh_from_db()
    assert key.agent.is_active and selectors.agent_by_token(token) == key.agent


def test_it_answers_404_for_an_unknown_agent(admin: Client) -> None:
    assert admin.get(reverse("agents:detail", args=[999])).status_code == 404
    assert admin.post(reverse("agents:revoke", args=[999])).status_code == 404


# --- page set curation -----------------------------------------------------------------------


def test_it_adds_a_page_with_use_when_lines_and_always_include(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("support-bot")
    page = make_page("Refunds")
    response = admin.post(
        reverse("agents:page_set_add", args=[key.agent.pk]),
        {
            "page": page.public_id,
            "use_when": "Use when a customer asks about refunds.\n\n  Or chargebacks.  \n",
            "always_include": "on",
        },
    )
    assert response.status_code == 302
    entry = PageSetEntry.objects.get(agent=key.agent)
    assert entry.page == page and entry.always_include
    assert entry.use_when == ["Use when a customer asks about refunds.", "Or chargebacks."]
    body = text(admin.get(detail_url(key.agent)))
    assert "Refunds" in body and "Or chargebacks." in body and "always included" in body


def test_it_refuses_too_many_use_when_lines_and_stores_nothing(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("support-bot")
    page, other = make_page("Refunds"), make_page("Billing")
    key.give(other, use_when=["Use for billing."])
    lines = "\n".join(f"Line {n}." for n in range(USE_WHEN_MAX_LINES + 1))
    response = admin.post(
        reverse("agents:page_set_add", args=[key.agent.pk]),
        {"page": page.public_id, "use_when": lines},
    )
    assert response.status_code == 400
    assert f"at most {USE_WHEN_MAX_LINES} use-when lines" in text(response)
    assert entry_order(key.agent) == [other.public_id]
    pid = other.public_id
    response = admin.post(
        reverse("agents:page_set_update", args=[key.agent.pk, pid]),
        {f"{pid}-use_when": lines, f"{pid}-always_include": "on"},
    )
    assert response.status_code == 400
    body = text(response)
    assert f"at most {USE_WHEN_MAX_LINES} use-when lines" in body
    assert "Line 20." in body  # what the admin typed is kept, to correct it
    entry = PageSetEntry.objects.get(agent=key.agent)
    assert entry.use_when == ["Use for billing."] and not entry.always_include


def test_it_refuses_a_page_twice_an_archived_page_and_no_page(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    page, archived = make_page("Refunds"), make_page("Old policy")
    key = make_agent("support-bot", pages=(page,))
    wiki_services.page_archive(actor=editor, page=archived)
    url = reverse("agents:page_set_add", args=[key.agent.pk])
    twice = admin.post(url, {"page": page.public_id})
    assert twice.status_code == 400 and "already in support-bot's page set" in text(twice)
    gone = admin.post(url, {"page": archived.public_id})
    assert gone.status_code == 400 and "it is not live or it is archived" in text(gone)
    nothing = admin.post(url, {"page": ""})
    assert nothing.status_code == 400 and "Choose a page: type part of its title" in text(nothing)
    assert entry_order(key.agent) == [page.public_id]


def test_it_offers_only_live_pages_that_are_not_archived(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    key = make_agent("docs-bot", can_edit=True)
    live_page, archived = make_page("Refunds policy"), make_page("Refunds of old")
    wiki_services.page_archive(actor=editor, page=archived)
    waiting = page_create(actor=key.agent, title="Refunds draft", body="x").page
    # The picker asks the same endpoint as the new-page form's parent picker.
    found = admin.get(reverse("wiki:pick"), {"q": "refunds"}).json()["pages"]
    assert [page["pageId"] for page in found] == [live_page.public_id]
    assert archived.public_id not in str(found) and waiting.public_id not in str(found)
    body = admin.get(detail_url(key.agent)).content.decode()
    assert (
        "<select"
        not in body[
            body.index('id="add-page"') : body.index("</form>", body.index('id="add-page"'))
        ]
    )


def test_it_updates_an_entry(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    page = make_page("Refunds")
    key = make_agent("support-bot", pages=(page,))
    pid = page.public_id
    response = admin.post(
        reverse("agents:page_set_update", args=[key.agent.pk, pid]),
        {f"{pid}-use_when": "First.\nSecond.", f"{pid}-always_include": "on"},
    )
    assert response.status_code == 302
    entry = PageSetEntry.objects.get(agent=key.agent)
    assert entry.use_when == ["First.", "Second."] and entry.always_include


def test_it_removes_an_entry(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    first, second = make_page("Refunds"), make_page("Billing")
    key = make_agent("support-bot", pages=(first, second))
    response = admin.post(
        reverse("agents:page_set_remove", args=[key.agent.pk, first.public_id]), follow=True
    )
    assert "Removed “Refunds”" in text(response)
    assert entry_order(key.agent) == [second.public_id]
    missing = admin.post(reverse("agents:page_set_remove", args=[key.agent.pk, first.public_id]))
    assert missing.status_code == 404


def test_it_moves_entries_up_and_down(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    a, b, c = make_page("Alpha"), make_page("Beta"), make_page("Gamma")
    key = make_agent("support-bot", pages=(a, b, c))

    def move(page: Page, direction: str) -> None:
        url = reverse("agents:page_set_move", args=[key.agent.pk, page.public_id])
        assert admin.post(url, {"direction": direction}).status_code == 302

    move(c, "up")
    assert entry_order(key.agent) == [a.public_id, c.public_id, b.public_id]
    move(a, "down")
    assert entry_order(key.agent) == [c.public_id, a.public_id, b.public_id]
    move(c, "up")  # already first: nothing moves
    move(b, "down")  # already last
    assert entry_order(key.agent) == [c.public_id, a.public_id, b.public_id]
    bad = admin.post(
        reverse("agents:page_set_move", args=[key.agent.pk, a.public_id]),
        {"direction": "sideways"},
        follow=True,
    )
    assert "That move is not possible" in text(bad)
    assert entry_order(key.agent) == [c.public_id, a.public_id, b.public_id]


def test_it_does_not_touch_another_agents_entries(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    page = make_page("Refunds")
    mine, theirs = make_agent("support-bot"), make_agent("docs-bot", pages=(page,))
    pid = page.public_id
    for name in ("page_set_remove", "page_set_update", "page_set_move"):
        url = reverse(f"agents:{name}", args=[mine.agent.pk, pid])
        assert admin.post(url, {"direction": "up"}).status_code in (404, 302)
    assert entry_order(theirs.agent) == [pid]
    assert PageSetEntry.objects.get(agent=theirs.agent).use_when == ["Use for Refunds."]


def test_it_says_which_entries_the_agent_cannot_see(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    section = make_page("Support")
    make_page("Refunds", parent=section)
    make_page("Returns", parent=section)
    archived = make_page("Old policy")
    key = make_agent("support-bot", pages=(section, archived))
    wiki_services.page_archive(actor=editor, page=archived)
    body = text(admin.get(detail_url(key.agent)))
    assert "covers 3 pages" in body and "covers 0 pages" in body
    assert "Archived: the agent does not see it" in body
    assert "the agent sees <strong>3</strong> live pages" in body


# --- what the agent sees ---------------------------------------------------------------------


@pytest.fixture
def curated(
    make_agent: Callable[..., AgentKey], make_page: MakePage
) -> tuple[AgentKey, list[Page], list[Page]]:
    """An agent given a section (and so its child) and one page; three pages it is not given."""
    section = make_page("Support desk", "How the support desk works.\n")
    child = make_page("Refund policy", "Refunds take five days. Walrus.\n", parent=section)
    given = make_page("Pricing", "Plans and prices. Walrus.\n")
    secret = make_page("Salaries", "Salary bands. Walrus.\n")
    hr = make_page("HR handbook", "People matters.\n")
    hr_child = make_page("Walrus leave", "Leave policy. Walrus.\n", parent=hr)
    key = make_agent("support-bot")
    key.give(given, use_when=["Use when someone asks what Quire costs."], always=True)
    key.give(section, use_when=["Use for any support question."])
    return key, [given, section, child], [secret, hr, hr_child]


def test_it_previews_exactly_the_pages_in_the_set(
    admin: Client, curated: tuple[AgentKey, list[Page], list[Page]], fresh_rate_limits: None
) -> None:
    key, inside, outside = curated
    response = admin.get(preview_url(key.agent))
    assert response.status_code == 200
    body = text(response)
    for page in inside:
        assert page.title in body and page.public_id in body
    for page in outside:
        assert page.title not in body and page.public_id not in body
    assert "Use when someone asks what Quire costs." in body
    # The raw JSON is, character for character, the text the MCP tool sends the agent.
    raw = body[body.index('<pre class="ag-pre" id="browse-json" tabindex="0">') :].split(">", 1)[1]
    raw = raw.split("</pre>", 1)[0]
    result = rpc_tool(Client(), key.token, "browse")
    assert raw == result["content"][0]["text"]
    assert [p["pageId"] for p in json.loads(raw)["pages"]] == [p.public_id for p in inside]


def test_it_searches_and_reads_pages_as_the_agent(
    admin: Client, curated: tuple[AgentKey, list[Page], list[Page]], fresh_rate_limits: None
) -> None:
    key, inside, outside = curated
    body = text(admin.get(preview_url(key.agent, q="walrus")))
    assert "Refund policy" in body and "Pricing" in body
    assert "Salaries" not in body and "Walrus leave" not in body
    packed = text(admin.get(preview_url(key.agent, page=inside[2].public_id)))
    opening = 'id="page-json" tabindex="0">'
    raw = packed[packed.index(opening) + len(opening) :].split("</pre>")[0]
    assert json.loads(raw)["content"] == "Refunds take five days. Walrus.\n"
    called = rpc_tool(Client(), key.token, "get_page", pageId=inside[2].public_id)
    assert raw == called["content"][0]["text"]
    refused = text(admin.get(preview_url(key.agent, page=outside[0].public_id)))
    assert f"not_found: there is no page {outside[0].public_id} that you can read" in refused
    assert "Salary bands" not in refused
    unknown = text(admin.get(preview_url(key.agent, page="pg_zzzzzzzz")))
    assert "not_found: there is no page pg_zzzzzzzz" in unknown
    too_long = text(admin.get(preview_url(key.agent, q="x" * 2001)))
    assert "invalid_argument: query must be 1 to 2000 characters" in too_long
    # Only the one real MCP call above is in the agent's log; the preview's are not.
    assert AuditEvent.objects.filter(actor_agent=key.agent).count() == 1


def test_it_previews_four_tools_for_a_reader_and_nine_for_an_editor(
    admin: Client, make_agent: Callable[..., AgentKey]
) -> None:
    write = ("get_page_source", "create_page", "update_page", "edit_page", "append_to_page")
    reader = text(admin.get(preview_url(make_agent("support-bot").agent)))
    assert "Tools: 4" in reader and all(f">{name}</code>" not in reader for name in write)
    assert "4 read tools only." in reader
    editor = text(admin.get(preview_url(make_agent("docs-bot", can_edit=True).agent)))
    assert "Tools: 9" in editor and all(f">{name}</code>" in editor for name in write)
    assert "5 read tools (get_page_source among them" in editor and "4 write tools" in editor


def test_it_labels_each_tool_as_its_annotations_tell_the_agent(
    admin: Client, make_agent: Callable[..., AgentKey]
) -> None:
    editor = text(admin.get(preview_url(make_agent("docs-bot", can_edit=True).agent)))
    labels = dict(
        re.findall(
            r'<code class="ag-tool[^"]*">(\w+)</code> <span class="muted small">([^<]+)<', editor
        )
    )
    assert labels == {
        "browse": "read",
        "search_pages": "read",
        "get_page": "read",
        "recent_activity": "read",
        "get_page_source": "read, listed with edit rights",
        "create_page": "write",
        "update_page": "write",
        "edit_page": "write",
        "append_to_page": "write",
    }


def test_it_counts_the_tools_edit_rights_add_on_the_agent_form(admin: Client) -> None:
    page = text(admin.get("/agents/new/"))
    assert (
        "Adds get_page_source (reads a page's markdown) and 4 write tools (create_page, "
        "update_page, edit_page, append_to_page)." in page
    )


def test_it_shows_the_agents_recent_tool_calls(
    admin: Client, curated: tuple[AgentKey, list[Page], list[Page]], fresh_rate_limits: None
) -> None:
    key, inside, outside = curated
    client = Client()
    rpc_tool(client, key.token, "get_page", pageId=inside[1].public_id)
    rpc_tool(client, key.token, "get_page", pageId=outside[0].public_id)
    body = text(admin.get(detail_url(key.agent)))
    activity = body[body.index('id="activity"') :]
    assert "mcp.get_page" in activity and "not_found" in activity
    assert inside[1].public_id in activity
    assert activity.index("not_found") < activity.index(inside[1].public_id)  # newest first
    assert f'{{"pageId": "{outside[0].public_id}"}}' in activity


def test_it_shortens_long_page_lists_in_the_activity(
    admin: Client,
    make_agent: Callable[..., AgentKey],
    make_page: MakePage,
    fresh_rate_limits: None,
) -> None:
    pages = [make_page(f"Page {n:02d}") for n in range(15)]
    key = make_agent("support-bot", pages=tuple(pages))
    assert len(rpc_tool(Client(), key.token, "browse")["structuredContent"]["pages"]) == 15
    activity = text(admin.get(detail_url(key.agent))).split('id="activity"', 1)[1]
    # A browse's audit row keeps its first page and how many it returned, not every id.
    assert "mcp.browse" in activity and "and 14 more" in activity
    assert pages[0].public_id in activity and pages[1].public_id not in activity


# --- SQL queries -----------------------------------------------------------------------------


@pytest.mark.parametrize("sizes", [(5, 50)])
def test_it_lists_agents_with_a_fixed_number_of_queries(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, sizes: tuple[int, int]
) -> None:
    page = make_page("Refunds")
    counts = []
    for size in sizes:
        while Agent.objects.count() < size:
            make_agent(f"agent-{Agent.objects.count():03d}", pages=(page,))
        counts.append(count_queries(admin, reverse("agents:list")))
    assert counts[0] == counts[1], counts


@pytest.mark.parametrize("sizes", [(5, 50)])
def test_it_shows_an_agent_and_its_preview_with_a_fixed_number_of_queries(
    admin: Client,
    make_agent: Callable[..., AgentKey],
    grow_wiki: Callable[[int], list[Page]],
    fresh_rate_limits: None,
    sizes: tuple[int, int],
) -> None:
    key = make_agent("support-bot")
    pages = grow_wiki(sizes[1] * 2)
    detail, preview = [], []
    # With Redis the session is cached after its first read from the database: read it now.
    admin.get(detail_url(key.agent))
    for size in sizes:
        for page in pages[len(entry_order(key.agent)) : size]:
            page_set_add(
                actor=SystemActor("tests"), agent=key.agent, page=page, use_when=["Use it."]
            )
        for _ in range(size - AuditEvent.objects.filter(actor_agent=key.agent).count()):
            rpc_tool(Client(), key.token, "browse")
        assert len(entry_order(key.agent)) == size
        detail.append(count_queries(admin, detail_url(key.agent)))
        preview.append(
            count_queries(admin, preview_url(key.agent, q="quokka", page=pages[0].public_id))
        )
    assert detail[0] == detail[1], detail
    assert preview[0] == preview[1], preview


# --- in a real browser -------------------------------------------------------------------------


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_it_walks_the_admins_path_in_a_browser(
    live_server: Any,
    admin_user: User,
    make_page: MakePage,
    browser_page: Any,
    screenshots: Path,
    throttle_cache: None,
) -> None:
    from playwright.sync_api import expect

    support = make_page("Support desk", "How the support desk works.\n")
    make_page("Refund policy", "Refunds take five days.\n", parent=support)
    make_page("Pricing", "Plans and prices.\n")
    salaries = make_page("Salaries", "Salary bands.\n")
    page = browser_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    base = live_server.url

    page.goto(f"{base}/login/?next=/agents/")
    page.fill("input[name=username]", admin_user.username)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")
    expect(page.locator(".topnav")).to_contain_text("Agents")

    # Create: the token is shown once, with a working copy button.
    page.click("text=New agent")
    page.fill("#id_name", "support-bot")
    page.fill("#id_description", "Answers customers' questions.")
    page.click("button[type=submit].button-primary")
    token = page.input_value("#agent-token")
    assert Agent.objects.get(name="support-bot").token_hash == token_hash(token)
    # The copy button works once the page's script has run: wait for it under load.
    page.wait_for_load_state("load")
    page.click("[data-copy-target=agent-token]")
    expect(page.locator("[data-copy-target=agent-token]")).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == token
    expect(page.locator("#client-config")).to_contain_text(f"Bearer {token}")
    page.screenshot(path=str(screenshots / "agent-token.png"), full_page=True)

    # Curate: add two pages, move the second up, mark one always included.
    page.click("text=Now give support-bot its pages")
    page.wait_for_load_state("load")  # the picker's script is set up
    expect(page.locator("body")).not_to_contain_text(token)
    page.fill("#id_page_search", "support")
    page.locator("#page-options [role=option]", has_text="Support desk").click()
    page.fill("#id_use_when", "Use for any support question.\nUse for refunds.")
    page.click("#add-page button[type=submit]")
    page.fill("#id_page_search", "pric")
    page.locator("#page-options [role=option]", has_text="Pricing").click()
    page.fill("#id_use_when", "Use when someone asks what it costs.")
    page.check("#id_always_include")
    page.click("#add-page button[type=submit]")
    entries = page.locator("ol.ag-entries > li")
    expect(entries).to_have_count(2)
    entries.nth(1).get_by_role("button", name="Move Pricing up").click()
    expect(entries.nth(0)).to_contain_text("Pricing")
    expect(entries.nth(0)).to_contain_text("always included")
    expect(entries.nth(1)).to_contain_text("covers 2 pages")
    # Two calls from the agent, made outside Playwright's event loop, show in its activity.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(rpc_tool, Client(), token, "browse").result(timeout=60)
        pool.submit(rpc_tool, Client(), token, "get_page", pageId=salaries.public_id).result(60)
    page.reload()
    expect(page.locator("#activity")).to_contain_text("not_found")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / "agent-page.png"), full_page=True)

    # Preview: the two entries' three pages, not the salaries; search as the agent.
    page.click("text=See what it sees")
    browse = page.locator("ol.ag-browse > li")
    expect(browse).to_have_count(3)
    expect(browse.nth(0)).to_contain_text("Pricing")
    expect(page.locator("#browse")).not_to_contain_text("Salaries")
    page.fill("#preview-q", "refunds")
    page.click("#search button[type=submit]")
    expect(page.locator("#search .result")).to_have_count(1)
    page.locator("#search .result-title").click()
    expect(page.locator("#page-json")).to_contain_text('"content": "Refunds take five days.')
    expect(page.locator(".topbar-search input")).to_have_value("")
    expect(page.locator("#preview-q")).to_have_value("refunds")
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(screenshots / "agent-preview.png"), full_page=True)

    # Remove, after confirming.
    page.goto(f"{base}/agents/{Agent.objects.get(name='support-bot').pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("ol.ag-entries > li").nth(0).get_by_role("button", name="Remove").click()
    expect(page.locator("ol.ag-entries > li")).to_have_count(1)
    expect(page.locator(".messages")).to_contain_text("Removed “Pricing”")
