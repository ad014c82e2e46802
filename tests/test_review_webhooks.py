"""A group's outgoing webhook for review requests: when a proposal starts waiting on a step of
the group, when it waits past its due time (a reminder, then the escalation to the admins) and
when nobody can decide it, Quire POSTs Slack/Teams-compatible JSON {"text": ...} to it. Each
post is a row written with the change and sent by a task on commit; the sweep sends again what
a chat outage left owed, as it does for emails."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db.models import F
from django.test import Client
from django.utils import timezone

from agents import services as agent_services
from core.actors import SystemActor
from people import services as people_services
from reviews import asking, delivery, tasks, webhooks, workflows
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.models import GroupWebhook, WebhookPost
from tests.fixtures_mail import SMTPServer, celery_settings
from tests.fixtures_mcp import rpc_tool
from tests.waits import wait_until
from wiki import permissions
from wiki.models import Page, Version
from wiki.roles import REVIEWERS

pytestmark = pytest.mark.usefixtures("eager_tasks")


# The chat servers here listen on 127.0.0.1, which Quire refuses to post to unless the
# operator allows it (reviews.webhook_address): here, and in a Celery worker's environment.
LOCAL_CHAT_ALLOWED = {"QUIRE_WEBHOOK_ALLOWED_HOSTS": "127.0.0.1"}


@pytest.fixture(autouse=True)
def _local_chat_allowed(settings: Any) -> None:
    settings.QUIRE_WEBHOOK_ALLOWED_HOSTS = ["127.0.0.1"]


class Hook:
    def __init__(self, url: str, received: list[dict[str, Any]], answers: list[int]) -> None:
        self.url = url
        self.received = received
        # The status codes of the next answers, in order; 200 once they are used up.
        self.answers = answers

    def texts(self) -> list[str]:
        return [posted["body"]["text"] for posted in self.received]


@pytest.fixture
def hook() -> Iterator[Hook]:
    """A small chat server on a localhost port that records what it is sent."""
    received: list[dict[str, Any]] = []
    answers: list[int] = []

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
            self.send_response(answers.pop(0) if answers else 200)
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hooks/reviews"
        yield Hook(url, received, answers)
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
        version = version_propose(
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
        version_propose(actor=reader, page=page, body="Seven days.\n")
    assert hook.received == []
    GroupWebhook.objects.create(
        group=Group.objects.get(name=REVIEWERS), url="http://127.0.0.1:9/nobody-listens"
    )
    other = make_page("Returns", "Thirty days.\n")
    with django_capture_on_commit_callbacks(execute=True):
        proposal = version_propose(actor=reader, page=other, body="Sixty days.\n")
    # The proposal stands; the post waits in the outbox for the sweep, not on the author.
    assert proposal.status == "in_review"
    post = WebhookPost.objects.get(version=proposal)
    assert post.status == "pending"
    # The address is the chat's secret: the error names neither its path nor itself.
    assert "ConnectionError" in post.last_error
    assert "nobody-listens" not in post.last_error


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


# --- nothing lost: the posts are kept like the emails --------------------------------------


def _propose(page: Page, author: User, capture: Any) -> Version:
    with capture(execute=True):
        return version_propose(
            actor=author, page=page, body="Refunds take seven days.\n", change_summary="Slower"
        )


@pytest.fixture
def chat(hook: Hook, reviewer: User) -> Hook:
    """The Reviewers' chat, which hears what waits on the default workflow's step."""
    GroupWebhook.objects.create(group=Group.objects.get(name=REVIEWERS), url=hook.url)
    return hook


@pytest.fixture
def propose_on(
    make_page: Callable[..., Page], reader: User, django_capture_on_commit_callbacks: Any
) -> Callable[[str], Version]:
    """reed's proposal on a new page of that title."""
    return lambda title: _propose(
        make_page(title, "Five days.\n"), reader, django_capture_on_commit_callbacks
    )


@pytest.fixture
def propose(propose_on: Callable[[str], Version]) -> Callable[[], Version]:
    return lambda: propose_on("Refund policy")


def _a_minute_later() -> None:
    """The minute the sweep leaves a freshly tried post alone has passed (to the outbox's
    clock)."""
    _move_the_clock(timedelta(minutes=2))


def _sweep_a_minute_later() -> None:
    """The beat's sweep, a minute later."""
    _a_minute_later()
    tasks.retry_pending_notifications.delay()


