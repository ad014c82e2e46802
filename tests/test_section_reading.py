"""Reading rights per section (issue 36, point 1): once an admin grants read on a section to
a group, a person outside it never sees the section anywhere, and neither do their agents.

Unique words are planted in a Legal section's titles and bodies; a public page links to
them. The admin grants the section to Legal over REST. A reviewer outside Legal then asks
every door (web pages, the tree, search, history, diffs, REST, mail) and their own agent
asks every MCP tool: no answer may hold a planted word. A Legal member sees it all.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.core.mail import EmailMessage
from django.test import Client

from agents import services as agent_services
from core.actors import SystemActor
from core.errors import Forbidden
from core.models import AuditEvent
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.models import Notification
from wiki.models import Page, PageGrant
from wiki.roles import REVIEWERS
from wiki.scope import person_scope
from wiki.selectors import page_tree

from .fixtures_mcp import rpc_tool

pytestmark = pytest.mark.django_db

ClientAs = Callable[[User], Client]
SECTION, INSIDE, DRAFT = "quokkalegal", "hushpenguin", "draftnarwhal"
PLANTED = (SECTION, INSIDE, DRAFT)


@dataclass
class Legal:
    section: Page
    nda: Page
    public: Page
    lana: User  # in Legal and Reviewers
    nick: User  # in Reviewers only


@pytest.fixture
def legal(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> Legal:
    section = make_page(f"The {SECTION} section", f"Counsel {SECTION} notes.\n")
    nda = make_page(f"The {INSIDE} agreement", f"Sign the {INSIDE} form.\n", parent=section)
    public = make_page(
        "Public handbook",
        f"Welcome. See [[{section.public_id}]] and [[{nda.public_id}]] for more.\n",
    )
    lana = make_user("lana", "Legal", REVIEWERS)
    nick = make_user("nick", REVIEWERS)
    # The admin grants the section to Legal: read (and so everything) for Legal alone.
    granted = client_as(admin_user).post(
        f"/api/v1/pages/{section.public_id}/grants/",
        data=json.dumps([{"group": "Legal", "rights": ["read", "propose", "decide"]}]),
        content_type="application/json",
    )
    assert granted.status_code == 201, granted.content
    return Legal(section, nda, public, lana, nick)


def assert_clean(texts: list[str]) -> None:
    for text in texts:
        for word in PLANTED:
            at = text.lower().find(word)
            assert at < 0, f"{word!r} leaked into: {text[max(0, at - 300) : at + 100]}"


def test_it_hides_the_section_from_a_person_outside_it_through_web_and_rest(
    legal: Legal, client_as: ClientAs, editor: User
) -> None:
    section, nda, public = legal.section, legal.nda, legal.public
    # A proposal inside the section: its history and diff exist for those who may read it.
    version_propose(actor=legal.lana, page=nda, body=f"Sign the {INSIDE} form twice. {DRAFT}\n")
    nick = client_as(legal.nick)
    hidden = [
        f"/p/{section.public_id}/",
        f"/p/{nda.public_id}/",
        f"/reviews/pages/{nda.public_id}/history/",
        f"/reviews/pages/{nda.public_id}/v2/",
        f"/reviews/pages/{nda.public_id}/compare/?a=1&b=2",
        f"/api/v1/pages/{nda.public_id}/",
        f"/api/v1/pages/{nda.public_id}/versions/",
        f"/api/v1/pages/{nda.public_id}/versions/2/",
        f"/api/v1/pages/?parent={section.public_id}",
    ]
    shown = [
        "/",
        f"/p/{public.public_id}/",
        # Searches by words of the hidden pages (the planted ones would echo the query).
        "/search/?q=counsel+notes",
        "/search/?q=sign+form",
        "/pages/pick/?q=the",
        "/reviews/",  # nick reviews, but not what he may not read
        "/api/v1/reviews/",
        "/api/v1/pages/",
        "/api/v1/pages/?q=sign+form",
        f"/api/v1/pages/{public.public_id}/",
    ]
    texts = []
    for url in hidden:
        response = nick.get(url)
        assert response.status_code in (200, 404), url
        if response.status_code == 200:
            assert response.json()["results"] == [], url
        texts.append(response.content.decode())
    for url in shown:
        response = nick.get(url)
        assert response.status_code == 200, url
        texts.append(response.content.decode())
    assert_clean(texts)

    # A Legal member reads it all, through the same doors.
    lana = client_as(legal.lana)
    assert lana.get(f"/p/{nda.public_id}/").status_code == 200
    assert INSIDE in lana.get("/search/?q=sign+form").content.decode()
    assert SECTION in lana.get("/").content.decode()
    assert INSIDE in lana.get("/api/v1/pages/?q=sign+form").content.decode()
    assert lana.get(f"/reviews/pages/{nda.public_id}/history/").status_code == 200
    assert INSIDE in lana.get("/reviews/").content.decode()
    # An editor outside Legal publishes nowhere in it either: they cannot even open it.
    assert client_as(editor).get(f"/p/{nda.public_id}/edit/").status_code == 404


def test_it_mails_nobody_about_a_section_they_may_not_read(
    legal: Legal, mailoutbox: list[EmailMessage], make_user: Callable[..., User]
) -> None:
    nda = legal.nda
    proposal = version_propose(actor=make_user("lara", "Legal"), page=nda, body=f"New {DRAFT}.\n")
    asked = set(Notification.objects.filter(version=proposal).values_list("recipient", flat=True))
    assert legal.nick.pk not in asked
    assert legal.lana.pk in asked
    assert all("nick@example.com" not in message.to for message in mailoutbox)


def test_it_keeps_the_section_from_an_agent_whose_owner_may_not_read_it(
    legal: Legal, client: Client, admin_user: User
) -> None:
    section, nda, public = legal.section, legal.nda, legal.public
    nicks, nick_token = agent_services.agent_create(
        actor=SystemActor("tests"), name="nick-bot", owner=legal.nick, all_pages=True
    )
    lanas, lana_token = agent_services.agent_create(
        actor=SystemActor("tests"), name="lana-bot", owner=legal.lana, all_pages=True
    )
    calls: list[tuple[str, dict[str, object]]] = [
        ("browse", {}),
        ("browse", {"under": section.public_id}),
        ("get_page", {"pageId": public.public_id}),
        ("get_page", {"pageId": nda.public_id}),
        ("get_page", {"pageId": section.public_id}),
        ("get_page_source", {"pageId": nda.public_id}),
        ("search_pages", {"query": "sign form"}),
        ("search_pages", {"query": "counsel notes"}),
        ("search_pages", {"query": "the"}),
        ("recent_activity", {}),
    ]
    texts = [json.dumps(rpc_tool(client, nick_token, tool, **args)) for tool, args in calls]
    assert_clean(texts)
    # The owner in Legal: the agent finds the section by the same calls.
    found = json.dumps(rpc_tool(client, lana_token, "search_pages", query="sign form"))
    assert nda.public_id in found

    # The admin cannot put the section in a set whose agent's owner may not read it.
    agent_services.page_set_all_pages(actor=admin_user, agent=nicks, all_pages=False)
    with pytest.raises(Forbidden, match="nick-bot's owner \\(nick\\) may not read"):
        agent_services.page_set_add(actor=admin_user, agent=nicks, page=nda)
    agent_services.page_set_add(actor=admin_user, agent=lanas, page=nda)


def test_it_hides_a_section_added_to_an_agents_set_before_the_grant(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client: Client,
    client_as: ClientAs,
) -> None:
    section = make_page(f"The {SECTION} section", f"Counsel {SECTION} notes.\n")
    make_user("lana", "Legal")
    owner = make_user("nick")
    _agent, token = agent_services.agent_create(
        actor=SystemActor("tests"), name="nick-bot", owner=owner, pages=[section]
    )
    before = json.dumps(rpc_tool(client, token, "search_pages", query="counsel notes"))
    assert section.public_id in before
    client_as(admin_user).post(
        f"/api/v1/pages/{section.public_id}/grants/",
        data=json.dumps([{"group": "Legal", "rights": ["read"]}]),
        content_type="application/json",
    )
    texts = [
        json.dumps(rpc_tool(client, token, tool, **args))
        for tool, args in [
            ("browse", {}),
            ("search_pages", {"query": "counsel notes"}),
            ("get_page", {"pageId": section.public_id}),
        ]
    ]
    assert_clean(texts)


def test_it_lets_an_admin_see_and_change_grants_on_the_page_in_the_browser(
    legal: Legal, admin_user: User, client_as: ClientAs, editor: User
) -> None:
    url = f"/p/{legal.nda.public_id}/access/"
    assert client_as(editor).get(f"/p/{legal.public.public_id}/access/").status_code == 403
    assert client_as(editor).get(url).status_code == 404  # they may not even read it
    admin = client_as(admin_user)
    screen = admin.get(url).content.decode()
    # Read comes from the section's grant, publish from the default.
    assert f'<a href="/p/{legal.section.public_id}/access/">{legal.section.path}</a>' in screen
    assert "Editors" in screen and "The default" in screen
    refused = admin.post(url, {"group": "Legal"})
    assert refused.status_code == 400 and "Tick at least one right" in refused.content.decode()
    admin.post(url, {"group": "Reviewers", "rights": ["read", "decide"]}, follow=True)
    grant = PageGrant.objects.get(page=legal.nda)
    assert (grant.group.name, grant.rights) == ("Reviewers", ["read", "decide"])
    assert AuditEvent.objects.filter(action="grant.set", page=legal.nda).exists()
    admin.post(url, {"remove": grant.pk})
    assert not PageGrant.objects.filter(page=legal.nda).exists()
    assert AuditEvent.objects.filter(action="grant.delete", page=legal.nda).exists()


def test_it_lifts_a_subsection_granted_back_into_the_hidden_sections_place(
    legal: Legal, client_as: ClientAs, admin_user: User
) -> None:
    """A section hidden from Nick holds two pages granted back to his group, one right under
    it, one a level deeper: his tree shows both where the section would be, and neither the
    tree nor the breadcrumbs name the section or the page between."""

    def make(title: str, parent: Page) -> Page:  # an admin publishes anywhere
        version = page_create(
            actor=admin_user, title=title, body="Text.\n", parent=parent, publish=True
        )
        return Page.objects.get(pk=version.page_id)

    mid = make(f"Older {SECTION} matters", legal.section)
    shared = make("Shared wombat checklist", mid)
    open_nda = make("Open otter form", legal.section)
    for page in (shared, open_nda):
        granted = client_as(admin_user).post(
            f"/api/v1/pages/{page.public_id}/grants/",
            data=json.dumps([{"group": REVIEWERS, "rights": ["read"]}]),
            content_type="application/json",
        )
        assert granted.status_code == 201, granted.content
    nick = client_as(legal.nick)
    home = nick.get("/").content.decode()
    assert shared.public_id in home and open_nda.public_id in home
    on_page = nick.get(f"/p/{shared.public_id}/").content.decode()
    assert shared.public_id in on_page and open_nda.public_id in on_page
    assert_clean([home, on_page])
    assert "Older" not in home + on_page
    # The top level counts them: the public page, and the two lifted ones.
    tree = page_tree(reader=person_scope(legal.nick))
    assert {node.public_id for node in tree.roots} == {
        legal.public.public_id,
        shared.public_id,
        open_nda.public_id,
    }
    assert tree.root_count == 3
