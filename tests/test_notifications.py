"""Review emails: who gets them, what they say, and that outages lose none (real SMTP)."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Agent
from reviews import delivery, mail, outbox, tasks
from reviews.actions.decide import version_approve, version_reject
from reviews.actions.propose import version_propose
from reviews.models import (
    Notification,
    NotificationDelivery,
    NotificationPreference,
    NotificationStatus,
    ReviewerSettings,
)
from tests.conftest import live
from tests.fixtures_mail import SMTPServer, celery_settings
from tests.waits import PATIENCE
from wiki.models import Page, Version, VersionKind
from wiki.roles import REVIEWERS

HANDBOOK_BODY = "# Refunds\n\nRefunds take five days.\nAsk for the order number.\n"


@pytest.fixture
def agent(make_user: Callable[..., User]) -> Agent:
    owner = make_user("owen")
    return Agent.objects.create(name="support-bot", owner=owner, can_edit_pages=True)


@pytest.fixture
def page(make_page: Callable[..., Page]) -> Page:
    return make_page("Refund policy", HANDBOOK_BODY)


def propose(agent: Agent, page: Page, body: str, summary: str = "Say seven days.") -> Version:
    return version_propose(actor=agent, page=page, body=body, change_summary=summary)


def recipients(messages: list[Any]) -> list[str]:
    return sorted(str(message["To"]) for message in messages)


def prefer(user: User, preference: str) -> None:
    ReviewerSettings.objects.update_or_create(user=user, defaults={"notifications": preference})


def assert_all_sent() -> None:
    """Nothing more is owed, so nothing more will come: with tasks run in process every send
    is over (the message in the inbox) before the commit callbacks return."""
    owed = Notification.objects.exclude(status=NotificationStatus.SENT)
    assert not owed.exists(), list(owed.values_list("recipient__username", "status"))


def wait_until(
    condition: Callable[[], bool], explain: Callable[[], str] = str, timeout: float = PATIENCE
) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, explain()
        time.sleep(0.2)


# --- review requested ------------------------------------------------------------------


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_each_immediate_reviewer_about_an_agent_proposal(
    smtp_server: SMTPServer,
    reviewer: User,
    admin_user: User,
    editor: User,
    agent: Agent,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    new_body = HANDBOOK_BODY.replace("five days", "seven days") + "Keep the receipt.\n"
    with django_capture_on_commit_callbacks(execute=True):
        version = propose(agent, page, new_body)

    messages = smtp_server.wait_for(2)
    assert recipients(messages) == ["ada@example.com", "rita@example.com"]
    message = messages[0]
    assert message["Subject"] == "[Quire] Review requested: Refund policy (v2)"
    text = message.get_content()
    assert "support-bot (agent)" in text
    assert "Say seven days." in text
    assert "+2/\u22121 lines" in text
    assert f"http://127.0.0.1:8000/reviews/pages/{page.public_id}/v2/" in text
    assert "-Refunds take five days." in text
    assert set(version.notifications.values_list("status", flat=True)) == {"sent"}


@pytest.mark.usefixtures("eager_tasks")
def test_it_follows_each_reviewers_preference(
    smtp_server: SMTPServer,
    reviewer: User,
    second_reviewer: User,
    make_user: Callable[..., User],
    agent: Agent,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    quiet = make_user("quinn", REVIEWERS)
    prefer(second_reviewer, NotificationPreference.DAILY)
    prefer(quiet, NotificationPreference.OFF)
    with django_capture_on_commit_callbacks(execute=True):
        version = propose(agent, page, "New text.\n")

    assert recipients(smtp_server.wait_for(1)) == ["rita@example.com"]
    owed = list(version.notifications.all())
    assert all(row.recipient for row in owed)
    rows = {row.recipient.username: row for row in owed if row.recipient}
    assert set(rows) == {"rita", "rob"}
    assert rows["rob"].delivery == NotificationDelivery.DIGEST
    assert rows["rob"].status == NotificationStatus.PENDING


@pytest.mark.usefixtures("eager_tasks")
def test_it_does_not_email_a_reviewer_about_their_own_proposal(
    smtp_server: SMTPServer,
    reviewer: User,
    second_reviewer: User,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        version_propose(actor=reviewer, page=page, body="Mine.\n", change_summary="x")

    assert recipients(smtp_server.wait_for(1)) == ["rob@example.com"]
    assert_all_sent()
    assert len(smtp_server.messages) == 1


def test_it_costs_the_same_queries_for_3_and_for_30_reviewers(
    agent: Agent, make_page: Callable[..., Page]
) -> None:
    def queries_to_propose(page: Page) -> int:
        fresh = Agent.objects.get(pk=agent.pk)  # as a request loads it: its owner not kept
        with CaptureQueriesContext(connection) as captured:
            propose(fresh, page, "Changed.\n")
        return len(captured)

    def add_reviewers(numbers: range) -> None:
        # Without passwords: hashing 30 of them would only slow the test down.
        group = Group.objects.get_or_create(name=REVIEWERS)[0]
        for n in numbers:
            User.objects.create(username=f"r{n}", email=f"r{n}@example.com").groups.add(group)

    first, second = make_page("First"), make_page("Second")
    add_reviewers(range(3))
    few = queries_to_propose(first)
    add_reviewers(range(3, 30))
    many = queries_to_propose(second)

    assert few == many
    assert Notification.objects.filter(version__page=second).count() == 30


# --- daily digest ---------------------------------------------------------------------


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_a_daily_reviewer_one_digest(
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    make_page: Callable[..., Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    prefer(reviewer, NotificationPreference.DAILY)
    first, second = make_page("Refunds"), make_page("Returns")
    with django_capture_on_commit_callbacks(execute=True):
        propose(agent, first, "One.\n", "First change.")
        propose(agent, second, "Two.\n", "Second change.")
    assert smtp_server.messages == []

    call_command("send_review_digest")
    call_command("send_review_digest")

    [digest] = smtp_server.wait_for(1)
    assert digest["Subject"] == "[Quire] 2 proposals waiting for review"
    text = digest.get_content()
    assert "First change." in text and "Second change." in text
    assert f"/reviews/pages/{first.public_id}/v2/" in text
    assert_all_sent()
    assert len(smtp_server.messages) == 1


# --- decisions -------------------------------------------------------------------------


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_the_agents_owner_the_reason_for_a_rejection(
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    prefer(reviewer, NotificationPreference.OFF)
    version = propose(agent, page, "Refunds take a year.\n")
    with django_capture_on_commit_callbacks(execute=True):
        version_reject(actor=reviewer, version=version, comment="A year is wrong.")

    [message] = smtp_server.wait_for(1)
    assert message["To"] == "owen@example.com"
    assert message["Subject"] == "[Quire] v2 of Refund policy was rejected"
    text = message.get_content()
    assert "rita rejected v2" in text
    assert "A year is wrong." in text


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_a_human_author_when_their_proposal_is_approved(
    smtp_server: SMTPServer,
    reviewer: User,
    reader: User,
    page: Page,
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    # No undo window: the email goes at once (test_approval_undo.py has it wait out one).
    settings.QUIRE_APPROVAL_UNDO_SECONDS = 0
    prefer(reviewer, NotificationPreference.OFF)
    version = version_propose(
        actor=reader, page=page, kind=VersionKind.APPEND, body="Ask twice.\n", change_summary="Tip"
    )
    with django_capture_on_commit_callbacks(execute=True):
        version_approve(actor=reviewer, version=version, comment="Good tip.")

    [message] = smtp_server.wait_for(1)
    assert message["To"] == "reed@example.com"
    assert "was approved" in message["Subject"]
    text = message.get_content()
    assert "Good tip." in text and "+2/\u22120 lines" in text
    assert live(page).number == 2


# --- outages ---------------------------------------------------------------------------


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_what_smtp_refused_once_smtp_is_back(
    smtp_down: SMTPServer,
    reviewer: User,
    agent: Agent,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        version = propose(agent, page, "Changed while mail is down.\n")
    [row] = version.notifications.all()
    assert (row.status, row.attempts) == (NotificationStatus.PENDING, 1)
    assert "Connection" in row.last_error or "Errno" in row.last_error

    smtp_down.start()
    # Time passes: the retry task leaves fresh rows alone for a minute.
    Notification.objects.update(last_attempt_at=timezone.now() - timedelta(minutes=2))
    tasks.retry_pending_notifications.delay()

    [message] = smtp_down.wait_for(1)
    assert message["To"] == "rita@example.com"
    row.refresh_from_db()
    assert (row.status, row.attempts) == (NotificationStatus.SENT, 2)
    tasks.retry_pending_notifications.delay()
    assert len(smtp_down.messages) == 1


@pytest.mark.usefixtures("eager_tasks")
def test_a_busy_smtp_outage_does_not_use_up_a_waiting_emails_attempts(
    smtp_down: SMTPServer,
    reviewer: User,
    agent: Agent,
    make_page: Callable[..., Page],
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Each new proposal used to retry every email still owed to the reviewer at once, so a
    few minutes of SMTP outage on a busy wiki marked them failed (25 attempts) for good."""
    pages = [make_page(f"Policy {n}", "Old.\n") for n in range(delivery.MAX_ATTEMPTS + 5)]
    with django_capture_on_commit_callbacks(execute=True):
        for page in pages:
            propose(agent, page, "New.\n")

    rows = Notification.objects.filter(recipient=reviewer)
    assert set(rows.values_list("status", flat=True)) == {NotificationStatus.PENDING}
    assert max(rows.values_list("attempts", flat=True)) == 1

    smtp_down.start()
    Notification.objects.update(last_attempt_at=timezone.now() - timedelta(minutes=2))
    outbox.retry_pending()

    [message] = smtp_down.wait_for(1)
    assert message["Subject"] == f"[Quire] {len(pages)} proposals waiting for review"
    assert set(rows.values_list("status", flat=True)) == {NotificationStatus.SENT}


