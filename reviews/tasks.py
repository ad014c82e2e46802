"""Notification tasks: each fetches ids and calls reviews.outbox, nothing more."""

from collections.abc import Callable
from smtplib import SMTPException

from celery import Task, shared_task

from reviews import asking, outbox, webhooks
from reviews.delivery import SWEEP_BATCH
from reviews.models import NotificationStatus

# Sending tasks retry with backoff on an SMTP or network failure.
SENDING = {
    "bind": True,
    "autoretry_for": (SMTPException, OSError),
    "retry_backoff": True,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 10,
    "acks_late": True,
}


def _send(task: Task, send: Callable[[int], str], row_id: int) -> str:
    try:
        return send(row_id)
    except (SMTPException, OSError):
        # In process (no broker) a retry would run at once and keep the request waiting:
        # the row stays pending and retry_pending_notifications sends it later.
        if task.request.is_eager:
            return NotificationStatus.PENDING
        raise


@shared_task(**SENDING)
def deliver_notification(self: Task, notification_id: int) -> str:
    return _send(self, outbox.deliver, notification_id)


@shared_task(**SENDING)
def send_review_requests(self: Task, recipient_id: int) -> str:
    """The follow-up email gathering a reviewer's review requests (reviews.outbox)."""
    return _send(self, outbox.send_review_requests, recipient_id)


@shared_task(**SENDING)
def deliver_webhook_post(self: Task, post_id: int) -> str:
    """A post owed to a group's chat webhook (reviews.webhooks)."""
    return _send(self, webhooks.deliver, post_id)


@shared_task(**SENDING)
def send_webhook_posts(self: Task, webhook_id: int) -> str:
    """The follow-up post gathering what a chat is owed (reviews.webhooks)."""
    return _send(self, webhooks.send_posts, webhook_id)


@shared_task
def retry_pending_notifications(limit: int = SWEEP_BATCH) -> int:
    """The emails and the chat posts still owed (every minute; in process, after a commit
    that owes either)."""
    return outbox.retry_pending(limit=limit) + webhooks.retry_pending(limit=limit)


@shared_task
def send_review_digests() -> int:
    return outbox.send_digests()


@shared_task
def remind_overdue_reviews() -> dict[str, int]:
    return asking.reviews_remind()
