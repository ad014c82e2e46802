"""The notification sweeps the beat runs: each calls one function. The one task that sends a
row of any channel is reviews.delivery.deliver (the old names of the tasks that sent one email
or one chat post sit with their channel, in reviews.outbox and reviews.webhooks)."""

from celery import shared_task

from reviews import asking, delivery, outbox
from reviews.delivery import SWEEP_BATCH


@shared_task
def retry_pending_notifications(limit: int = SWEEP_BATCH) -> int:
    """The emails and the chat posts still owed (every minute; in process, after a commit
    that owes either)."""
    return delivery.sweep(limit=limit)


@shared_task
def send_review_digests() -> int:
    return outbox.send_digests()


@shared_task
def remind_overdue_reviews() -> dict[str, int]:
    return asking.reviews_remind()