@pytest.mark.usefixtures("broker_down")
def test_it_keeps_the_notification_when_the_broker_is_down(
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    page: Page,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        version = propose(agent, page, "Changed while Redis is down.\n")

    [row] = version.notifications.all()
    assert (row.status, row.attempts) == (NotificationStatus.PENDING, 0)
    assert smtp_server.messages == []

    Notification.objects.update(created_at=timezone.now() - timedelta(minutes=2))
    with celery_settings(task_always_eager=True):  # the broker is back
        assert outbox.retry_pending() == 1
    assert recipients(smtp_server.wait_for(1)) == ["rita@example.com"]


def test_it_counts_lines_added_and_removed_against_the_live_version(
    agent: Agent, page: Page
) -> None:
    version = propose(agent, page, "# Refunds\n\nRefunds take seven days.\n")

    summary = mail.diff_summary(version)

    assert (summary.added, summary.removed) == (1, 2)
    assert str(summary) == "+1/\u22122 lines"


# --- through a real broker and worker --------------------------------------------------


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_it_delivers_through_redis_and_a_celery_worker(
    celery_worker: Callable[..., Any],
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    page: Page,
) -> None:
    celery_worker(smtp_port=smtp_server.port)

    version = propose(agent, page, "Sent by the worker.\n")

    [message] = smtp_server.wait_for(1)
    assert message["To"] == "rita@example.com"
    assert f"/reviews/pages/{page.public_id}/v2/" in message.get_content()
    [row] = version.notifications.all()
    wait_until(lambda: Notification.objects.get(pk=row.pk).status == NotificationStatus.SENT)


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_it_retries_in_the_worker_until_smtp_is_back(
    celery_worker: Callable[..., Any],
    smtp_down: SMTPServer,
    reviewer: User,
    agent: Agent,
    page: Page,
) -> None:
    # After a failed send the reviewer's next try waits for the sweep's pause: 2 s here.
    worker = celery_worker(
        smtp_port=smtp_down.port, extra_env={"QUIRE_OUTBOX_SWEEP_GRACE_SECONDS": "2"}
    )

    version = propose(agent, page, "Sent after an outage.\n")
    [row] = version.notifications.all()
    # The first try has failed once its error is written (attempts count a claim, before the
    # send: starting SMTP then let the first try succeed and nothing was retried).
    wait_until(lambda: Notification.objects.get(pk=row.pk).last_error != "", worker.output)
    assert smtp_down.messages == []
    smtp_down.start()

    [message] = smtp_down.wait_for(1)
    assert message["To"] == "rita@example.com"
    wait_until(lambda: Notification.objects.get(pk=row.pk).status == NotificationStatus.SENT)
    assert len(smtp_down.messages) == 1
    row.refresh_from_db()
    assert row.attempts >= 2
    assert "Retry in" in worker.output()


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_a_failed_notification_again_from_the_admin(
    smtp_server: SMTPServer,
    reviewer: User,
    admin_user: User,
    agent: Agent,
    page: Page,
    client: Any,
) -> None:
    prefer(admin_user, NotificationPreference.OFF)
    version = propose(agent, page, "Failed long ago.\n")
    [row] = version.notifications.all()
    Notification.objects.filter(pk=row.pk).update(
        status=NotificationStatus.FAILED, attempts=delivery.MAX_ATTEMPTS
    )
    client.force_login(admin_user)

    client.post(
        "/admin/reviews/notification/",
        {"action": "send_again", "_selected_action": [row.pk]},
    )

    [message] = smtp_server.wait_for(1)
    assert message["To"] == "rita@example.com"
    row.refresh_from_db()
    assert (row.status, row.attempts) == (NotificationStatus.SENT, 1)


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_one_summary_per_reviewer_for_an_import_waiting_for_review(
    smtp_server: SMTPServer,
    reviewer: User,
    admin_user: User,
    tmp_path: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    for name in ("refunds", "returns", "shipping"):
        (tmp_path / f"{name}.md").write_text(f"# {name.title()}\n\nAbout {name}.\n")

    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_markdown", str(tmp_path), "--author", admin_user.username)

    [summary] = smtp_server.wait_for(1)
    assert str(summary["To"]) == "rita@example.com"
    assert summary["Subject"] == "[Quire] 3 proposals waiting for review"
    text = summary.get_content()
    assert all(title in text for title in ("Refunds", "Returns", "Shipping"))
    assert_all_sent()
    assert len(smtp_server.messages) == 1