def test_it_keeps_a_post_the_chat_refused_with_a_503_and_the_sweep_delivers_it(
    chat: Hook, propose: Callable[[], Version]
) -> None:
    chat.answers.append(503)
    version = propose()
    assert len(chat.received) == 1
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.status, post.attempts, post.kind) == ("pending", 1, "review_requested")
    assert post.last_error == "ChatUnreachable: HTTPError: HTTP 503 from the chat's webhook"

    # The chat is back; the beat's sweep (every minute) sends what is still owed.
    _sweep_a_minute_later()
    assert len(chat.received) == 2
    assert chat.received[1]["body"] == chat.received[0]["body"]
    assert "reed proposes a change to Refund policy (v2)" in chat.texts()[1]
    post.refresh_from_db()
    assert (post.status, post.attempts, post.last_error) == ("sent", 2, "")
    _sweep_a_minute_later()
    assert len(chat.received) == 2


def test_it_marks_a_post_refused_by_a_4xx_and_does_not_try_it_again(
    chat: Hook, propose: Callable[[], Version], caplog: pytest.LogCaptureFixture
) -> None:
    chat.answers.extend([404, 404])
    version = propose()
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.status, post.attempts) == ("refused", 1)
    assert "404" in post.last_error and "address" in post.last_error
    assert "check the webhook's address" in caplog.text
    _sweep_a_minute_later()
    assert len(chat.received) == 1


def test_it_marks_a_post_failed_after_the_attempts_and_the_admin_sends_it_again(
    chat: Hook,
    propose: Callable[[], Version],
    admin_user: User,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(delivery, "MAX_ATTEMPTS", 3)
    # The chat is down for longer than the attempts last.
    chat.answers.extend([503] * 5)
    version = propose()
    for _ in range(4):
        _sweep_a_minute_later()
    assert len(chat.received) == 3
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.status, post.attempts) == ("failed", 3)
    assert "503" in post.last_error

    # The row stays, visible to the admin, who sends it again once the chat is back.
    admin = Client()
    admin.force_login(admin_user)
    listing = admin.get("/admin/reviews/webhookpost/?status=failed").content.decode()
    assert "Failed" in listing and "Refund policy" in listing
    chat.answers.clear()
    admin.post(
        "/admin/reviews/webhookpost/", {"action": "send_again", "_selected_action": [post.pk]}
    )
    post.refresh_from_db()
    assert (post.status, post.attempts) == ("sent", 1)
    assert len(chat.received) == 4


def test_it_keeps_the_post_when_the_broker_is_down(
    chat: Hook, propose: Callable[[], Version], broker_down: None
) -> None:
    # broker_down comes after the module's eager_tasks, so the broker it names is the one used.
    version = propose()
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.status, post.attempts) == ("pending", 0)
    assert chat.received == []

    WebhookPost.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    with celery_settings(task_always_eager=True):  # the broker is back
        assert webhooks.retry_pending() == 1
    assert len(chat.received) == 1
    post.refresh_from_db()
    assert (post.status, post.attempts) == ("sent", 1)


def test_it_does_not_post_late_about_a_proposal_decided_meanwhile(
    chat: Hook,
    propose: Callable[[], Version],
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    chat.answers.append(503)
    version = propose()
    with django_capture_on_commit_callbacks(execute=True):
        version_approve(actor=reviewer, version=version)
    _sweep_a_minute_later()
    assert len(chat.received) == 1  # the try that met the outage
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.status, post.last_error) == ("skipped", "no longer waiting for review")


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_it_retries_in_a_celery_worker_until_the_chat_takes_the_post(
    chat: Hook,
    propose: Callable[[], Version],
    celery_worker: Callable[..., Any],
    smtp_server: SMTPServer,
) -> None:
    # After a failure the chat's next try waits for the sweep's pause (a second here).
    worker = celery_worker(
        smtp_port=smtp_server.port,
        extra_env={"QUIRE_OUTBOX_SWEEP_GRACE_SECONDS": "1", **LOCAL_CHAT_ALLOWED},
    )
    chat.answers.extend([503, 502])
    version = propose()
    [post] = WebhookPost.objects.filter(version=version)
    wait_until(
        lambda: WebhookPost.objects.get(pk=post.pk).status == "sent",
        what="the post, sent after two refusals",
        every=0.2,
    )
    assert len(chat.received) == 3
    post.refresh_from_db()
    assert post.attempts == 3
    assert "Retry in" in worker.output()


