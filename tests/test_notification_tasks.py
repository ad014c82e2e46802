"""One task sends a row of any channel (reviews.delivery.deliver); the tasks that sent one row
before sit with their channel (reviews.outbox, reviews.webhooks, people.mail) and keep the
Celery names they had in the tasks modules, so a row queued before a deploy still runs; the one
sweep reaches every channel."""

from __future__ import annotations

from typing import Any

import pytest

from people import mail as people_mail
from reviews import delivery, outbox, tasks, webhooks


def test_it_keeps_the_names_queued_tasks_were_sent_under() -> None:
    assert {
        outbox.deliver_notification.name,
        outbox.send_review_requests_task.name,
        webhooks.deliver_webhook_post.name,
        webhooks.send_webhook_posts.name,
        people_mail.send_invitation.name,
        tasks.retry_pending_notifications.name,
    } == {
        "reviews.tasks.deliver_notification",
        "reviews.tasks.send_review_requests",
        "reviews.tasks.deliver_webhook_post",
        "reviews.tasks.send_webhook_posts",
        "people.tasks.send_invitation",
        "reviews.tasks.retry_pending_notifications",
    }


def test_the_one_task_has_a_name_of_its_own() -> None:
    assert delivery.deliver.name == "reviews.tasks.deliver"


@pytest.mark.django_db
def test_the_one_sweep_reaches_the_emails_then_the_chat_posts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One sweep over the one table (issue 50), a channel after the other, each handed to the
    one task; it used to be each channel's own sweep, `outbox.retry_pending` then
    `webhooks.retry_pending`, which now sweep their channel only."""
    reached: list[str] = []

    def reach(task: Any, ids: list[int], *, what: str) -> None:
        assert task is delivery.deliver
        reached.append(what)

    monkeypatch.setattr(delivery, "hand_over", reach)
    assert tasks.retry_pending_notifications() == 0
    assert reached == ["notification(s)", "chat post(s)"]
    reached.clear()
    assert outbox.retry_pending() == 0 and webhooks.retry_pending() == 0
    assert reached == ["notification(s)", "chat post(s)"]
