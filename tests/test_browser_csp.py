"""In Chromium: opening a proposal with remote images fetches nothing from that host, and the
UI works under the Content-Security-Policy (no violation reported on any screen)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents import services as agent_services
from reviews.actions.propose import version_propose
from wiki.models import Page


class _CountingHandler(BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/gif")
        self.end_headers()
        self.wfile.write(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;")

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def image_host() -> Iterator[tuple[str, list[str]]]:
    """Another host serving images on 127.0.0.1 (a free port): its base URL and the paths
    it was asked for."""
    hits: list[str] = []
    handler = type("Handler", (_CountingHandler,), {"hits": hits})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


def log_in(page: Any, base: str, user: User, next_url: str) -> None:
    page.goto(f"{base}/login/?next={next_url}")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", "correct-horse-battery")
    page.click("button[type=submit]")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_opening_a_proposal_with_remote_images_fetches_nothing_from_that_host(
    live_server: Any,
    image_host: tuple[str, list[str]],
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    browser_page: Any,
    screenshots: Path,
) -> None:
    from playwright.sync_api import expect

    remote, hits = image_host
    page_ = make_page("Release notes", "Version 2 is out.\n")
    proposal = version_propose(
        actor=reader,
        page=page_,
        body=(
            "Version 2 is out.\n\n"
            f"![Release chart]({remote}/chart.png)\n\n"
            f'<img src="{remote}/pixel.gif?who=reviewer" alt="">\n'
        ),
        change_summary="Add the chart.",
    )
    requested: list[str] = []
    violations: list[str] = []
    page = browser_page
    page.on("request", lambda request: requested.append(request.url))
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    base = live_server.url

    log_in(page, base, reviewer, f"/reviews/pages/{page_.public_id}/v{proposal.number}/")

    expect(page.locator(".rv-invisible-banner, h1").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    assert [url for url in requested if url.startswith(remote)] == []
    assert hits == []
    assert violations == []
    links = page.locator("a.remote-image")
    expect(links.first).to_contain_text("Release chart (from 127.0.0.1, not loaded)")
    assert links.count() >= 2
    page.screenshot(path=str(screenshots / "review-remote-image.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_every_screen_works_without_a_policy_violation(
    live_server: Any,
    make_page: Callable[..., Page],
    reader: User,
    admin_user: User,
    browser_page: Any,
) -> None:
    from playwright.sync_api import expect

    wiki_page = make_page("Deploy notes", "How we **deploy**.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    proposal = version_propose(
        actor=reader, page=wiki_page, body="How we deploy, carefully.\n", change_summary="More."
    )
    agent, _ = agent_services.agent_create(actor=admin_user, name="docs-bot")
    violations: list[str] = []
    page = browser_page
    page.on(
        "console",
        lambda message: (
            violations.append(f"{page.url}: {message.text}")
            if "Content Security Policy" in message.text
            else None
        ),
    )
    base = live_server.url
    log_in(page, base, admin_user, "/")

    for path in (
        "/",
        f"/p/{wiki_page.public_id}/",
        f"/p/{wiki_page.public_id}/edit/",
        "/search/?q=deploy",
        "/reviews/",
        f"/reviews/pages/{wiki_page.public_id}/v{proposal.number}/",
        f"/reviews/pages/{wiki_page.public_id}/history/",
        "/agents/",
        f"/agents/{agent.pk}/",
        f"/agents/{agent.pk}/preview/",
        "/admin/",
        "/admin/wiki/page/",
        f"/admin/wiki/page/{wiki_page.pk}/change/",
        "/admin/auth/user/add/",
    ):
        response = page.goto(f"{base}{path}")
        assert response is not None and response.status == 200, path
        page.wait_for_load_state("networkidle")

    # Swagger UI builds the whole page with script: it renders only if the policy allows it.
    page.goto(f"{base}/api/docs/")
    expect(page.locator("#swagger-ui .info .title")).to_contain_text("Quire API")
    assert violations == []
