"""Names never cross a hidden page (issue 46, point 2): a section hidden from a person, with a
subsection granted back to them inside it, is named nowhere they or their agents look.

The setup, from outside: a section `The quokkalegal section` read by Legal alone, a
subsection under it (`Wombat templates`) granted back to Staff, a form under that; Stan is
in Staff and Reviewers, not in Legal; his agents hold the section in their set (added before
it was granted away) or every page. Before this, the section's slug showed in every path of
the granted-back pages and its id as their `parentId`, the picker matched on its slug, and
`browse(under=<its slug>)` was accepted. A path a reader is shown now starts below the
deepest page on it they may not read (for an agent, at its own entry at the highest).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents import selectors as agent_selectors
from agents import services as agent_services
from core.actors import SystemActor
from reviews import workflows
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.mail import compose
from reviews.models import Notification
from wiki.models import Page
from wiki.roles import EDITORS

from .fixtures_mcp import MCP, rpc_tool

ClientAs = Callable[[User], Client]
HIDDEN = "quokkalegal"


@dataclass
class Legal:
    section: Page
    templates: Page
    form: Page
    public: Page
    stan: User  # Staff and Reviewers, not Legal
    section_bot: str  # token of Stan's agent whose set holds the section
    every_bot: str  # token of Stan's agent with every page

    @property
    def hidden(self) -> tuple[str, ...]:
        """What may not appear in any answer to Stan or his agents."""
        return (HIDDEN, self.section.public_id, self.section.slug)

    def shown(self, page: Page) -> str:
        """A granted-back page's path as Stan sees it: from the subsection down."""
        return page.path.removeprefix(self.section.path + "/")


