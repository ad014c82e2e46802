"""Notification tasks: each fetches ids and calls reviews.outbox, nothing more."""

from smtplib import SMTPException

from celery import Task, shared_task

from reviews import outbox
from reviews.models import NotificationStatus


@shared_task(
    bind=True,
    autoretry_for=(SMTPException, OSError),
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=10,
    acks_late=True,
)
def deliver_notification(self: Task, notification_id: int) -> str:
    try:
        return outbox.deliver(notification_id)
    except (SMTPException, OSError):
        # In process (no broker) a retry would run at once and keep the request waiting:
        # the row stays pending and retry_pending_notifications sends it later.
        if self.request.is_eager:
            return NotificationStatus.PENDING
        raise


@shared_task(
    bind=True,
    autoretry_for=(SMTPException, OSError),
    retry_backoff=True,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=10,
    acks_late=True,
)
def send_review_requests(self: Task, recipient_id: int) -> str:
    """The follow-up email gathering a reviewer's review requests (reviews.outbox)."""
    try:
        return outbox.send_review_requests(recipient_id)
    except (SMTPException, OSError):
        if self.request.is_eager:
            return NotificationStatus.PENDING
        raise


@shared_task
def retry_pending_notifications() -> int:
    return outbox.retry_pending()


@shared_task
def send_review_digests() -> int:
    return outbox.send_digests()
