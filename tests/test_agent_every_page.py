"""The set editor's "every page": one entry that covers every page, now and later, shown as
such in the set editor and the preview, and given or taken away by an admin only."""

from __future__ import annotations

import html
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents import selectors
from core.models import AuditEvent
from wiki.models import Page

from .fixtures_mcp import AgentKey

pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]


def main(response: object) -> str:
    body = response.content.decode()  # type: ignore[attr-defined]
    return html.unescape(body[body.index("<main") : body.index("</main>")])


def test_it_gives_every_page_now_and_later_from_the_set_editor(
    client_as: Callable[[User], Client],
    admin_user: User,
    reader_agent: AgentKey,
    make_page: MakePage,
) -> None:
    admin = client_as(admin_user)
    make_page("Handbook")
    agent = reader_agent.agent
    every = reverse("agents:page_set_all_pages", args=[agent.pk])
    detail = reverse("agents:detail", args=[agent.pk])
    assert "Give every page, now and later" in main(admin.get(detail))
    assert admin.post(every, {"all_pages": "1"}).status_code == 302
    agent.refresh_from_db()
    assert agent.all_pages
    make_page("Published later")
    screen = main(admin.get(detail))
    assert "Every page, now and later" in screen and "covers 2 pages today" in screen
    assert "the agent sees <strong>2</strong> live pages" in screen
    preview = main(admin.get(reverse("agents:preview", args=[agent.pk])))
    assert "every page, now and later" in preview and "Published later" in preview
    assert [row.title for row in selectors.page_set_rows(agent)] == ["Handbook", "Published later"]
    assert AuditEvent.objects.filter(action="page_set.all_pages", actor_user=admin_user).exists()
    assert admin.post(every, {"all_pages": "0"}).status_code == 302
    agent.refresh_from_db()
    assert not agent.all_pages and selectors.page_set_rows(agent) == []


def test_it_lets_only_admins_give_every_page(
    client_as: Callable[[User], Client], editor: User, reader_agent: AgentKey
) -> None:
    url = reverse("agents:page_set_all_pages", args=[reader_agent.agent.pk])
    assert client_as(editor).post(url, {"all_pages": "1"}).status_code == 403
    reader_agent.agent.refresh_from_db()
    assert not reader_agent.agent.all_pages
