"""Fixtures for the review tests: an agent that proposes edits, and Chromium for the walk."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from agents.models import Agent
from tests.prerequisites import BROWSER, require
from tests.waits import BROWSER_TIMEOUT_MS
from wiki.models import Page, Version

CHROMIUM = Path("/usr/bin/chromium")
ASYNC_UNSAFE = "DJANGO_ALLOW_ASYNC_UNSAFE"
SCREENSHOTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def proposing_agent(db: Any) -> Agent:
    """An agent allowed to propose edits (its proposals wait for a reviewer)."""
    return Agent.objects.create(
        name="docs-bot", description="Keeps the docs current.", can_edit_pages=True
    )


@pytest.fixture
def second_agent(db: Any) -> Agent:
    return Agent.objects.create(name="triage-bot", can_edit_pages=True)


@pytest.fixture
def add_proposals(db: Any) -> Callable[[list[Page], int], None]:
    """Add waiting agent proposals quickly (bulk inserts), for query-count tests."""
    return _add_proposals


def _add_proposals(pages: list[Page], count: int) -> None:
    """`count` waiting proposals spread over `pages`, from agents and people, some stale."""
    agents = Agent.objects.bulk_create(
        Agent(name=f"bulk-agent-{Agent.objects.count() + i}", can_edit_pages=True)
        for i in range(count)
    )
    start = timezone.now() - timedelta(days=2)
    versions = []
    for i, agent in enumerate(agents):
        page = pages[i % len(pages)]
        page.last_version_number += 1
        live = page.live_version
        versions.append(
            Version(
                page=page,
                number=page.last_version_number,
                title=page.title,
                parent_id=page.parent_id,  # a proposal keeps its page's parent
                body=f"proposal {i}\n",
                proposed_body=f"proposal {i}\n",
                change_summary=f"Change {i}",
                author_agent=agent,
                # Every third proposal was written against an older version: stale.
                base_version=None if i % 3 == 0 else live,
                created_at=start + timedelta(seconds=i),
            )
        )
    created = Version.objects.bulk_create(versions)
    # auto_now_add ignores the value given; set the ages explicitly.
    for version, wanted in zip(created, versions, strict=True):
        Version.objects.filter(pk=version.pk).update(created_at=wanted.created_at)
    for page in pages:
        Page.objects.filter(pk=page.pk).update(last_version_number=page.last_version_number)


# Module scope: Playwright's sync API keeps an event loop running in this thread while it
# is open, which would break asyncio.run() in the MCP tests of other modules.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright; skipped when it is not installed (unless CI)."""
    require(
        BROWSER,
        CHROMIUM.exists(),
        "Debian's Chromium is not installed at /usr/bin/chromium (apt-get install chromium)",
    )
    from playwright.sync_api import expect, sync_playwright

    # A busy machine slows the page, not what it must show: wait for it (tests/waits.py).
    expect.set_options(timeout=BROWSER_TIMEOUT_MS)

    # While Playwright's sync API is open it leaves an event loop marked running in this
    # thread, so Django refuses ORM calls (the tests' own and the database teardown) unless
    # told they are safe: they are synchronous. Only for as long as the browser is open:
    # the context puts the variable back as it was, so later tests keep Django's guard.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv(ASYNC_UNSAFE, "true")
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(BROWSER_TIMEOUT_MS)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
