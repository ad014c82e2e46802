"""Moving a page under another parent: one service, paths, links, history and agents' sets."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Agent
from agents.selectors import visible_pages
from agents.services import page_set_add
from core.actors import SystemActor
from core.errors import Forbidden, InvalidArgument
from core.models import AuditEvent
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.actions.revert import page_revert
from reviews.merge import is_stale
from tests.conftest import live
from wiki import services as wiki_services
from wiki.models import Page, VersionStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def tree(make_page: Callable[..., Page]) -> dict[str, Page]:
    guides = make_page("Guides")
    tools = make_page("Tools")
    slack = make_page("Slack", "Chat rules.\n", parent=tools)
    etiquette = make_page("Etiquette", "Be kind.\n", parent=slack)
    linking = make_page("Index", f"See [[{slack.public_id}]] and [[{etiquette.public_id}]].\n")
    return {
        "guides": guides,
        "tools": tools,
        "slack": slack,
        "etiquette": etiquette,
        "index": linking,
    }


def test_it_moves_a_page_and_its_subtree_under_another_parent(
    tree: dict[str, Page], editor: User
) -> None:
    slack, guides = tree["slack"], tree["guides"]
    before = live(slack)
    version = wiki_services.page_move(actor=editor, page=slack, parent=guides)
    slack.refresh_from_db()
    tree["etiquette"].refresh_from_db()
    assert (slack.parent_id, slack.path) == (guides.pk, "guides/slack")
    assert tree["etiquette"].path == "guides/slack/etiquette"
    # History: a new approved version, the same content, under the new parent.
    assert slack.live_version_id == version.pk and version.number == before.number + 1
    assert version.status == VersionStatus.APPROVED and version.decided_by == editor
    assert (version.body, version.title, version.parent_id) == (before.body, "Slack", guides.pk)
    assert version.change_summary == "Moved under “Guides”."
    event = AuditEvent.objects.get(action="page.move")
    assert event.data == {"from": "tools/slack", "to": "guides/slack"}
    # To the top level.
    wiki_services.page_move(actor=editor, page=slack, parent=None)
    slack.refresh_from_db()
    assert (slack.parent_id, slack.path) == (None, "slack")


def test_it_keeps_links_and_agents_sets_with_the_moved_page(
    tree: dict[str, Page], editor: User, client_as: Callable[[User], Client]
) -> None:
    slack, tools, guides = tree["slack"], tree["tools"], tree["guides"]
    system = SystemActor("tests")
    on_page = Agent.objects.create(name="slack-bot")
    page_set_add(actor=system, agent=on_page, page=slack)
    on_old_parent = Agent.objects.create(name="tools-bot")
    page_set_add(actor=system, agent=on_old_parent, page=tools)
    on_new_parent = Agent.objects.create(name="guides-bot")
    page_set_add(actor=system, agent=on_new_parent, page=guides)
    wiki_services.page_move(actor=editor, page=slack, parent=guides)
    ids = {tree["slack"].pk, tree["etiquette"].pk}
    # The entry on the page follows it, with its subtree; coverage is where the page is now.
    assert ids <= set(visible_pages(on_page).values_list("pk", flat=True))
    assert not ids & set(visible_pages(on_old_parent).values_list("pk", flat=True))
    assert ids <= set(visible_pages(on_new_parent).values_list("pk", flat=True))
    # Links name the page by id: the linking page still shows and reaches both.
    html = client_as(editor).get(f"/p/{tree['index'].public_id}/").content.decode()
    assert f'href="/p/{slack.public_id}/"' in html and ">Slack</a>" in html
    assert ">Etiquette</a>" in html


def test_it_refuses_moves_that_break_the_tree_or_come_from_non_editors(
    tree: dict[str, Page], editor: User, reader: User, reviewer: User
) -> None:
    slack, etiquette, guides = tree["slack"], tree["etiquette"], tree["guides"]
    for who in (reader, reviewer):
        with pytest.raises(Forbidden):
            wiki_services.page_move(actor=who, page=slack, parent=guides)
    with pytest.raises(InvalidArgument, match="under itself or one of its descendants"):
        wiki_services.page_move(actor=editor, page=slack, parent=etiquette)
    with pytest.raises(InvalidArgument, match="already under “Tools”"):
        wiki_services.page_move(actor=editor, page=slack, parent=tree["tools"])
    wiki_services.page_archive(actor=editor, page=guides)
    with pytest.raises(InvalidArgument, match="archived"):
        wiki_services.page_move(actor=editor, page=slack, parent=Page.objects.get(pk=guides.pk))
    slack.refresh_from_db()
    assert slack.path == "tools/slack" and slack.last_version_number == 1


def test_it_leaves_a_waiting_proposal_to_merge_onto_the_new_place(
    tree: dict[str, Page], editor: User, reader: User, reviewer: User
) -> None:
    slack, guides = tree["slack"], tree["guides"]
    proposal = version_propose(actor=reader, page=slack, body="Chat rules, kindly.\n")
    wiki_services.page_move(actor=editor, page=slack, parent=guides)
    proposal.refresh_from_db()
    assert is_stale(proposal)
    version_approve(actor=reviewer, version=proposal)
    slack.refresh_from_db()
    assert slack.path == "guides/slack" and live(slack).body == "Chat rules, kindly.\n"


def test_it_moves_a_page_from_the_browser_form(
    tree: dict[str, Page], editor: User, reader: User, client_as: Callable[[User], Client]
) -> None:
    slack, guides = tree["slack"], tree["guides"]
    url = f"/p/{slack.public_id}/move/"
    assert client_as(reader).get(url).status_code == 403
    client = client_as(editor)
    assert 'data-picker="/pages/pick/"' in client.get(url).content.decode()
    refused = client.post(url, {"parent": "pg_zzzzzzzz"})
    assert refused.status_code == 200 and "There is no page pg_zzzzzzzz" in refused.content.decode()
    moved = client.post(url, {"parent": guides.public_id})
    assert moved.status_code == 302
    slack.refresh_from_db()
    assert slack.path == "guides/slack"
    page_html = client.get(moved["Location"]).content.decode()
    assert "its address is now guides/slack" in page_html


def test_it_does_not_call_a_proposal_stale_after_a_revert_to_its_base(
    make_page: Callable[..., Page], editor: User, reader: User, reviewer: User
) -> None:
    page = make_page("Refunds", "Thirty days.\n")
    base = live(page)
    proposal = version_propose(actor=reader, page=page, body="Forty days.\n")
    version_propose(actor=editor, page=page, body="Sixty days.\n", publish=True)
    proposal.refresh_from_db()
    assert is_stale(proposal)
    page_revert(actor=editor, page=page, to_version=base)
    proposal.refresh_from_db()
    assert not is_stale(proposal)
    version_approve(actor=reviewer, version=proposal)
    assert live(page).body == "Forty days.\n" and not live(page).merged