# --- reminders, escalation, nobody can decide ----------------------------------------------


def test_it_posts_a_reminder_then_the_escalation_to_the_steps_webhook_once_each(
    chat: Hook,
    propose: Callable[[], Version],
    admin_user: User,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUIRE_BASE_URL = "https://quire.example.com"
    settings.QUIRE_REVIEW_DUE_HOURS = 48
    settings.QUIRE_REVIEW_ESCALATE_HOURS = 24
    version = propose()
    start = timezone.now()

    def remind(hours: float) -> dict[str, int]:
        _close_the_window()  # hours pass: each post comes after a quiet spell
        with django_capture_on_commit_callbacks(execute=True):
            return asking.reviews_remind(now=start + timedelta(hours=hours))

    url = f"https://quire.example.com/reviews/pages/{version.page.public_id}/v2/"
    assert remind(47) == {"deciders": 0, "admins": 0}
    assert len(chat.received) == 1  # the review request
    assert remind(49) == {"deciders": 1, "admins": 0}
    assert chat.texts()[1] == (
        "Reminder: reed's change to Refund policy (v2) has waited 49 h on step 1 of 1, "
        f"Review (Reviewers): {url}"
    )
    assert remind(60) == {"deciders": 0, "admins": 0}
    assert remind(73) == {"deciders": 0, "admins": 1}
    assert chat.texts()[2] == (
        "Escalated to the admins: reed's change to Refund policy (v2) has waited 73 h on "
        f"step 1 of 1, Review (Reviewers): {url}"
    )
    assert remind(200) == {"deciders": 0, "admins": 0}
    assert len(chat.received) == 3
    kinds = WebhookPost.objects.filter(version=version).values_list("kind", "status")
    assert sorted(kinds) == [
        ("review_escalated", "sent"),
        ("review_reminder", "sent"),
        ("review_requested", "sent"),
    ]


def _legal_policies(hook: Hook, make_page: Callable[..., Page], admin_user: User) -> Page:
    """Legal's chat listens on `hook`; a "Policies" page whose pages Legal reviews (one step)."""
    GroupWebhook.objects.create(group=Group.objects.get(name="Legal"), url=hook.url)
    root = make_page("Policies", "All policies.\n")
    workflow = workflows.workflow_create(
        actor=admin_user,
        name="Legal review",
        steps=[{"name": "Legal check", "group": "Legal", "approvals": 1}],
    )
    workflows.workflow_assign(actor=admin_user, workflow=workflow, page=root)
    return root


def test_it_posts_at_once_that_nobody_can_decide_a_step(
    hook: Hook,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    admin_user: User,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUIRE_BASE_URL = "https://quire.example.com"
    lena = make_user("lena", "Legal")
    root = _legal_policies(hook, make_page, admin_user)
    page = make_page("Refunds", "Five days.\n", parent=root)
    # Legal's only member wrote it: nobody may decide its step.
    version = _propose(page, lena, django_capture_on_commit_callbacks)
    url = f"https://quire.example.com/reviews/pages/{page.public_id}/v{version.number}/"
    assert hook.texts() == [
        "Nobody can decide lena's change to Refunds (v2): it waits on step 1 of 1, "
        f"Legal check (Legal), and nobody there may decide it. An admin should act: {url}"
    ]
    [post] = WebhookPost.objects.filter(version=version)
    assert (post.kind, post.status) == ("nobody_decides", "sent")


def test_it_posts_nobody_can_decide_at_once_inside_the_gathering_window(
    hook: Hook,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reader: User,
    admin_user: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """A review request was just posted to Legal's chat, so the next would be gathered; but
    a proposal nobody can decide is said at once (issue 39), not at the window's end."""
    lena = make_user("lena", "Legal")
    root = _legal_policies(hook, make_page, admin_user)
    refunds = make_page("Refunds", "Five days.\n", parent=root)
    returns = make_page("Returns", "Thirty days.\n", parent=root)
    _propose(refunds, reader, django_capture_on_commit_callbacks)
    assert len(hook.received) == 1  # Lena may decide it: asked at once
    _propose(returns, lena, django_capture_on_commit_callbacks)  # Lena wrote it: nobody may
    assert len(hook.received) == 2
    assert hook.texts()[1].startswith("Nobody can decide lena's change to Returns (v2)")


# --- a bulk import: gathered like the review emails ----------------------------------------


def _close_the_window() -> None:
    """The gathering window (a day at most) has passed."""
    _move_the_clock(timedelta(days=1, minutes=1))


def _move_the_clock(gone: timedelta) -> None:
    WebhookPost.objects.update(
        created_at=F("created_at") - gone, last_attempt_at=F("last_attempt_at") - gone
    )


def test_it_posts_the_first_at_once_and_gathers_a_bulk_import_into_one_message(
    chat: Hook,
    propose_on: Callable[[str], Version],
    reviewer: User,
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.QUIRE_BASE_URL = "https://quire.example.com"
    first = propose_on("Policy 0")
    assert len(chat.received) == 1
    rest = [propose_on(f"Policy {n}") for n in range(1, 40)]
    # The 39 that came within the window wait; one of them is decided meanwhile.
    assert len(chat.received) == 1
    with django_capture_on_commit_callbacks(execute=True):
        version_approve(actor=reviewer, version=rest[0])

    _close_the_window()
    tasks.retry_pending_notifications.delay()

    assert len(chat.received) == 2
    assert "Policy 0 (v2)" in chat.texts()[0]
    follow_up = chat.texts()[1]
    assert follow_up.startswith("38 proposals wait for review:\n• reed proposes")
    assert all(f"a change to Policy {n} (v2)" in follow_up for n in range(2, 22))
    assert "Policy 1 (v2)" not in follow_up  # decided meanwhile
    assert "Policy 22 (v2)" not in follow_up
    assert follow_up.endswith("\nand 18 more: https://quire.example.com/reviews/")
    assert len(follow_up) < 4000  # Slack shows 4,000 characters of a message's text
    statuses = dict(WebhookPost.objects.values_list("version_id", "status"))
    assert statuses.pop(rest[0].pk) == "skipped"
    assert set(statuses.values()) == {"sent"} and first.pk in statuses
    tasks.retry_pending_notifications.delay()
    assert len(chat.received) == 2  # every post exactly once


def test_it_retries_a_gathered_message_as_one_and_an_outage_spends_one_attempt_a_try(
    chat: Hook, propose_on: Callable[[str], Version]
) -> None:
    propose_on("Policy 0")
    early = [propose_on(f"Policy {n}") for n in range(1, 4)]
    _close_the_window()
    chat.answers.append(503)
    tasks.retry_pending_notifications.delay()
    assert len(chat.received) == 2  # the gathered message met the outage
    owed = WebhookPost.objects.filter(status="pending")
    assert sorted(owed.values_list("attempts", flat=True)) == [1, 1, 1]

    # Posts arriving during the pause after the failure wait with the others.
    late = [propose_on(f"Policy {n}") for n in range(4, 6)]
    assert len(chat.received) == 2
    _sweep_a_minute_later()

    assert len(chat.received) == 3
    assert chat.texts()[2].startswith("5 proposals wait for review:\n")
    attempts = dict(WebhookPost.objects.values_list("version_id", "attempts"))
    assert [attempts[version.pk] for version in early + late] == [2, 2, 2, 1, 1]
    assert set(WebhookPost.objects.values_list("status", flat=True)) == {"sent"}


def test_it_marks_every_post_of_a_gathered_message_the_chat_refused_refused(
    chat: Hook, propose_on: Callable[[str], Version]
) -> None:
    propose_on("Policy 0")
    gathered = [propose_on(f"Policy {n}") for n in range(1, 3)]
    chat.answers.append(404)
    _close_the_window()
    tasks.retry_pending_notifications.delay()
    refused = WebhookPost.objects.filter(version__in=gathered)
    assert set(refused.values_list("status", "attempts")) == {("refused", 1)}
    _sweep_a_minute_later()
    assert len(chat.received) == 2


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_it_sends_the_gathered_message_from_the_worker_when_the_window_closes(
    chat: Hook,
    propose_on: Callable[[str], Version],
    celery_worker: Callable[..., Any],
    smtp_server: SMTPServer,
) -> None:
    celery_worker(
        smtp_port=smtp_server.port,
        extra_env={"QUIRE_WEBHOOK_GATHER_SECONDS": "5", **LOCAL_CHAT_ALLOWED},
    )
    propose_on("Policy 0")
    wait_until(lambda: len(chat.received) == 1, what="the first post", every=0.2)
    propose_on("Policy 1")
    propose_on("Policy 2")

    wait_until(lambda: len(chat.received) == 2, what="the gathered post", every=0.2)
    follow_up = chat.texts()[1]
    assert follow_up.startswith("2 proposals wait for review:\n")
    assert "Policy 1 (v2)" in follow_up and "Policy 2 (v2)" in follow_up
    assert set(WebhookPost.objects.values_list("status", flat=True)) == {"sent"}
    assert len(chat.received) == 2


# --- in process (no Redis): a failed post is retried with the next change -----------------


def test_it_retries_a_failed_post_in_process_after_a_change_that_posts_nothing(
    hook: Hook,
    propose_on: Callable[[str], Version],
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # A proposal made before the Reviewers had a chat: its rejection posts nothing.
    earlier = propose_on("Returns")
    GroupWebhook.objects.create(group=Group.objects.get(name=REVIEWERS), url=hook.url)
    hook.answers.append(503)
    version = propose_on("Refund policy")
    [post] = WebhookPost.objects.filter(version=version)
    assert post.status == "pending"

    _a_minute_later()
    with django_capture_on_commit_callbacks(execute=True):
        version_reject(actor=reviewer, version=earlier, comment="Not now.")

    assert len(hook.received) == 2
    post.refresh_from_db()
    assert (post.status, post.attempts) == ("sent", 2)


def test_it_retries_the_owed_posts_from_the_digest_command(
    chat: Hook, propose: Callable[[], Version]
) -> None:
    """Without a beat, cron runs send_review_digest (docs/operating.md): it sends the posts
    still owed too."""
    chat.answers.append(503)
    version = propose()
    _a_minute_later()
    out = StringIO()
    call_command("send_review_digest", stdout=out)
    assert len(chat.received) == 2
    assert WebhookPost.objects.get(version=version).status == "sent"
    assert "queued 1 owed notification(s) and chat post(s)" in out.getvalue()


# --- taking a group's webhook off keeps the record ----------------------------------------


def test_it_keeps_the_posts_when_the_groups_webhook_is_taken_off(
    chat: Hook, propose_on: Callable[[str], Version], admin_user: User
) -> None:
    sent = propose_on("Refund policy")
    _close_the_window()
    chat.answers.append(503)  # the chat is down: the next post is owed
    owed = propose_on("Returns")

    people_services.group_webhook_set(
        actor=admin_user, group=Group.objects.get(name=REVIEWERS), url=""
    )

    assert not GroupWebhook.objects.exists()
    kept = WebhookPost.objects.get(version=sent)
    assert (kept.webhook_id, kept.status) == (None, "sent")
    assert "Refund policy (v2)" in kept.text
    dropped = WebhookPost.objects.get(version=owed)
    assert (dropped.webhook_id, dropped.status) == (None, "skipped")
    assert dropped.last_error == "the group's webhook was taken off"
    _close_the_window()
    tasks.retry_pending_notifications.delay()
    assert len(chat.received) == 2  # the post that met the outage is not tried again


def test_it_skips_a_post_owed_to_the_chat_of_a_group_deleted_meanwhile(
    chat: Hook, propose: Callable[[], Version]
) -> None:
    chat.answers.append(503)
    version = propose()
    Group.objects.get(name=REVIEWERS).delete()
    _sweep_a_minute_later()
    post = WebhookPost.objects.get(version=version)
    assert (post.webhook_id, post.status, post.attempts) == (None, "skipped", 1)
    assert post.last_error == "the group's webhook was taken off"
    assert len(chat.received) == 1


# --- addresses inside the network are refused -----------------------------------------------

INTERNAL = [
    "http://127.0.0.1:8126/internal-admin",
    "https://localhost:8126/internal-admin",
    "https://169.254.169.254/latest/meta-data/",
    "https://10.0.0.7/hooks/reviews",
    "https://192.168.1.20/hooks/reviews",
    "https://[::1]/hooks/reviews",
    "https://[::ffff:127.0.0.1]/hooks/reviews",
    "https://0.0.0.0/hooks/reviews",
    "http://hooks.slack.com/services/T0/B0/x",  # plain http, DEBUG off
]


@pytest.mark.parametrize("url", INTERNAL)
def test_it_refuses_a_webhook_address_inside_the_network(
    admin_user: User, url: str, settings: Any
) -> None:
    settings.QUIRE_WEBHOOK_ALLOWED_HOSTS = []
    group = Group.objects.get(name=REVIEWERS)
    admin = Client()
    admin.force_login(admin_user)
    refused = admin.post(f"/groups/{group.pk}/webhook/", {"url": url}, follow=True)
    page = refused.content.decode()
    assert "public addresses" in page or "must start with https://" in page, url
    assert not GroupWebhook.objects.exists()


def test_it_lets_an_operator_allow_a_host_inside_the_network(
    admin_user: User, settings: Any
) -> None:
    settings.QUIRE_WEBHOOK_ALLOWED_HOSTS = ["chat.internal", "127.0.0.1"]
    group = Group.objects.get(name=REVIEWERS)
    people_services.group_webhook_set(
        actor=admin_user, group=group, url="http://127.0.0.1:8126/hooks/reviews"
    )
    assert GroupWebhook.objects.get(group=group).url == "http://127.0.0.1:8126/hooks/reviews"


def test_it_checks_the_address_again_at_each_post(
    hook: Hook, reviewer: User, propose: Callable[[], Version], caplog: Any, settings: Any
) -> None:
    settings.DEBUG = True  # plain http allowed: the address alone is refused
    # Set when its name was public; it resolves to this server now (DNS changed).
    port = hook.url.split(":")[2].split("/")[0]
    GroupWebhook.objects.create(
        group=Group.objects.get(name=REVIEWERS), url=f"http://localhost:{port}/hooks/reviews"
    )
    version = propose()
    post = WebhookPost.objects.get(version=version)
    assert post.status == "refused" and hook.received == []
    assert post.last_error.startswith("not posted: ")
    assert "loopback" in post.last_error and "hooks/reviews" not in post.last_error
    assert "Not posting to the webhook of Reviewers" in caplog.text
    assert "Traceback" not in caplog.text


def test_it_posts_to_the_address_it_checked_not_to_a_second_answer_of_dns(
    hook: Hook, propose: Callable[[], Version], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 47: the name answered a public address to the check and loopback to the post's
    own lookup (DNS rebinding); the post must go to the address that was checked."""
    settings.DEBUG = True  # plain http: the address alone decides
    port = int(hook.url.split(":")[2].split("/")[0])
    public, asked = "93.184.216.34", []
    answers = [public, "127.0.0.1"]
    real_getaddrinfo = socket.getaddrinfo

    def resolver(host: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        if host == "chat.example.com":
            address = answers.pop(0) if len(answers) > 1 else answers[0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        if host == public:  # the world past DNS is not reached from a test
            raise socket.gaierror(socket.EAI_NONAME, "not reached from tests")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    GroupWebhook.objects.create(
        group=Group.objects.get(name=REVIEWERS), url=f"http://chat.example.com:{port}/hooks"
    )
    version = propose()
    assert hook.received == []
    assert asked.count("chat.example.com") == 1 and public in asked
    post = WebhookPost.objects.get(version=version)
    assert post.status != "sent" and "chat.example.com" not in post.last_error


def test_it_posts_a_proposal_only_to_the_chats_of_groups_that_may_read_it(
    hook: Hook,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    reviewer: User,
    admin_user: User,
    client: Client,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Issue 46: Reviewers outside Legal get no email and no queue row about a proposal in the
    Legal-only section, so their chat must not get its title and summary either; the chat of
    Legal, who decide there, does."""
    section = make_page("Quokka counsel", "Counsel notes.\n")
    legal = Group.objects.create(name="Legal")
    permissions.grant_set(
        actor=admin_user, page=section, group=legal, rights=["read", "propose", "decide"]
    )
    GroupWebhook.objects.create(group=Group.objects.get(name=REVIEWERS), url=hook.url)
    GroupWebhook.objects.create(group=legal, url=hook.url.replace("/reviews", "/legal"))
    lana = make_user("lana", "Legal")
    _bot, token = agent_services.agent_create(
        actor=SystemActor("tests"),
        name="legal-bot",
        owner=lana,
        can_edit_pages=True,
        pages=[section],
    )
    with django_capture_on_commit_callbacks(execute=True):
        made = rpc_tool(
            client,
            token,
            "create_page",
            title="Hushpenguin clause",
            markdown="Never sign on Fridays.\n",
            parentId=section.public_id,
            changeSummary="A secret clause",
        )
    assert not made.get("isError"), made
    paths = [posted["path"] for posted in hook.received]
    assert paths == ["/hooks/legal"], hook.texts()
    assert "legal-bot (agent) proposes a change to Hushpenguin clause" in hook.texts()[0]