def grant(client: Client, page: Page, group: str) -> None:
    response = client.post(
        f"/api/v1/pages/{page.public_id}/grants/",
        data=json.dumps([{"group": group, "rights": ["read"]}]),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content


def build_legal(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> Legal:
    section = make_page(f"The {HIDDEN} section", "Counsel notes.\n")
    templates = make_page("Wombat templates", "Shared templates.\n", parent=section)
    form = make_page("Otter form", "Sign the otter form.\n", parent=templates)
    public = make_page("Public handbook", "Welcome.\n")
    stan = make_user("stan", "Staff", "Reviewers")
    lara = make_user("lara", "Legal", "Staff")
    _section_bot, section_token = agent_services.agent_create(
        actor=SystemActor("tests"),
        name="stan-bot",
        owner=stan,
        can_edit_pages=True,
        pages=[section, public],
    )
    _every, every_token = agent_services.agent_create(
        actor=SystemActor("tests"), name="stan-all", owner=stan, all_pages=True, can_edit_pages=True
    )
    admin = client_as(admin_user)
    grant(admin, section, "Legal")
    grant(admin, templates, "Staff")
    # A proposal on the form waits in review: Stan (a reviewer who reads it) sees it listed.
    version_propose(actor=lara, page=form, body="Sign the otter form twice.\n")
    return Legal(section, templates, form, public, stan, section_token, every_token)


@pytest.fixture
def legal(
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> Legal:
    return build_legal(make_page, make_user, admin_user, client_as)


def assert_clean(legal: Legal, answer: Any) -> None:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    for word in legal.hidden:
        at = text.lower().find(word.lower())
        assert at < 0, f"{word!r} leaked into: {text[max(0, at - 300) : at + 100]}"


def paths_of(pages: list[dict[str, Any]]) -> dict[str, str]:
    return {page["pageId"]: page["path"] for page in pages}


# --- MCP, over HTTP with the official client ----------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_names_no_hidden_page_to_an_agent_through_any_tool(
    mcp: MCP,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    client_as: ClientAs,
) -> None:
    legal = build_legal(make_page, make_user, admin_user, client_as)
    templates, form = legal.templates, legal.form
    for token in (legal.section_bot, legal.every_bot):
        browsed = mcp.ok(token, "browse")
        assert paths_of(browsed["pages"])[form.public_id] == legal.shown(form)
        assert paths_of(browsed["pages"])[templates.public_id] == "wombat-templates"
        under = mcp.ok(token, "browse", under="wombat-templates")
        assert paths_of(under["pages"]) == {
            templates.public_id: "wombat-templates",
            form.public_id: "wombat-templates/otter-form",
        }
        found = mcp.ok(token, "search_pages", query="otter form")
        assert paths_of(found["results"])[form.public_id] == legal.shown(form)
        page = mcp.ok(token, "get_page", pageId=form.public_id)
        assert page["path"] == legal.shown(form)
        top = mcp.ok(token, "get_page_source", pageId=templates.public_id)
        assert (top["path"], top["parentId"]) == ("wombat-templates", None)
        source = mcp.ok(token, "get_page_source", pageId=form.public_id)
        assert (source["path"], source["parentId"]) == (legal.shown(form), templates.public_id)
        activity = mcp.ok(token, "recent_activity")
        assert paths_of(activity["published"])[form.public_id] == legal.shown(form)
        for answer in (browsed, under, found, page, top, source, activity):
            assert_clean(legal, answer)
        # The hidden section's path is one it cannot browse, as a missing one; so is the
        # subsection's whole path.
        for hidden in (legal.section.path, legal.section.path + "/wombat-templates"):
            missing = mcp.error(token, "browse", under="no-such-page")
            assert mcp.error(token, "browse", under=hidden) == missing.replace(
                "no-such-page", hidden
            )


# --- the same, through the test client (the same code path), one door at a time ---------------


@pytest.mark.django_db
def test_it_starts_an_agents_paths_below_the_hidden_section(legal: Legal, client: Client) -> None:
    for token in (legal.section_bot, legal.every_bot):
        result = rpc_tool(client, token, "browse")["structuredContent"]
        assert paths_of(result["pages"])[legal.form.public_id] == "wombat-templates/otter-form"
        assert_clean(legal, result)


@pytest.mark.django_db
def test_it_refuses_browse_under_the_hidden_sections_path_and_takes_the_short_one(
    legal: Legal, client: Client
) -> None:
    for token in (legal.section_bot, legal.every_bot):
        hidden = rpc_tool(client, token, "browse", under=legal.section.path)
        missing = rpc_tool(client, token, "browse", under="no-such-page")
        assert hidden["isError"], hidden
        # Answered as a path that is not there (the answer echoes what the agent sent).
        assert json.dumps(hidden) == json.dumps(missing).replace("no-such-page", legal.section.path)
        searched = rpc_tool(client, token, "search_pages", query="otter", under=legal.section.path)
        assert searched["structuredContent"]["results"] == []
        short = rpc_tool(client, token, "search_pages", query="otter", under="wombat-templates")
        assert [hit["pageId"] for hit in short["structuredContent"]["results"]] == [
            legal.form.public_id
        ]


@pytest.mark.django_db
def test_it_gives_no_hidden_parent_id_in_get_page_source(legal: Legal, client: Client) -> None:
    for token in (legal.section_bot, legal.every_bot):
        source = rpc_tool(client, token, "get_page_source", pageId=legal.templates.public_id)
        assert source["structuredContent"]["parentId"] is None
        assert source["structuredContent"]["path"] == "wombat-templates"


@pytest.mark.django_db
def test_it_names_no_hidden_page_in_search_get_page_and_recent_activity(
    legal: Legal, client: Client
) -> None:
    for token in (legal.section_bot, legal.every_bot):
        answers = [
            rpc_tool(client, token, "search_pages", query="otter form"),
            rpc_tool(client, token, "get_page", pageId=legal.form.public_id),
            rpc_tool(client, token, "recent_activity"),
        ]
        for answer in answers:
            assert not answer.get("isError"), answer
            assert_clean(legal, answer)


@pytest.mark.django_db
def test_it_names_the_entry_and_not_above_for_a_person_who_reads_it_all(
    legal: Legal, client: Client, make_user: Callable[..., User]
) -> None:
    """A Legal member's agent is shown the section, from its own entry down, as before."""
    lana = make_user("lana", "Legal", "Staff")
    _agent, token = agent_services.agent_create(
        actor=SystemActor("tests"), name="lana-bot", owner=lana, pages=[legal.section]
    )
    browsed = rpc_tool(client, token, "browse")["structuredContent"]
    assert paths_of(browsed["pages"])[legal.form.public_id] == legal.form.path
    source = rpc_tool(client, token, "get_page", pageId=legal.form.public_id)
    assert source["structuredContent"]["path"] == legal.form.path


# --- REST ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_names_no_hidden_page_in_rest_pages_and_reviews(
    legal: Legal, client_as: ClientAs
) -> None:
    stan = client_as(legal.stan)
    templates, form = legal.templates, legal.form
    top = stan.get(f"/api/v1/pages/{templates.public_id}/").json()
    assert (top["path"], top["parentId"]) == ("wombat-templates", None)
    detail = stan.get(f"/api/v1/pages/{form.public_id}/").json()
    assert (detail["path"], detail["parentId"]) == (legal.shown(form), templates.public_id)
    listed = stan.get("/api/v1/pages/").json()["results"]
    assert paths_of(listed)[form.public_id] == legal.shown(form)
    searched = stan.get("/api/v1/pages/?q=otter+form").json()["results"]
    assert paths_of(searched)[form.public_id] == legal.shown(form)
    # A hidden parent lists nothing under it, as a missing one.
    assert stan.get(f"/api/v1/pages/?parent={legal.section.public_id}").json()["results"] == []
    # Nor do the versions of the granted-back page name its hidden parent.
    versions = stan.get(f"/api/v1/pages/{templates.public_id}/versions/").json()["results"]
    first = stan.get(f"/api/v1/pages/{templates.public_id}/versions/1/").json()
    assert first["parentId"] is None
    assert stan.get(f"/api/v1/pages/{form.public_id}/versions/1/").json()["parentId"] == (
        templates.public_id
    )
    reviews = stan.get("/api/v1/reviews/").json()["results"]
    assert [review["pagePath"] for review in reviews] == [legal.shown(form)]
    assert stan.get(f"/api/v1/reviews/?path={legal.section.path}").json()["results"] == []
    assert len(stan.get("/api/v1/reviews/?path=wombat-templates").json()["results"]) == 1
    for answer in (top, detail, listed, searched, versions, first, reviews):
        assert_clean(legal, answer)


# --- the web ------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_names_no_hidden_page_in_web_search_the_queue_and_the_picker(
    legal: Legal, client_as: ClientAs
) -> None:
    stan = client_as(legal.stan)
    searched = stan.get("/search/?q=otter+form").content.decode()
    assert f'<div class="result-path muted small">{legal.shown(legal.form)}</div>' in searched
    queue = stan.get("/reviews/").content.decode()
    assert legal.form.public_id in queue
    picked = stan.get("/pages/pick/?q=otter").json()["pages"]
    assert paths_of(picked) == {legal.form.public_id: legal.shown(legal.form)}
    for answer in (searched, queue, picked):
        assert_clean(legal, answer)


