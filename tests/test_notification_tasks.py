"""The tasks that send one row sit with their channel (reviews.outbox, reviews.webhooks,
people.mail) but keep the Celery names they had in the tasks modules, so a row queued before a
deploy still runs; the one sweep reaches every channel."""

from __future__ import annotations

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


def test_the_one_sweep_reaches_the_emails_then_the_chat_posts() -> None:
    assert delivery.channel_sweeps() == [
        outbox.retry_pending,
        webhooks.retry_pending,
    ]
