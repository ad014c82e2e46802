"""Curating page sets at scale: the picker, a tag in one action, 2,000 entries, new agents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.models import Agent, PageSetEntry
from agents.services import page_set_add
from core.actors import SystemActor
from core.models import AuditEvent
from reviews.actions.create import page_create
from tests.bulk import make_live
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import AgentKey
from .fixtures_web import count_queries

MakePage = Callable[..., Page]


@pytest.fixture
def admin(client_as: Callable[[User], Client], admin_user: User) -> Client:
    return client_as(admin_user)


def _bulk_live_pages(count: int, editor: User) -> list[Page]:
    """`count` live top-level pages, inserted in bulk (the services would take minutes)."""
    pages = Page.objects.bulk_create(
        Page(
            title=f"Bulk {i:04d}", slug=f"bulk-{i:04d}", path=f"bulk-{i:04d}", last_version_number=1
        )
        for i in range(count)
    )
    pages = list(Page.objects.filter(slug__startswith="bulk-").order_by("path"))
    make_live(pages, author=editor, body=lambda n, page: "text\n")
    return pages


def test_it_adds_every_page_with_a_tag_in_one_action(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    key = make_agent("billing-bot")
    already = make_page("Invoices", tags=["billing"])
    refunds = make_page("Refunds", tags=["billing", "support"])
    disputes = make_page("Disputes", tags=["billing"])
    archived = make_page("Old fees", tags=["billing"])
    wiki_services.page_archive(actor=editor, page=archived)
    make_page("Holidays", tags=["hr"])
    page_set_add(actor=SystemActor("tests"), agent=key.agent, page=already)
    response = admin.post(
        reverse("agents:page_set_add", args=[key.agent.pk]),
        {"tag": "billing", "use_when": "Use for anything about money."},
    )
    assert response.status_code == 302
    entries = list(
        PageSetEntry.objects.filter(agent=key.agent).order_by("position").select_related("page")
    )
    assert [entry.page.title for entry in entries] == ["Invoices", "Disputes", "Refunds"]
    assert entries[1].use_when == ["Use for anything about money."]
    assert [entry.position for entry in entries] == [0, 1, 2]
    event = AuditEvent.objects.get(action="page_set.add_tagged")
    assert event.data["added"] == 2 and event.actor_user is not None
    assert refunds.public_id in {entry.page.public_id for entry in entries}
    assert disputes.public_id in {entry.page.public_id for entry in entries}


def test_it_refuses_an_unknown_tag_and_both_a_page_and_a_tag(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("billing-bot")
    page = make_page("Invoices", tags=["billing"])
    url = reverse("agents:page_set_add", args=[key.agent.pk])
    unknown = admin.post(url, {"tag": "bilinng"})
    assert unknown.status_code == 400
    assert "No live page tagged &#x27;bilinng&#x27;" in unknown.content.decode()
    both = admin.post(url, {"tag": "billing", "page": page.public_id})
    assert both.status_code == 400 and "Choose a page or a tag, not both." in both.content.decode()
    assert not PageSetEntry.objects.filter(agent=key.agent).exists()


def test_it_adds_a_subtree_chosen_in_the_picker(
    admin: Client, make_agent: Callable[..., AgentKey], make_page: MakePage
) -> None:
    key = make_agent("support-bot")
    support = make_page("Support desk", "How the desk works.\n")
    make_page("Refunds", "Refunds take five days.\n", parent=support)
    make_page("Returns", "Returns.\n", parent=support)
    found = admin.get(reverse("wiki:pick"), {"q": "supp"}).json()["pages"]
    assert found[0] == {
        "pageId": support.public_id,
        "title": "Support desk",
        "path": "support-desk",
    }
    by_path = admin.get(reverse("wiki:pick"), {"q": "support-desk/ref"}).json()["pages"]
    # The path's prefix first; the search may add pages holding its words after it.
    assert by_path[0]["title"] == "Refunds"
    by_text = admin.get(reverse("wiki:pick"), {"q": "five days"}).json()["pages"]
    assert [page["title"] for page in by_text] == ["Refunds"]  # the wiki's search service
    response = admin.post(
        reverse("agents:page_set_add", args=[key.agent.pk]), {"page": support.public_id}
    )
    assert response.status_code == 302
    detail = admin.get(reverse("agents:detail", args=[key.agent.pk])).content.decode()
    assert "covers 3 pages" in detail and "the agent sees <strong>3</strong>" in detail


def test_it_shows_a_set_of_2000_entries_with_the_same_queries_as_one_of_20(
    admin: Client, make_agent: Callable[..., AgentKey], editor: User
) -> None:
    key = make_agent("big-bot")
    pages = _bulk_live_pages(2000, editor)
    url = reverse("agents:detail", args=[key.agent.pk])

    def give(count: int) -> None:
        present = PageSetEntry.objects.filter(agent=key.agent).count()
        PageSetEntry.objects.bulk_create(
            PageSetEntry(agent=key.agent, page=page, use_when=["Use it."], position=i)
            for i, page in enumerate(pages[present:count], start=present)
        )

    give(20)
    small = count_queries(admin, url)
    give(2000)
    large = count_queries(admin, url)
    body = admin.get(url).content.decode()
    assert "2000 entries" in body and "Entries 1\u2013100 of 2000" in body
    assert body.count('<li class="ag-entry') == 100
    later = admin.get(url + "?entries=20").content.decode()
    assert "Bulk 1999" in later and "Entries 1901\u20132000 of 2000" in later
    print(f"set editor queries: {small} with 20 entries, {large} with 2000")
    assert small == large


def test_it_makes_the_admin_the_owner_of_a_new_agent_unless_they_choose(
    admin: Client, admin_user: User, editor: User
) -> None:
    form = admin.get(reverse("agents:new")).content.decode()
    assert f'<option value="{admin_user.pk}" selected>' in form
    admin.post(reverse("agents:new"), {"name": "mine", "owner": admin_user.pk})
    admin.post(reverse("agents:new"), {"name": "theirs", "owner": editor.pk})
    admin.post(reverse("agents:new"), {"name": "nobodys", "owner": ""})
    owners = dict(Agent.objects.values_list("name", "owner"))
    assert owners == {"mine": admin_user.pk, "theirs": editor.pk, "nobodys": None}


def test_it_does_not_make_a_second_token_when_the_token_page_is_reloaded(
    admin: Client, make_agent: Callable[..., AgentKey], settings: Any
) -> None:
    key = make_agent("support-bot")
    rotated = admin.post(reverse("agents:rotate", args=[key.agent.pk]))
    assert rotated.status_code == 302
    token_url = rotated["Location"]
    first = admin.get(token_url)
    key.agent.refresh_from_db()
    assert key.agent.token_prefix in first.content.decode()
    assert "no-store" in first["Cache-Control"]
    digest = key.agent.token_hash
    second = admin.get(token_url)
    key.agent.refresh_from_db()
    assert key.agent.token_hash == digest and "cannot be shown again" in second.content.decode()


def test_it_counts_what_each_entry_covers_as_the_agent_reads_it(
    make_agent: Callable[..., AgentKey], make_page: MakePage, editor: User
) -> None:
    from collections import Counter

    from agents import selectors

    support = make_page("Support")
    refunds = make_page("Refunds", parent=support)
    make_page("Cards", parent=refunds)
    make_page("Cash", parent=refunds)
    gone = make_page("Gone", parent=support)
    wiki_services.page_archive(actor=editor, page=gone)
    make_page("Supported devices")  # a path that starts like "support" but is not under it
    page_create(actor=editor, title="Draft", body="x", parent=support)  # not live
    key = make_agent("support-bot")
    for page in (refunds, support):
        page_set_add(actor=SystemActor("tests"), agent=key.agent, page=page)
    entries = list(PageSetEntry.objects.filter(agent=key.agent).select_related("page"))
    from_rows = Counter(row.entry.pk for row in selectors.page_set_rows(key.agent))
    coverage = selectors.page_set_coverage([(entry.pk, entry.page.path) for entry in entries])
    assert coverage == from_rows
    by_title = {entry.page.title: coverage[entry.pk] for entry in entries}
    assert by_title == {"Refunds": 3, "Support": 1}