@pytest.mark.django_db
def test_it_never_matches_the_picker_on_a_hidden_slug(legal: Legal, client_as: ClientAs) -> None:
    stan = client_as(legal.stan)
    for probe in (HIDDEN, f"the {HIDDEN}", legal.section.path, legal.section.path + "/wom"):
        assert stan.get("/pages/pick/", {"q": probe}).json()["pages"] == [], probe
    # The path Stan is shown is what the picker matches on.
    picked = stan.get("/pages/pick/", {"q": "wombat-templates/ot"}).json()["pages"]
    assert picked[0] == {
        "pageId": legal.form.public_id,
        "title": "Otter form",
        "path": "wombat-templates/otter-form",
    }


@pytest.mark.django_db
def test_it_names_no_hidden_page_on_the_move_screen_of_a_granted_back_page(
    legal: Legal, client_as: ClientAs, make_page: Callable[..., Page], admin_user: User
) -> None:
    """An editor outside Legal moves pages inside the subsection granted back to them: the
    screen says where a page is, and lists its siblings to place it among, as they see them."""
    page_create(
        actor=admin_user,
        title=f"Sealed {HIDDEN} brief",
        body="Counsel only.\n",
        parent=legal.section,
        publish=True,
    )
    spare = make_page("Spare sheet", "Text.\n")
    legal.stan.groups.add(Group.objects.get_or_create(name=EDITORS)[0])
    stan = client_as(legal.stan)
    screen = stan.get(f"/p/{legal.templates.public_id}/move/").content.decode()
    assert "Now at <code>wombat-templates</code>." in screen
    assert_clean(legal, screen)
    moved = stan.post(
        f"/p/{spare.public_id}/move/", {"parent": legal.templates.public_id}, follow=True
    )
    assert "its address is now wombat-templates/spare-sheet." in moved.content.decode()
    assert_clean(legal, moved.content.decode())


