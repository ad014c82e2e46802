"""Agent tokens: hashed, shown once, rotated and revoked at once; the commands and the admin."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from agents import selectors, services
from agents.models import Agent, PageSetEntry
from config.cache import shared_value, shared_value_set
from core.actors import SystemActor
from core.errors import Conflict, Forbidden, InvalidArgument
from core.models import AuditEvent
from wiki.models import Page

from .fixtures_mcp import AgentKey, rpc
from .fixtures_redis import RedisServer, redis_settings

pytestmark = pytest.mark.django_db

MakePage = Callable[..., Page]


def test_it_stores_only_the_sha256_of_a_random_token(admin_user: User) -> None:
    agent, token = services.agent_create(actor=admin_user, name="support-bot")
    _other, other_token = services.agent_create(actor=admin_user, name="other-bot")
    assert token.startswith("qa_") and len(token) >= 40
    assert token != other_token
    agent.refresh_from_db()
    assert agent.token_hash == hashlib.sha256(token.encode()).hexdigest()
    assert agent.token_prefix == token[:10]
    stored = " ".join(str(v) for v in Agent.objects.values_list().get(pk=agent.pk))
    assert token not in stored
    assert AuditEvent.objects.get(action="agent.create", data__agent="support-bot").actor_user == (
        admin_user
    )


def test_it_finds_an_agent_by_its_token_only(reader_agent: AgentKey) -> None:
    assert selectors.agent_by_token(reader_agent.token) == reader_agent.agent
    assert selectors.agent_by_token(reader_agent.token[:-1]) is None
    assert selectors.agent_by_token("") is None


def test_it_stops_the_old_token_at_once_when_rotated(reader_agent: AgentKey) -> None:
    new = services.agent_token_rotate(actor=SystemActor("tests"), agent=reader_agent.agent)
    assert new != reader_agent.token
    assert selectors.agent_by_token(reader_agent.token) is None
    assert selectors.agent_by_token(new) == reader_agent.agent
    assert AuditEvent.objects.filter(action="agent.token_rotate").count() == 1


def test_it_forgets_the_token_when_revoked(reader_agent: AgentKey) -> None:
    services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
    reader_agent.agent.refresh_from_db()
    assert reader_agent.agent.is_active is False and reader_agent.agent.token_hash is None
    assert selectors.agent_by_token(reader_agent.token) is None
    with pytest.raises(Conflict):
        services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)


def test_it_reenables_a_revoked_agent_with_a_new_token(reader_agent: AgentKey) -> None:
    services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
    token = services.agent_token_rotate(actor=SystemActor("tests"), agent=reader_agent.agent)
    assert selectors.agent_by_token(token) == reader_agent.agent
    assert selectors.agent_by_token(reader_agent.token) is None


def test_it_lets_only_admins_manage_agents(editor: User, reader_agent: AgentKey) -> None:
    with pytest.raises(Forbidden):
        services.agent_create(actor=editor, name="rogue")
    with pytest.raises(Forbidden):
        services.agent_token_rotate(actor=editor, agent=reader_agent.agent)
    with pytest.raises(Forbidden):
        services.agent_revoke(actor=editor, agent=reader_agent.agent)
    assert not Agent.objects.filter(name="rogue").exists()


def test_it_refuses_a_duplicate_or_empty_name(reader_agent: AgentKey) -> None:
    with pytest.raises(Conflict):
        services.agent_create(actor=SystemActor("tests"), name=reader_agent.agent.name)
    with pytest.raises(InvalidArgument):
        services.agent_create(actor=SystemActor("tests"), name="  ")


def test_it_records_last_use_at_most_once_a_minute(client: Client, reader_agent: AgentKey) -> None:
    assert reader_agent.agent.last_used_at is None
    rpc(client, reader_agent.token, "tools/list")
    first = Agent.objects.get(pk=reader_agent.agent.pk).last_used_at
    assert first is not None
    rpc(client, reader_agent.token, "tools/list")
    assert Agent.objects.get(pk=reader_agent.agent.pk).last_used_at == first
    Agent.objects.filter(pk=reader_agent.agent.pk).update(last_used_at=first - timedelta(minutes=2))
    # Two minutes on, the process no longer holds the agent it found for the token.
    selectors.forget_agent_tokens()
    rpc(client, reader_agent.token, "tools/list")
    last_used_at = Agent.objects.get(pk=reader_agent.agent.pk).last_used_at
    assert last_used_at is not None and last_used_at > first


def last_line(output: str) -> str:
    return output.strip().splitlines()[-1]


def test_it_creates_an_agent_from_the_command_line_with_the_token_last(
    make_page: MakePage, editor: User
) -> None:
    first, second = make_page("First"), make_page("Second")
    out = StringIO()
    call_command(
        "create_agent",
        "docs-bot",
        "--can-edit",
        "--owner",
        editor.username,
        "--page",
        second.public_id,
        "--page",
        first.public_id,
        stdout=out,
    )
    token = last_line(out.getvalue())
    agent = selectors.agent_by_token(token)
    assert agent is not None and agent.name == "docs-bot"
    assert agent.can_edit_pages and agent.owner == editor
    assert [e.page for e in PageSetEntry.objects.filter(agent=agent).order_by("position")] == [
        second,
        first,
    ]


def test_it_gives_every_page_now_and_later_with_all_pages(make_page: MakePage) -> None:
    top = make_page("Top")
    make_page("Child", parent=top)
    make_page("Other")
    out = StringIO()
    call_command("create_agent", "reader-bot", "--all-pages", stdout=out)
    assert "with every page, now and later, in its set" in out.getvalue()
    agent = selectors.agent_by_token(last_line(out.getvalue()))
    assert agent is not None and not agent.can_edit_pages and agent.all_pages
    # One entry, not a snapshot of today's top-level pages.
    assert not PageSetEntry.objects.filter(agent=agent).exists()
    assert len(selectors.agent_page_set(agent)) == 3
    make_page("Published later")
    assert len(selectors.agent_page_set(agent)) == 4


def test_its_all_pages_help_says_whether_a_later_page_is_in_the_set(
    make_page: MakePage, client: Client
) -> None:
    from agents.management.commands.create_agent import Command

    parser = Command().create_parser("manage.py", "create_agent")
    (option,) = [a for a in parser._actions if "--all-pages" in a.option_strings]
    make_page("Top")
    out = StringIO()
    call_command("create_agent", "reader-bot", "--all-pages", stdout=out)
    later = make_page("Published later")
    token = last_line(out.getvalue())
    found = rpc(
        client, token, "tools/call", {"name": "get_page", "arguments": {"pageId": later.public_id}}
    ).json()["result"]
    sees_later = not found["isError"]
    # The help must say what becomes of a page made later, and say it truly.
    help_text = option.help or ""
    assert "later" in help_text, help_text
    assert ("not in it" not in help_text) == sees_later, help_text


def test_it_refuses_an_unknown_page_or_owner_and_creates_nothing(make_page: MakePage) -> None:
    with pytest.raises(CommandError, match="pg_zzzzzzzz"):
        call_command("create_agent", "bot", "--page", "pg_zzzzzzzz", stdout=StringIO())
    with pytest.raises(CommandError, match="nobody"):
        call_command("create_agent", "bot", "--owner", "nobody", stdout=StringIO())
    assert not Agent.objects.exists()


def test_it_rotates_and_revokes_from_the_command_line(reader_agent: AgentKey) -> None:
    out = StringIO()
    call_command("rotate_agent_token", reader_agent.agent.name, stdout=out)
    token = last_line(out.getvalue())
    assert selectors.agent_by_token(token) == reader_agent.agent
    assert selectors.agent_by_token(reader_agent.token) is None
    call_command("revoke_agent", reader_agent.agent.name, stdout=StringIO())
    assert selectors.agent_by_token(token) is None
    with pytest.raises(CommandError):
        call_command("revoke_agent", "nobody", stdout=StringIO())


def test_it_shows_the_token_once_when_an_admin_creates_an_agent(
    client: Client, admin_user: User
) -> None:
    client.force_login(admin_user)
    response = client.post(
        "/admin/agents/agent/add/",
        {
            "name": "web-bot",
            "description": "Answers questions.",
            "can_edit_pages": "on",
            "page_set-TOTAL_FORMS": "0",
            "page_set-INITIAL_FORMS": "0",
        },
        follow=True,
    )
    assert response.status_code == 200
    messages = [str(m) for m in response.context["messages"]]
    token = next(m for m in messages if "qa_" in m).split("is ")[1].split(" ")[0]
    agent = selectors.agent_by_token(token)
    assert agent is not None and agent.name == "web-bot" and agent.can_edit_pages
    page = client.get(f"/admin/agents/agent/{agent.pk}/change/")
    assert token not in page.content.decode()
    assert agent.token_prefix in page.content.decode()


def test_it_rotates_and_revokes_from_the_admin(
    client: Client, admin_user: User, reader_agent: AgentKey
) -> None:
    client.force_login(admin_user)
    response = client.post(
        "/admin/agents/agent/",
        {"action": "rotate_tokens", "_selected_action": [reader_agent.agent.pk]},
    )
    assert selectors.agent_by_token(reader_agent.token) is None
    [new] = re.findall(r"qa_[A-Za-z0-9_-]{40,}", response.content.decode())
    assert selectors.agent_by_token(new) == reader_agent.agent
    client.post(
        "/admin/agents/agent/",
        {"action": "revoke_agents", "_selected_action": [reader_agent.agent.pk]},
    )
    assert selectors.agent_by_token(new) is None


def test_it_keeps_the_admins_page_set_changes_in_services(
    client: Client, admin_user: User, reader_agent: AgentKey, make_page: MakePage
) -> None:
    page = make_page("Refunds")
    client.force_login(admin_user)
    agent = reader_agent.agent
    data: dict[str, Any] = {
        "name": agent.name,
        "description": "",
        "page_set-TOTAL_FORMS": "1",
        "page_set-INITIAL_FORMS": "0",
        "page_set-0-page": str(page.pk),
        "page_set-0-use_when": '["Use for refunds."]',
        "page_set-0-always_include": "on",
        "page_set-0-position": "0",
    }
    response = client.post(f"/admin/agents/agent/{agent.pk}/change/", data)
    assert response.status_code == 302
    entry = PageSetEntry.objects.get(agent=agent)
    assert entry.page == page and entry.use_when == ["Use for refunds."] and entry.always_include
    assert AuditEvent.objects.filter(action="page_set.add", actor_user=admin_user).count() == 1


def test_it_keeps_the_token_and_the_creation_time_when_the_admin_edits_an_agent(
    client: Client, admin_user: User, reader_agent: AgentKey
) -> None:
    agent = reader_agent.agent
    created_at = agent.created_at
    Agent.objects.filter(pk=agent.pk).update(created_at=created_at - timedelta(days=30))
    client.force_login(admin_user)
    data: dict[str, Any] = {
        "name": "refund-bot",
        "description": "Answers refund questions.",
        "can_edit_pages": "on",
        "page_set-TOTAL_FORMS": "0",
        "page_set-INITIAL_FORMS": "0",
    }
    response = client.post(f"/admin/agents/agent/{agent.pk}/change/", data)
    assert response.status_code == 302
    edited = Agent.objects.get(pk=agent.pk)
    assert (edited.name, edited.description, edited.can_edit_pages, edited.is_active) == (
        "refund-bot",
        "Answers refund questions.",
        True,
        True,
    )
    assert edited.created_at == created_at - timedelta(days=30)
    assert (edited.token_hash, edited.token_prefix) == (agent.token_hash, agent.token_prefix)
    assert selectors.agent_by_token(reader_agent.token) == edited
    update = AuditEvent.objects.get(action="agent.update")
    assert (update.actor_user, update.data["name"], update.data["canEditPages"]) == (
        admin_user,
        "refund-bot",
        True,
    )


@pytest.mark.parametrize("command", ["rotate_agent_token", "revoke_agent"])
def test_it_names_an_unknown_agent_on_the_command_line(db: Any, command: str) -> None:
    with pytest.raises(CommandError, match="no agent named 'ghost'"):
        call_command(command, "ghost", stdout=StringIO())
    assert not AuditEvent.objects.exists()


def test_it_ends_a_token_in_every_process_at_once_with_redis(
    reader_agent: AgentKey, own_redis: RedisServer
) -> None:
    with override_settings(**redis_settings(own_redis.url)):
        selectors.forget_agent_tokens()
        assert selectors.agent_by_token(reader_agent.token) == reader_agent.agent
        with CaptureQueriesContext(connection) as kept:
            assert selectors.agent_by_token(reader_agent.token) == reader_agent.agent
        assert len(kept.captured_queries) == 0  # this process keeps the agent it found

        # Another process revokes the agent: the row changes, and its commit sets a new
        # generation in Redis. This process's copy must not outlive that.
        Agent.objects.filter(pk=reader_agent.agent.pk).update(is_active=False)
        shared_value_set(selectors.AGENTS_GENERATION_KEY, "after-another-process")
        assert selectors.agent_by_token(reader_agent.token) is None


def test_it_sets_a_new_generation_when_a_change_to_an_agent_commits(
    reader_agent: AgentKey, own_redis: RedisServer, django_capture_on_commit_callbacks: Any
) -> None:
    with override_settings(**redis_settings(own_redis.url)):
        shared_value_set(selectors.AGENTS_GENERATION_KEY, "before")
        with django_capture_on_commit_callbacks(execute=True):
            services.agent_revoke(actor=SystemActor("tests"), agent=reader_agent.agent)
        assert shared_value(selectors.AGENTS_GENERATION_KEY) not in (None, "before")
