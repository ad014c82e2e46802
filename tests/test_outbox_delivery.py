"""The outbox is at-least-once, and says so: a row a dead worker claimed is taken back after
a short lease, every email of a notification carries the same Message-ID (so a repeat is
recognisable), and a digest that cannot be built gives its rows back instead of keeping them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents.models import Agent
from reviews import outbox, services
from reviews.models import (
    Notification,
    NotificationDelivery,
    NotificationKind,
    NotificationStatus,
    ReviewerSettings,
)
from tests.fixtures_mail import SMTPServer
from wiki.models import Page, Version

pytestmark = pytest.mark.django_db(transaction=True)


def decision_row(version: Version, recipient: User, **fields: Any) -> Notification:
    return Notification.objects.create(
        kind=NotificationKind.DECISION,
        delivery=NotificationDelivery.IMMEDIATE,
        version=version,
        recipient=recipient,
        **fields,
    )


def claimed(ago: timedelta) -> dict[str, Any]:
    """A row a worker claimed `ago` and never finished: it was killed mid-send."""
    return {
        "status": NotificationStatus.SENDING,
        "attempts": 1,
        "last_attempt_at": timezone.now() - ago,
    }


@pytest.mark.usefixtures("eager_tasks")
def test_it_takes_back_a_row_a_dead_worker_claimed_after_a_short_lease(
    smtp_server: SMTPServer, editor: User, make_page: Callable[..., Page]
) -> None:
    version = make_page("Refunds").live_version
    assert version is not None
    just_claimed = decision_row(version, editor, **claimed(timedelta(seconds=30)))
    abandoned = decision_row(version, editor, **claimed(timedelta(minutes=3)))

    outbox.retry_pending()

    [message] = smtp_server.wait_for(1)
    assert str(message["X-Quire-Notifications"]) == str(abandoned.pk)
    abandoned.refresh_from_db()
    just_claimed.refresh_from_db()
    assert (abandoned.status, abandoned.attempts) == (NotificationStatus.SENT, 2)
    # Still within its lease: its worker may be sending it right now.
    assert just_claimed.status == NotificationStatus.SENDING


@pytest.mark.usefixtures("eager_tasks")
def test_it_sends_a_repeat_of_a_notification_with_the_same_message_id(
    smtp_server: SMTPServer, editor: User, make_page: Callable[..., Page]
) -> None:
    version = make_page("Refunds").live_version
    assert version is not None
    row = decision_row(version, editor)
    outbox.deliver(row.pk)
    # A worker that sent it and died before it could mark the row sent: the lease ends and
    # the row goes out again.
    Notification.objects.filter(pk=row.pk).update(**claimed(timedelta(minutes=3)))
    outbox.retry_pending()

    first, repeat = smtp_server.wait_for(2)
    assert first["Message-ID"] == repeat["Message-ID"]
    assert str(first["Message-ID"]).startswith(f"<quire-notification-{row.pk}.")
    other = decision_row(version, editor)
    outbox.deliver(other.pk)
    assert smtp_server.wait_for(3)[2]["Message-ID"] != first["Message-ID"]


def test_it_gives_back_the_rows_of_a_digest_that_cannot_be_built(
    smtp_server: SMTPServer,
    reviewer: User,
    second_reviewer: User,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
) -> None:
    for user in (reviewer, second_reviewer):
        ReviewerSettings.objects.create(user=user, notifications="daily")
    agent = Agent.objects.create(name="support-bot", owner=make_user("owen"), can_edit_pages=True)
    version = services.version_propose(
        actor=agent, page=make_page("Policy", "Old.\n"), body="New.\n", change_summary="Update."
    )
    # A header with a newline cannot be built (Django refuses it).
    User.objects.filter(pk=reviewer.pk).update(email="rita@example.com\nBcc: all@example.com")

    assert outbox.send_digests() == 1

    broken = version.notifications.get(recipient=reviewer)
    fine = version.notifications.get(recipient=second_reviewer)
    assert broken.status == NotificationStatus.FAILED
    assert broken.last_error.startswith("could not build the email: ")
    assert fine.status == NotificationStatus.SENT
    [message] = smtp_server.wait_for(1)
    assert str(message["To"]) == "rob@example.com"
