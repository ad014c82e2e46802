"""Review emails at team scale: the first proposal after a quiet spell is emailed at once,
what follows within the gathering window goes out as one follow-up per reviewer, and a
message that cannot be built is marked failed with the reason and can be sent again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db.models import F
from django.test import Client

from agents.models import Agent
from reviews import outbox
from reviews.actions.create import NewPage, pages_create
from reviews.actions.propose import version_propose
from reviews.models import Notification, NotificationStatus
from tests.fixtures_mail import SMTPServer
from wiki.models import Page, Version

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent(make_user: Callable[..., User]) -> Agent:
    return Agent.objects.create(name="support-bot", owner=make_user("owen"), can_edit_pages=True)


def propose(agent: Agent, page: Page, body: str) -> Version:
    return version_propose(actor=agent, page=page, body=body, change_summary="Update.")


def ids_in(message: Any) -> set[int]:
    return {int(part) for part in str(message["X-Quire-Notifications"]).split(",")}


def close_the_window() -> None:
    """What the passing of the gathering window does to the outbox's clock."""
    gone = timedelta(seconds=outbox.gather_window().total_seconds() + 60)
    Notification.objects.update(
        created_at=F("created_at") - gone, last_attempt_at=F("last_attempt_at") - gone
    )


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_the_first_after_a_quiet_spell_and_gathers_the_rest_into_one_follow_up(
    smtp_server: SMTPServer,
    reviewer: User,
    second_reviewer: User,
    agent: Agent,
    make_page: Callable[..., Page],
) -> None:
    pages = [make_page(f"Policy {n}", "Old.\n") for n in range(4)]

    first = propose(agent, pages[0], "New.\n")
    at_once = smtp_server.wait_for(2)
    rest = [propose(agent, page, "Newer.\n") for page in pages[1:]]

    assert sorted(str(m["To"]) for m in at_once) == ["rita@example.com", "rob@example.com"]
    assert all(m["Subject"].startswith("[Quire] Review requested: Policy 0") for m in at_once)
    assert len(smtp_server.messages) == 2  # the next three wait
    waiting = Notification.objects.filter(version__in=rest)
    assert set(waiting.values_list("status", flat=True)) == {NotificationStatus.PENDING}

    close_the_window()
    outbox.retry_pending()

    follow_ups = smtp_server.wait_for(4)[2:]
    assert sorted(str(m["To"]) for m in follow_ups) == ["rita@example.com", "rob@example.com"]
    for message in follow_ups:
        assert message["Subject"] == "[Quire] 3 proposals waiting for review"
        mine = waiting.filter(recipient__email=str(message["To"]))
        assert ids_in(message) == set(mine.values_list("pk", flat=True))
        for page in pages[1:]:
            assert page.title in message.get_content()
    assert set(Notification.objects.values_list("status", flat=True)) == {NotificationStatus.SENT}
    assert first.notifications.count() == 2
    outbox.retry_pending()
    assert len(smtp_server.messages) == 4  # each notification exactly once


@pytest.mark.usefixtures("eager_tasks")
def test_it_emails_one_per_proposal_when_gathering_is_off(
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    make_page: Callable[..., Page],
    settings: Any,
) -> None:
    settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS = 0
    for n in range(3):
        propose(agent, make_page(f"Policy {n}", "Old.\n"), "New.\n")

    assert len(smtp_server.wait_for(3)) == 3


@pytest.mark.usefixtures("eager_tasks")
def test_it_marks_a_message_that_cannot_be_built_failed_and_the_admin_sends_it_again(
    smtp_server: SMTPServer,
    reviewer: User,
    admin_user: User,
    agent: Agent,
    make_page: Callable[..., Page],
    settings: Any,
) -> None:
    settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS = 0
    admin_user.email = ""  # only the reviewer is owed an email here
    admin_user.save()
    User.objects.filter(pk=reviewer.pk).update(email="rita@example.com\nBcc: all@example.com")

    version = propose(agent, make_page("Refunds", "Old.\n"), "New.\n")

    [row] = version.notifications.all()
    assert row.status == NotificationStatus.FAILED
    assert row.last_error.startswith("could not build the email: BadHeaderError")
    assert smtp_server.messages == []
    admin = Client()
    admin.force_login(admin_user)
    listing = admin.get("/admin/reviews/notification/?status__exact=failed")
    assert "could not build the email: BadHeaderError" in listing.content.decode()

    User.objects.filter(pk=reviewer.pk).update(email="rita@example.com")
    admin.post(
        "/admin/reviews/notification/", {"action": "send_again", "_selected_action": [row.pk]}
    )

    [message] = smtp_server.wait_for(1)
    assert message["To"] == "rita@example.com"
    row.refresh_from_db()
    assert row.status == NotificationStatus.SENT


@pytest.mark.celery
def test_it_sends_the_follow_up_from_the_worker_when_the_window_closes(
    celery_worker: Callable[..., Any],
    smtp_server: SMTPServer,
    reviewer: User,
    agent: Agent,
    make_page: Callable[..., Page],
) -> None:
    celery_worker(smtp_port=smtp_server.port, extra_env={"QUIRE_REVIEW_EMAIL_GATHER_SECONDS": "4"})
    pages = [make_page(f"Policy {n}", "Old.\n") for n in range(3)]

    propose(agent, pages[0], "New.\n")
    [first] = smtp_server.wait_for(1)
    propose(agent, pages[1], "New.\n")
    propose(agent, pages[2], "New.\n")

    [_, follow_up] = smtp_server.wait_for(2)
    assert first["Subject"].startswith("[Quire] Review requested: Policy 0")
    assert follow_up["Subject"] == "[Quire] 2 proposals waiting for review"
    assert len(smtp_server.messages) == 2


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_a_follow_up_that_gathers_hundreds_of_proposals(
    smtp_server: SMTPServer,
    reviewer: User,
    editor: User,
    agent: Agent,
) -> None:
    """The header naming the gathered notifications was one line of comma-joined ids; past
    about 200 ids the SMTP server refused it (RFC 5321 line limit) on every try."""
    made = pages_create(
        actor=editor,
        pages=[NewPage(title=f"Policy {n}", body="Old.\n") for n in range(401)],
        publish=True,
    )
    pages = [version.page for version in made]
    propose(agent, pages[0], "New.\n")
    smtp_server.wait_for(1)
    for page in pages[1:]:
        propose(agent, page, "New.\n")
    close_the_window()

    outbox.retry_pending()

    [_, follow_up] = smtp_server.wait_for(2)
    assert follow_up["Subject"] == "[Quire] 400 proposals waiting for review"
    assert len(ids_in(follow_up)) == 400
    assert set(Notification.objects.values_list("status", flat=True)) == {NotificationStatus.SENT}
