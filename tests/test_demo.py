"""`manage.py load_demo` (what `make run` loads): the handbook, a working login and agent token."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from agents.models import Agent, PageSetEntry
from core.tokens import token_hash
from reviews.actions.decide import version_approve
from wiki.models import Page, Version, VersionStatus
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.django_db


def load_demo(login_file: Path) -> str:
    out = io.StringIO()
    call_command("load_demo", login_file=login_file, stdout=out)
    return out.getvalue()


def printed(output: str, label: str) -> str:
    match = re.search(rf"^\s+{label}:\s+(.+)$", output, re.MULTILINE)
    assert match, f"no {label!r} line in:\n{output}"
    return match.group(1).strip()


def test_it_loads_the_handbook_and_prints_a_login_that_works(tmp_path: Path) -> None:
    output = load_demo(tmp_path / "login.txt")

    assert printed(output, "Open") == "http://127.0.0.1:8000/"
    assert printed(output, "MCP URL") == "http://127.0.0.1:8000/mcp"
    username, password = printed(output, "Log in").split("(")[0].split(" / ")
    assert Client().login(username=username.strip(), password=password.strip())
    assert Page.objects.filter(live_version__isnull=False).count() == 12
    root = Page.objects.get(parent=None)
    assert root.title == "Welcome to Quire"
    assert Page.objects.get(title="Reading a diff").path == (
        "welcome-to-quire/for-reviewers/reading-a-diff"
    )


def test_it_changes_nothing_but_the_agent_token_when_run_twice(tmp_path: Path) -> None:
    login = tmp_path / "login.txt"
    first = load_demo(login)
    counts = (Page.objects.count(), Version.objects.count(), PageSetEntry.objects.count())

    second = load_demo(login)

    assert (Page.objects.count(), Version.objects.count(), PageSetEntry.objects.count()) == counts
    assert printed(first, "Log in") == printed(second, "Log in")
    assert "12 unchanged" in second


def test_it_prints_an_agent_token_that_authenticates_and_retires_the_previous_one(
    tmp_path: Path,
) -> None:
    old_token = printed(load_demo(tmp_path / "login.txt"), "Agent").split("token ")[1]
    new_token = printed(load_demo(tmp_path / "login.txt"), "Agent").split("token ")[1]

    agent = Agent.objects.get(name="demo-agent")
    assert agent.token_hash == token_hash(new_token)
    assert not Agent.objects.filter(token_hash=token_hash(old_token)).exists()
    assert agent.is_active and agent.can_edit_pages
    entries = list(agent.page_set.select_related("page"))
    assert [entry.page.title for entry in entries] == ["Welcome to Quire", "Writing good pages"]
    assert all(entry.use_when for entry in entries)


def test_it_leaves_proposals_from_the_demo_agent_in_the_queue(tmp_path: Path) -> None:
    load_demo(tmp_path / "login.txt")
    load_demo(tmp_path / "login.txt")

    waiting = Version.objects.filter(status=VersionStatus.IN_REVIEW)
    assert sorted((v.page.title, v.kind) for v in waiting) == [
        ("FAQ", "append"),
        ("Writing good pages", "replace"),
    ]
    assert all(v.author_agent and v.author_agent.name == "demo-agent" for v in waiting)


def test_it_renders_every_demo_page(tmp_path: Path, client: Client) -> None:
    output = load_demo(tmp_path / "login.txt")
    username, password = printed(output, "Log in").split("(")[0].split(" / ")
    client.login(username=username.strip(), password=password.strip())

    for page in Page.objects.all():
        response = client.get(reverse("wiki:page", args=[page.public_id]))
        assert response.status_code == 200, page.title
    cheat_sheet = Page.objects.get(title="Markdown cheat sheet")
    html = client.get(reverse("wiki:page", args=[cheat_sheet.public_id])).content.decode()
    assert "<table" in html and "<code" in html


def test_it_keeps_an_approved_edit_to_a_demo_page_when_run_again(
    tmp_path: Path, make_user: Any
) -> None:
    login = tmp_path / "login.txt"
    load_demo(login)
    reviewer = make_user("rita", REVIEWERS)
    proposal = Version.objects.get(status=VersionStatus.IN_REVIEW, page__title="Writing good pages")
    approved = version_approve(actor=reviewer, version=proposal, comment="Good advice.")
    page = approved.page

    output = load_demo(login)

    page.refresh_from_db()
    assert page.live_version_id == approved.pk
    assert page.live_version is not None
    assert "Three to five tags" in page.live_version.body
    assert not page.versions.filter(number__gt=approved.number).exists()
    assert "1 kept as edited" in output


def test_it_still_updates_a_demo_page_nobody_changed(tmp_path: Path) -> None:
    login = tmp_path / "login.txt"
    load_demo(login)
    faq = Page.objects.select_related("live_version").get(title="FAQ")
    # As if the demo page had been loaded from an older handbook: load_demo made it live.
    assert faq.live_version_id is not None
    Version.objects.filter(pk=faq.live_version_id).update(body="An older FAQ.\n")

    output = load_demo(login)

    faq.refresh_from_db()
    assert faq.live_version is not None
    assert faq.live_version.body != "An older FAQ.\n"
    assert faq.live_version.change_summary == "Updated the demo handbook."
    assert "1 updated" in output


def test_it_does_not_reset_a_changed_admin_password(tmp_path: Path) -> None:
    login = tmp_path / "login.txt"
    output = load_demo(login)
    demo_password = printed(output, "Log in").split("(")[0].split(" / ")[1].strip()
    admin = User.objects.get(username="admin")
    admin.set_password("my-own-passphrase-42")
    admin.save()

    second = load_demo(login)

    assert Client().login(username="admin", password="my-own-passphrase-42")
    assert not Client().login(username="admin", password=demo_password)
    assert demo_password not in second
    assert "password you set" in printed(second, "Log in")
    # The file no longer holds a password that does not work.
    assert not login.exists()