@pytest.mark.django_db
def test_it_names_no_hidden_page_as_where_a_workflow_comes_from(
    legal: Legal, client_as: ClientAs, admin_user: User
) -> None:
    """A workflow assigned to the hidden section applies to the pages granted back inside it:
    its name and steps are said, not the page it is assigned to."""
    review = workflows.workflow_create(
        actor=admin_user,
        name="Counsel review",
        steps=[{"name": "Counsel", "group": "Staff", "approvals": 1}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=review, page=legal.section)
    stan = client_as(legal.stan)
    page = stan.get(f"/p/{legal.form.public_id}/").content.decode()
    assert "Changes are reviewed by" in page and "Counsel review" in page
    applied = stan.get(f"/api/v1/pages/{legal.form.public_id}/workflow").json()
    assert (applied["workflow"], applied["source"]) == ("Counsel review", None)
    assert_clean(legal, page)
    assert_clean(legal, applied)


# --- mail -------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_names_no_hidden_page_in_the_review_request_mail(legal: Legal) -> None:
    asked = Notification.objects.get(recipient=legal.stan, version__page=legal.form)
    message = compose(asked)
    assert message is not None
    assert f"Page:     Otter form ({legal.shown(legal.form)})" in message.body
    assert_clean(legal, f"{message.subject}{message.body}")


# --- what it costs --------------------------------------------------------------------------


@pytest.mark.django_db
def test_it_costs_no_query_more_but_for_search_hits_and_browse_under_a_path(
    legal: Legal, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The path's hidden start is worked out in the statement that reads the rows; a search
    reads it for its hits in one query more (after ranking, so the search statements and
    their plans stay as they were), and browse under a path finds the pages the agent is
    shown by that path in one. An agent with no owner pays neither: no grant hides a page
    above one it reads (it reads none under a grant)."""
    monkeypatch.setattr(agent_selectors, "TOKEN_CACHE_SECONDS", 3600.0)
    monkeypatch.setattr(agent_services, "LAST_USED_RESOLUTION", timedelta(hours=1))
    _agent, ownerless = agent_services.agent_create(
        actor=SystemActor("tests"), name="nobodys-all", all_pages=True, can_edit_pages=True
    )
    public = legal.public.public_id
    calls: list[tuple[str, dict[str, Any]]] = [
        ("browse", {}),
        ("get_page", {"pageId": public}),
        ("get_page_source", {"pageId": public}),
        ("recent_activity", {}),
        ("search_pages", {"query": "public handbook"}),
        ("browse", {"under": "public-handbook"}),
    ]

    def counts(token: str) -> list[int]:
        rpc_tool(client, token, "browse")  # finds and keeps the token
        found = []
        for tool, arguments in calls:
            with CaptureQueriesContext(connection) as queries:
                assert not rpc_tool(client, token, tool, **arguments).get("isError")
            found.append(len(queries))
        return found

    owned, unowned = counts(legal.every_bot), counts(ownerless)
    assert [a - b for a, b in zip(owned, unowned, strict=True)] == [0, 0, 0, 0, 1, 1]
