"""Each MCP tool costs the same number of SQL queries for a page set of 10 pages and of 500."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents import selectors as agent_selectors
from agents import services as agent_services
from core.actors import SystemActor
from reviews.actions.create import page_create
from reviews.actions.propose import version_propose
from reviews.models import GroupWebhook, WebhookPost
from wiki import services as wiki_services
from wiki.models import Page
from wiki.roles import REVIEWERS

from .fixtures_mcp import rpc_tool

pytestmark = pytest.mark.django_db

# Per call, the whole request: the tool's reads and writes (with the savepoints of the
# services' transactions) and the audit row; the token was looked up by the first call and is
# kept (agents.selectors.agent_by_token). Same on SQLite and PostgreSQL.
# get_page: the page with its live version, set check and whether it has files, the
# referenced pages, the upsert of the version the agent read (editing agents only: it is the
# base of their next replace), the audit row (a page with files adds one: see below).
# search_pages: the set, the search (its hits' sections in the same statement), the copies of
# its hits (wiki.search.copies_of: by their text's fingerprint, issue 49), the audit row.
EXPECTED = {
    "0:browse": 4,
    "1:search_pages": 4,
    "2:get_page": 4,  # an editing agent's read is recorded: one upsert
    "3:get_page_source": 5,
    # A new page goes last among its siblings (one read of their places), and a sibling the
    # agent sees with the same title is looked for (one query, for the warning).
    "4:create_page": 30,
    # Call 4's page went into the agent's own set, so this call finds its agent again.
    "5:create_page": 25,
    "6:get_page_source": 5,
    "7:update_page": 22,  # 21 + the last live version the agent read
    "8:update_page": 22,
    "9:append_to_page": 20,
    # the set's entries, the versions, the requests for changes, the audit row
    "10:recent_activity": 4,
}
# A proposal's review costs 3 of them: the workflow assignments above the page, the review
# row and its first revision row (a revision: the review locked, moved on, a revision row).
# Its review-request mail 4 (reviews.deciders): the grants above the page, the people of the
# groups concerned, their approvals, and the deciders' email preferences.
# Its review requests cost 2 more for the inbox (inbox.services.deliver): the deciders'
# choices of channel and the inbox items, one statement each whatever their number, and 1
# for whether the step's group has a chat webhook (reviews.webhooks); when it has one, 2 more:
# the grants above the page (may the group read it?) and the insert of the post owed to it.
# Whether the agent may propose there (wiki.permissions: its owner's grants) reads the grants
# above the page: 1 more for a page with a parent (none at the top level).


def build_set(editor: User, size: int, label: str) -> tuple[str, list[Page]]:
    """An editing agent whose set holds `size` live pages: entries, each with one child."""
    agent, token = agent_services.agent_create(
        actor=SystemActor("tests"), name=f"agent-{label}", can_edit_pages=True
    )
    pages: list[Page] = []
    for n in range(size // 2):
        body = "Routine notes about the office." + (" zebra crossing" if n < 3 else "")
        top = page_create(actor=editor, title=f"{label} topic {n}", body=body, publish=True).page
        child = page_create(
            actor=editor,
            title=f"{label} detail {n}",
            body="More notes.",
            parent=top,
            publish=True,
        ).page
        agent_services.page_set_add(
            actor=SystemActor("tests"), agent=agent, page=top, use_when=["Use it."]
        )
        pages += [top, child]
    version_propose(
        actor=editor,
        page=pages[0],
        instructions=(
            f"Read [[{pages[1].public_id}]] and [[{pages[2].public_id}]] and [[pg_zzzzzzzz]]."
        ),
        publish=True,
    )
    return token, pages


def measure(client: Client, token: str, pages: list[Page]) -> dict[str, int]:
    first, child, other = pages[0], pages[1], pages[2]
    calls: list[tuple[str, dict[str, Any]]] = [
        ("browse", {}),
        ("search_pages", {"query": "zebra"}),
        ("get_page", {"pageId": first.public_id}),
        ("get_page_source", {"pageId": first.public_id}),
        ("create_page", {"title": "A new page", "markdown": "Text."}),
        ("create_page", {"title": "A new child", "markdown": "Text.", "parentId": first.public_id}),
        ("get_page_source", {"pageId": child.public_id}),
        ("update_page", {"pageId": child.public_id, "markdown": "New.", "changeSummary": "x"}),
        ("update_page", {"pageId": child.public_id, "markdown": "Newer.", "changeSummary": "y"}),
        ("append_to_page", {"pageId": other.public_id, "markdown": "More.", "changeSummary": "z"}),
        ("recent_activity", {}),
    ]
    # The first call of a minute also records last_used_at, and finds the token.
    rpc_tool(client, token, "browse")
    counts: dict[str, int] = {}
    for n, (tool, arguments) in enumerate(calls):
        with CaptureQueriesContext(connection) as queries:
            result = rpc_tool(client, token, tool, **arguments)
        assert result["isError"] is False, (tool, result)
        counts[f"{n}:{tool}"] = len(queries)
    return counts


@pytest.fixture
def slow_clocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The token stays cached and its last use recorded for the whole test, however slowly a
    loaded machine runs it (past 5 s a call looked the token up again: one query more)."""
    monkeypatch.setattr(agent_selectors, "TOKEN_CACHE_SECONDS", 3600.0)
    monkeypatch.setattr(agent_services, "LAST_USED_RESOLUTION", timedelta(hours=1))


