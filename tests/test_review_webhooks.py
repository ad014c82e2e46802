"""A group's outgoing webhook for review requests: when a proposal starts waiting on a step of
the group, Quire POSTs Slack/Teams-compatible JSON {"text": ...} to it, from a Celery task
queued on commit (the path review emails take)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from reviews import services
from reviews.models import GroupWebhook
from wiki.models import Page
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.usefixtures("eager_tasks")


class Hook:
    def __init__(self, url: str, received: list[dict[str, Any]]) -> None:
        self.url = url
        self.received = received


@pytest.fixture
def hook() -> Iterator[Hook]:
    """A small chat server on a localhost port that records what it is sent."""
    received: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            received.append(
                {
                    "path": self.path,
                    "type": self.headers.get("Content-Type"),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Hook(f"http://127.0.0.1:{server.server_address[1]}/hooks/reviews", received)
    finally:
        server.shutdown()
        server.server_close()


def test_it_posts_a_review_request_to_the_steps_group_webhook(
    hook: Hook,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUIRE_BASE_URL = "https://quire.example.com"
    GroupWebhook.objects.create(group=Group.objects.get(name=REVIEWERS), url=hook.url)
    page = make_page("Refund policy", "Refunds take five days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        version = services.version_propose(
            actor=reader, page=page, body="Refunds take seven days.\n", change_summary="Slower"
        )
    (posted,) = hook.received
    assert posted["path"] == "/hooks/reviews"
    assert posted["type"] == "application/json"
    text = posted["body"]["text"]
    assert set(posted["body"]) == {"text"}
    assert "reed proposes a change to Refund policy (v2)" in text
    assert "Slower" in text
    url = f"https://quire.example.com/reviews/pages/{page.public_id}/v{version.number}/"
    assert url in text


def test_it_posts_nothing_for_a_group_without_a_webhook_or_when_the_hook_is_down(
    hook: Hook,
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    page = make_page("Refund policy", "Refunds take five days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        services.version_propose(actor=reader, page=page, body="Seven days.\n")
    assert hook.received == []
    GroupWebhook.objects.create(
        group=Group.objects.get(name=REVIEWERS), url="http://127.0.0.1:9/nobody-listens"
    )
    other = make_page("Returns", "Thirty days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        proposal = services.version_propose(actor=reader, page=other, body="Sixty days.\n")
    # The proposal stands; the webhook's failure is the task's to retry, not the author's.
    assert proposal.status == "in_review"


def test_it_lets_an_admin_set_and_clear_a_groups_webhook_on_the_group_screen(
    admin_user: User, reviewer: User, editor: User
) -> None:
    from django.test import Client

    group = Group.objects.get(name=REVIEWERS)
    admin = Client()
    admin.force_login(admin_user)
    url = f"/groups/{group.pk}/webhook/"
    answer = admin.post(url, {"url": "https://hooks.slack.com/services/T0/B0/x"})
    assert answer.status_code == 302
    assert GroupWebhook.objects.get(group=group).url == "https://hooks.slack.com/services/T0/B0/x"
    screen = admin.get(f"/groups/{group.pk}/").content.decode()
    assert 'value="https://hooks.slack.com/services/T0/B0/x"' in screen
    refused = admin.post(url, {"url": "ftp://example.com/hook"}, follow=True)
    assert "Give the chat&#x27;s webhook address" in refused.content.decode()
    assert GroupWebhook.objects.get(group=group).url.startswith("https://hooks.slack.com/")
    admin.post(url, {"url": ""})
    assert not GroupWebhook.objects.exists()
    other = Client()
    other.force_login(editor)
    assert other.post(url, {"url": "https://example.com/hook"}).status_code == 403
    assert not GroupWebhook.objects.exists()
