"""Notification tasks (placeholder until notifications are built)."""

from celery import shared_task


@shared_task
def notify_review_requested(version_id: int) -> None:
    return None


@shared_task
def notify_decision(version_id: int) -> None:
    return None