@pytest.mark.usefixtures("slow_clocks")
def test_it_costs_the_same_queries_for_10_and_500_pages(
    client: Client, editor: User, settings: Any
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    small = measure(client, *build_set(editor, 10, "small"))
    large = measure(client, *build_set(editor, 500, "large"))
    assert small == large
    assert small == expected(settings)


def expected(settings: Any) -> dict[str, int]:
    """EXPECTED, with what the database and the rate-limit store add."""
    # Without Redis the agent's rate-limit counter is one upsert in the database.
    counter = 0 if settings.REDIS_URL else 1
    # On PostgreSQL a search sets its statement timeout in a savepoint that it rolls back
    # (it wrote nothing): 4 statements more.
    timeout = {"1:search_pages": 4} if connection.vendor == "postgresql" else {}
    counts = {call: count + counter + timeout.get(call, 0) for call, count in EXPECTED.items()}
    if connection.vendor == "postgresql":
        # A proposal on a page with a parent holds that parent shared (wiki.services.lock_pages).
        counts["7:update_page"] += 1
        counts["8:update_page"] += 1
        # An editing agent's read record goes with the audit row, one statement (its CTE):
        # one round trip and one durable commit for both (core.audit.audit_record's along).
        for read in ("2:get_page", "3:get_page_source", "6:get_page_source"):
            counts[read] -= 1
    return counts


@pytest.mark.usefixtures("slow_clocks")
def test_it_costs_two_queries_more_per_proposal_when_its_groups_chat_has_a_webhook(
    client: Client, editor: User, settings: Any
) -> None:
    """The chat post is a row written with the proposal (reviews.webhooks): one batched
    insert, and one read of the grants above the page (may the group read it?), whatever the
    size of the set."""
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    reviewers, _ = Group.objects.get_or_create(name=REVIEWERS)
    GroupWebhook.objects.create(group=reviewers, url="http://127.0.0.1:9/hook")
    small = measure(client, *build_set(editor, 10, "small"))
    large = measure(client, *build_set(editor, 500, "large"))
    assert small == large
    proposals = {"4:create_page", "5:create_page", "7:update_page", "8:update_page"}
    proposals.add("9:append_to_page")
    assert small == {
        call: count + 2 * (call in proposals) for call, count in expected(settings).items()
    }
    assert WebhookPost.objects.count() == 2 * len(proposals)


@pytest.mark.parametrize("size", [10, 500])
def test_it_returns_every_page_of_the_set_from_browse_and_only_those_from_search(
    client: Client, editor: User, size: int
) -> None:
    # 5 entries spell their paths out in the query; 250 go past PREFIX_CONDITIONS_MAX and
    # use the subquery: both must give the same pages.
    token, pages = build_set(editor, size, "big")
    outside = page_create(
        actor=editor, title="Outside", body="A zebra crossing.", publish=True
    ).page
    listed: list[str] = []
    cursor: str | None = None
    while True:
        arguments = {"cursor": cursor} if cursor else {}
        answer = rpc_tool(client, token, "browse", **arguments)["structuredContent"]
        listed += [page["pageId"] for page in answer["pages"]]
        cursor = answer.get("nextCursor")
        if cursor is None:
            break
    assert listed == [page.public_id for page in pages]
    result = rpc_tool(client, token, "search_pages", query="zebra crossing")
    found = {hit["pageId"] for hit in result["structuredContent"]["results"]}
    assert found == {page.public_id for page in pages[0:6:2]}
    assert outside.public_id not in found


@pytest.mark.usefixtures("slow_clocks")
def test_it_reads_a_page_s_files_in_one_more_query_only_when_it_has_some(
    client: Client, editor: User, settings: Any
) -> None:
    settings.QUIRE_AGENT_RATE_LIMIT = 1000
    token, pages = build_set(editor, 10, "files")
    plain, with_files = pages[2], pages[4]
    wiki_services.attachment_add(
        actor=editor,
        page=with_files,
        upload=SimpleUploadedFile("notes.txt", b"Zebra notes.", content_type="text/plain"),
    )
    # The first call of a minute also records last_used_at, and finds the token.
    rpc_tool(client, token, "browse")
    counts: list[int] = []
    for page in (plain, with_files):
        with CaptureQueriesContext(connection) as queries:
            result = rpc_tool(client, token, "get_page", pageId=page.public_id)
        assert result["isError"] is False, result
        counts.append(len(queries))
        files = result["structuredContent"]["files"]
        assert files == (
            [{"name": "notes.txt", "text": "Zebra notes."}] if page is with_files else []
        )
    counter = 0 if settings.REDIS_URL else 1
    # No references on these pages: page, (files,) the read's upsert, audit row; on
    # PostgreSQL the upsert and the audit row are one statement.
    together = 1 if connection.vendor == "postgresql" else 0
    assert counts == [3 + counter - together, 4 + counter - together]
