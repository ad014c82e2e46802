"""search_pages over the imported 18F handbook puts the page a person would expect first."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents import services as agent_services
from core.actors import SystemActor
from wiki.models import Page

from .conftest import HANDBOOK
from .fixtures_mcp import rpc_tool
from .prerequisites import require_corpus

pytestmark = pytest.mark.django_db

# A question someone would type, and the handbook file that answers it.
EXPECTATIONS = [
    ("paid parental leave", "travel-and-leave/paid-parental-leave.md"),
    (
        "password manager",
        "general-information-and-resources/tech-policies/password-requirements.md",
    ),
    (
        "report a security incident",
        "general-information-and-resources/tech-policies/security-incidents.md",
    ),
    (
        "get a travel card",
        "travel-and-leave/travel-and-leave-policies/first-time-travel-travel-card.md",
    ),
    ("slack channel best practices", "tools/slack/guidelines.md"),
    (
        "transit subsidy",
        "general-information-and-resources/employee-resources-policies/transit-benefit.md",
    ),
]


@pytest.fixture
def handbook_token(admin_user: User) -> str:
    require_corpus(HANDBOOK)
    call_command(
        "import_markdown",
        str(HANDBOOK),
        "--publish",
        "--author",
        admin_user.username,
        stdout=StringIO(),
        stderr=StringIO(),
    )
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="handbook-bot")
    for page in Page.objects.filter(parent__isnull=True).order_by("path"):
        agent_services.page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    return token


def source_of(page_id: str) -> str:
    return Page.objects.get(public_id=page_id).source_path or ""


def test_it_ranks_the_expected_handbook_page_first(client: Client, handbook_token: str) -> None:
    # One import for all the questions; every miss is reported together.
    misses = []
    for query, expected in EXPECTATIONS:
        result = rpc_tool(client, handbook_token, "search_pages", query=query)
        assert result["isError"] is False, result
        hits = result["structuredContent"]["results"]
        assert 1 <= len(hits) <= 8, query
        ranked = [source_of(hit["pageId"]) for hit in hits]
        if not ranked[0].endswith(expected):
            misses.append((query, expected, ranked[:3]))
    assert misses == []
