"""Content-Security-Policy on every response, walked over the whole URL conf; templates that
need no inline script, style or event handler."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.exceptions import NoReverseMatch

from agents import services as agent_services
from reviews.actions.propose import version_propose
from tests.conftest import PROJECT_ROOT
from wiki import services
from wiki.models import Page

pytestmark = pytest.mark.django_db

DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}


def assert_policy(header: str | None, where: str) -> None:
    assert header, f"{where} has no Content-Security-Policy"
    policy = {}
    for part in filter(None, (p.strip() for p in header.split(";"))):
        directive, _, sources = part.partition(" ")
        policy[directive] = sources
    for directive, sources in DIRECTIVES.items():
        assert policy.get(directive) == sources, (where, directive, header)
    assert "unsafe" not in header, (where, header)


def named_patterns(
    patterns: list[Any], namespace: str = "", groups: frozenset[str] = frozenset()
) -> Iterator[tuple[str, frozenset[str]]]:
    """Every named URL of the URL conf as (namespaced name, its argument names)."""
    for entry in patterns:
        pattern = entry.pattern
        names = groups | set(getattr(pattern, "converters", {})) | set(pattern.regex.groupindex)
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from named_patterns(entry.url_patterns, inner, frozenset(names))
        elif isinstance(entry, URLPattern) and entry.name:
            yield f"{namespace}{entry.name}", frozenset(names)


@pytest.fixture
def world(
    make_page: Callable[..., Page], reader: User, editor: User, admin_user: User
) -> dict[str, Any]:
    page = make_page("Deploy notes", "How we deploy.\n")
    proposal = version_propose(
        actor=reader, page=page, body="How we deploy, step by step.\n", change_summary="More."
    )
    attachment = services.attachment_add(
        actor=editor, page=page, upload=SimpleUploadedFile("notes.txt", b"Some notes.\n")
    )
    agent, _ = agent_services.agent_create(actor=admin_user, name="docs-bot")
    agent_services.page_set_add(actor=admin_user, agent=agent, page=page)
    return {
        "public_id": page.public_id,
        "page_id": page.public_id,
        "number": proposal.number,
        "attachment_id": attachment.pk,
        "agent_id": agent.pk,
        # Disconnecting takes only POST: any id shows the 405's policy.
        "connection_id": 1,
        # Any id: a workflow that does not exist answers 404, with the policy.
        "workflow_id": 1,
        # Likewise a grant, a group or an inbox item that does not exist (404 or 405).
        "grant_id": 1,
        "group_id": 1,
        "item_id": 1,
        # A decision batch that does not exist: its undo takes only POST (405).
        "batch_id": 1,
        "person_id": admin_user.pk,
        # A set-password link that does not check out answers with a page, and the policy.
        "uidb64": "MQ",
        "token": "not-a-token",
        "object_id": str(page.pk),
        "id": admin_user.pk,
        "app_label": "wiki",
        "content_type_id": 1,
    }


def test_every_url_answers_with_the_policy(
    world: dict[str, Any], admin_user: User, client_as: Callable[[User], Client]
) -> None:
    client = client_as(admin_user)
    html_pages, walked = [], 0
    for name, arguments in sorted(set(named_patterns(get_resolver().url_patterns))):
        try:
            url = reverse(name, kwargs={key: world[key] for key in arguments})
        except (KeyError, NoReverseMatch) as error:
            pytest.fail(f"cannot build a URL for {name} {sorted(arguments)}: {error}")
        response = client.get(url)
        walked += 1
        header = response.headers.get("Content-Security-Policy")
        # Downloads (attachments) set a stricter policy of their own; every page, error and
        # redirect answers with Quire's.
        if response.get("Content-Type", "").startswith("text/html") or response.status_code in (
            301,
            302,
        ):
            assert_policy(header, f"GET {url} ({name})")
        else:
            assert header, f"GET {url} ({name}) has no Content-Security-Policy"
        if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
            html_pages.append(name)
    assert walked > 60
    for name in (
        "wiki:home",
        "wiki:page",
        "wiki:edit",
        "wiki:search",
        "reviews:queue",
        "reviews:review",
        "reviews:history",
        "agents:detail",
        "agents:preview",
        "admin:index",
        "admin:wiki_page_change",
        "api-docs",
    ):
        assert name in html_pages, f"{name} did not answer an HTML page"


def test_error_pages_and_the_login_page_carry_the_policy(client: Client) -> None:
    for url, status in (("/login/", 200), ("/no/such/page/", 404), ("/p/pg_aaaaaaaa/", 302)):
        response = client.get(url)
        assert response.status_code == status, url
        assert_policy(response.headers.get("Content-Security-Policy"), url)


TEMPLATES = PROJECT_ROOT / "templates"
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>"  # a script element without src
    r"|<style\b"  # a style element
    r"|\sstyle\s*="  # a style attribute
    r"|\son[a-z]+\s*="  # an event handler attribute
    r"|javascript:",
    re.IGNORECASE,
)


@pytest.mark.parametrize(
    "template", sorted(TEMPLATES.rglob("*.html")), ids=lambda p: str(p.relative_to(TEMPLATES))
)
def test_templates_have_no_inline_script_style_or_handlers(template: Path) -> None:
    found = [m.group(0) for m in INLINE.finditer(template.read_text(encoding="utf-8"))]
    assert found == [], f"{template.relative_to(TEMPLATES)}: {found}"
