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
from reviews import outbox
from reviews.actions.propose import version_propose
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
    version = version_propose(
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


def message_ids_per_row(messages: list[Any]) -> dict[int, set[str]]:
    """Each notification row and the Message-IDs of the emails that stood for it."""
    found: dict[int, set[str]] = {}
    for message in messages:
        for pk in str(message["X-Quire-Notifications"]).split(","):
            found.setdefault(int(pk), set()).add(str(message["Message-ID"]))
    return found


def test_a_digest_sent_again_after_a_fault_keeps_its_message_id_when_newer_rows_wait(
    smtp_server: SMTPServer,
    reviewer: User,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
) -> None:
    """A digest went out and its worker died before marking it sent; by the time the lease
    ended, a newer proposal waited too. The repeat came in one email with the newer one,
    under a new Message-ID: mailed twice with different ids."""
    ReviewerSettings.objects.create(user=reviewer, notifications="daily")
    agent = Agent.objects.create(name="support-bot", owner=make_user("owen"), can_edit_pages=True)
    first = version_propose(
        actor=agent, page=make_page("Policy", "Old.\n"), body="New.\n", change_summary="One."
    )
    assert outbox.send_digests() == 1
    row = first.notifications.get(recipient=reviewer)
    Notification.objects.filter(pk=row.pk).update(**claimed(timedelta(minutes=3)))
    outbox.retry_pending()  # the lease is over: the row is owed again
    version_propose(
        actor=agent, page=make_page("Hours", "Nine.\n"), body="Ten.\n", change_summary="Two."
    )

    outbox.send_digests()

    messages = smtp_server.wait_for(3)
    ids = message_ids_per_row(messages)
    assert len(ids) == 2
    assert all(len(kept) == 1 for kept in ids.values()), ids
    assert ids[row.pk] != ids[max(ids)]
    row.refresh_from_db()
    assert {row.message_id} == ids[row.pk]


@pytest.mark.usefixtures("eager_tasks")
def test_a_review_request_sent_again_after_a_fault_keeps_its_message_id(
    smtp_server: SMTPServer,
    reviewer: User,
    make_page: Callable[..., Page],
    make_user: Callable[..., User],
    settings: Any,
) -> None:
    """The first request went out at once and its worker died before marking it sent; a
    second one, owed within the gathering window, waited. When the lease ended, both went
    out in one email under a new Message-ID: the first was mailed twice with different ids."""
    settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS = 600
    agent = Agent.objects.create(name="support-bot", owner=make_user("owen"), can_edit_pages=True)
    first = version_propose(
        actor=agent, page=make_page("Policy", "Old.\n"), body="New.\n", change_summary="One."
    )
    smtp_server.wait_for(1)
    row = first.notifications.get(recipient=reviewer)
    Notification.objects.filter(pk=row.pk).update(**claimed(timedelta(minutes=3)))
    second = version_propose(
        actor=agent, page=make_page("Hours", "Nine.\n"), body="Ten.\n", change_summary="Two."
    )

    outbox.retry_pending()

    assert second.notifications.get(recipient=reviewer).status == NotificationStatus.SENT

    ids = message_ids_per_row(smtp_server.wait_for(3))
    assert len(ids) == 2
    assert all(len(kept) == 1 for kept in ids.values()), ids
