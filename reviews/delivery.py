"""Sending what the outboxes owe (emails in reviews.outbox, chat posts in reviews.webhooks), at
least once: a row is claimed for a lease, tried, then marked sent, or given back with its
error until MAX_ATTEMPTS, then failed; the sweep takes back leases that ran out.

The rows are `OutboxRow`s; each function takes the rows it works on as a queryset, so that
both outboxes share one claim, one lease and one count of attempts.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from celery import Task
from django.conf import settings
from django.db.models import F, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from reviews.models import NotificationStatus

logger = logging.getLogger(__name__)

# After this many failed attempts a row is marked failed (visible in the admin, which can
# put it back in the queue) instead of being retried forever.
MAX_ATTEMPTS = 25
# A row claimed by a worker that died mid-send is taken back after this long: longer than one
# send can take (each SMTP step times out after EMAIL_TIMEOUT, 10 s; a chat post after 10 s),
# short enough that a killed worker delays its row by a few minutes at most (the sweep runs
# every minute).
SENDING_LEASE = timedelta(minutes=2)
# The sweep leaves fresh rows to the task queued on commit, and spaces out its own retries
# (QUIRE_OUTBOX_SWEEP_GRACE_SECONDS, one minute by default).
SWEEP_BATCH = 100
EAGER_SWEEP_BATCH = 10

Rows = QuerySet[Any]


def retry_pause() -> timedelta:
    """How long a failed send waits before the next try: the sweep's spacing."""
    return timedelta(seconds=settings.QUIRE_OUTBOX_SWEEP_GRACE_SECONDS)


def claim(rows: Rows, now: datetime) -> int:
    """Take the pending ones of `rows` for this worker (one attempt more); returns how many.

    A conditional update, not a lock held while talking to the other server, so a slow mail
    or chat server never blocks writers (SQLite has one writer)."""
    return rows.filter(status=NotificationStatus.PENDING).update(
        status=NotificationStatus.SENDING, attempts=F("attempts") + 1, last_attempt_at=now
    )


def finish(rows: Rows, status: str, *, error: str = "") -> None:
    rows.update(status=status, sent_at=timezone.now(), last_error=error)


def failed_attempt(rows: Rows, exc: BaseException) -> str:
    """Give `rows` back to the queue with the error, or mark them failed once they used up
    their attempts. Returns the error as recorded."""
    error = describe(exc)
    rows.filter(attempts__lt=MAX_ATTEMPTS).update(
        status=NotificationStatus.PENDING, last_error=error
    )
    rows.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=NotificationStatus.FAILED, last_error=error
    )
    return error


def describe(exc: BaseException) -> str:
    return f"{exc.__class__.__name__}: {exc}"[:2000]


def take_back_leases(rows: Rows, now: datetime) -> None:
    """Rows a worker claimed and never finished (it died mid-send) are owed again."""
    rows.filter(status=NotificationStatus.SENDING, last_attempt_at__lt=now - SENDING_LEASE).update(
        status=NotificationStatus.PENDING
    )


def put_back(rows: Rows) -> None:
    """The admin's "send again": failed or refused rows are owed again, with fresh attempts."""
    rows.filter(status__in=[NotificationStatus.FAILED, NotificationStatus.REFUSED]).update(
        status=NotificationStatus.PENDING, attempts=0, last_error=""
    )


def in_process() -> bool:
    """No broker (no REDIS_URL): tasks run in process after commit, and there is no beat."""
    from config.celery import app

    return bool(app.conf.task_always_eager)


def hand_over(task: Task, ids: list[int], *, what: str, at: datetime | None = None) -> None:
    """Queue `task` for each row (to run `at` a time, else now); if the broker is down the
    rows stay pending for the sweep.

    In process, sending stops at the first failure so that a request never waits, once per
    row, on a server that is down; rows not due yet are left to a later sweep.
    """
    if at is not None and in_process():
        return
    for row_id in ids:
        try:
            result = task.apply_async(args=[row_id], eta=at)
        except (BrokerError, OSError) as exc:
            logger.warning(
                "The task broker is unavailable (%s); %d %s stay in the outbox and will be "
                "sent by the retry task.",
                exc,
                len(ids),
                what,
            )
            return
        if in_process() and result.result == NotificationStatus.PENDING:
            return
