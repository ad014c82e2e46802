"""Page sets: add, update, remove and reorder entries; what an entry covers; scoped lookups."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents import selectors, services
from agents.models import PageSetEntry
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from core.models import AuditEvent
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from wiki import services as wiki_services
from wiki.models import Page

from .fixtures_mcp import AgentKey

pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]


def order(key: AgentKey) -> list[str]:
    return [
        entry.page.title
        for entry in PageSetEntry.objects.filter(agent=key.agent).order_by("position")
    ]


def test_it_adds_entries_at_the_end_or_at_a_position(
    admin_user: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    a, b, c = make_page("A"), make_page("B"), make_page("C")
    services.page_set_add(actor=admin_user, agent=reader_agent.agent, page=a)
    services.page_set_add(actor=admin_user, agent=reader_agent.agent, page=b)
    entry = services.page_set_add(
        actor=admin_user,
        agent=reader_agent.agent,
        page=c,
        position=0,
        use_when="Use for C questions.\n\n  Also for c-like ones.  ",
        always_include=True,
    )
    assert order(reader_agent) == ["C", "A", "B"]
    assert entry.use_when == ["Use for C questions.", "Also for c-like ones."]
    assert AuditEvent.objects.filter(action="page_set.add", actor_user=admin_user).count() == 3


def test_it_refuses_a_page_twice_an_archived_page_and_long_use_when_lines(
    admin_user: User, reader_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    page = make_page("A")
    reader_agent.give(page)
    with pytest.raises(Conflict):
        services.page_set_add(actor=admin_user, agent=reader_agent.agent, page=page)
    archived = make_page("Old")
    wiki_services.page_archive(actor=editor, page=archived)
    with pytest.raises(InvalidArgument):
        services.page_set_add(actor=admin_user, agent=reader_agent.agent, page=archived)
    with pytest.raises(InvalidArgument):
        services.page_set_add(
            actor=admin_user, agent=reader_agent.agent, page=make_page("B"), use_when=["x" * 301]
        )
    assert order(reader_agent) == ["A"]


def test_it_lets_only_admins_change_page_sets(
    editor: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("A")
    with pytest.raises(Forbidden):
        services.page_set_add(actor=editor, agent=reader_agent.agent, page=page)
    with pytest.raises(Forbidden):
        services.page_set_add(actor=reader_agent.agent, agent=reader_agent.agent, page=page)
    assert order(reader_agent) == []


def test_it_updates_use_when_and_always_include(
    admin_user: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    reader_agent.give(make_page("A"))
    entry = PageSetEntry.objects.get(agent=reader_agent.agent)
    services.page_set_update(
        actor=admin_user, entry=entry, use_when=["Use always."], always_include=True
    )
    entry.refresh_from_db()
    assert entry.use_when == ["Use always."] and entry.always_include


def test_it_removes_an_entry_and_closes_the_gap(
    admin_user: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    a, b, c = make_page("A"), make_page("B"), make_page("C")
    reader_agent.give(a, b, c)
    services.page_set_remove(actor=admin_user, agent=reader_agent.agent, page=b)
    assert order(reader_agent) == ["A", "C"]
    assert list(
        PageSetEntry.objects.filter(agent=reader_agent.agent)
        .order_by("position")
        .values_list("position", flat=True)
    ) == [0, 1]
    with pytest.raises(NotFound):
        services.page_set_remove(actor=admin_user, agent=reader_agent.agent, page=b)


def test_it_reorders_with_the_listed_pages_first(
    admin_user: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    a, b, c, d = (make_page(t) for t in "ABCD")
    reader_agent.give(a, b, c, d)
    services.page_set_reorder(
        actor=admin_user, agent=reader_agent.agent, page_ids=[d.public_id, b.public_id]
    )
    assert order(reader_agent) == ["D", "B", "A", "C"]
    with pytest.raises(InvalidArgument):
        services.page_set_reorder(
            actor=admin_user, agent=reader_agent.agent, page_ids=["pg_zzzzzzzz"]
        )
    with pytest.raises(InvalidArgument):
        services.page_set_reorder(
            actor=admin_user, agent=reader_agent.agent, page_ids=[a.public_id, a.public_id]
        )
    assert order(reader_agent) == ["D", "B", "A", "C"]


def test_it_covers_an_entry_and_every_page_under_it_but_not_its_namesakes(
    reader_agent: AgentKey, make_page: MakePage
) -> None:
    tools = make_page("Tools")
    slack = make_page("Slack", parent=tools)
    deep = make_page("Channels", parent=slack)
    lookalike = make_page("Tools old")
    reader_agent.give(tools)
    assert selectors.page_for_agent(reader_agent.agent, deep.public_id) == deep
    assert selectors.page_for_agent(reader_agent.agent, slack.public_id) == slack
    with pytest.raises(NotFound):
        selectors.page_for_agent(reader_agent.agent, lookalike.public_id)
    assert {p.pk for p in selectors.visible_pages(reader_agent.agent)} == {
        tools.pk,
        slack.pk,
        deep.pk,
    }


def test_it_follows_a_page_moved_into_or_out_of_the_set(
    reader_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    inside, outside = make_page("Inside"), make_page("Outside")
    page = make_page("Wanderer", parent=outside)
    reader_agent.give(inside)
    with pytest.raises(NotFound):
        selectors.page_for_agent(reader_agent.agent, page.public_id)
    version_propose(actor=editor, page=page, parent=inside, publish=True)
    assert selectors.page_for_agent(reader_agent.agent, page.public_id) == page


def test_it_shows_agents_live_unarchived_pages_only(
    reader_agent: AgentKey, make_page: MakePage, editor: User, reader: User
) -> None:
    section = make_page("Section")
    archived = make_page("Archived", parent=section)
    wiki_services.page_archive(actor=editor, page=archived)
    proposed = page_create(actor=reader, title="Proposed", body="x", parent=section).page
    reader_agent.give(section)
    for page in (archived, proposed):
        with pytest.raises(NotFound):
            selectors.page_for_agent(reader_agent.agent, page.public_id)
    assert [item.page for item in selectors.agent_page_set(reader_agent.agent)] == [section]


def test_it_lists_each_page_once_under_its_nearest_entry(
    reader_agent: AgentKey, make_page: MakePage
) -> None:
    tools = make_page("Tools")
    slack = make_page("Slack", parent=tools)
    channels = make_page("Channels", parent=slack)
    zoom = make_page("Zoom", parent=tools)
    reader_agent.give(slack, use_when=["Slack questions."])
    reader_agent.give(tools, use_when=["Tool questions."], always=True)
    listed = [
        (item.page, item.use_when, item.always_include)
        for item in selectors.agent_page_set(reader_agent.agent)
    ]
    assert listed == [
        (slack, ["Slack questions."], False),
        (channels, ["Slack questions."], False),
        (tools, ["Tool questions."], True),
        (zoom, ["Tool questions."], True),
    ]


def test_it_shows_a_refused_admin_change_as_a_message_not_an_error_page(
    client: Client, admin_user: User, reader_agent: AgentKey, make_page: MakePage, editor: User
) -> None:
    archived = make_page("Old")
    wiki_services.page_archive(actor=editor, page=archived)
    client.force_login(admin_user)
    response = client.post(
        "/admin/agents/pagesetentry/add/",
        {
            "agent": str(reader_agent.agent.pk),
            "page": str(archived.pk),
            "use_when": "[]",
            "position": "0",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert any("archived" in str(m) for m in response.context["messages"])
    assert not PageSetEntry.objects.exists()
