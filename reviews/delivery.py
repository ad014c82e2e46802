"""Sending what the outboxes owe (emails in reviews.outbox, chat posts in reviews.webhooks), at
least once: a row is claimed for a lease, tried, then marked sent, or given back with its
error until MAX_ATTEMPTS, then failed; the sweep takes back leases that ran out.

The rows are `OutboxRow`s; each function takes the rows it works on as a queryset, so that
both outboxes share one claim, one lease and one count of attempts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from smtplib import SMTPException
from typing import Any

from celery import Task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import app as celery_app
from reviews.models import Notification, NotificationStatus, WebhookPost

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


def gathered_for(owed: Rows, now: datetime, window: timedelta) -> tuple[str, timedelta] | None:
    """Whether the pending ones of `owed` (what one reviewer or one chat is owed) wait, and
    for how long: after a failed send, until the pause is over, however many rows arrive
    meanwhile (each would otherwise spend an attempt of every waiting row); within `window`
    of the last one sent, until it closes, to go out together. None: send them now."""
    failed_at = (
        owed.filter(status=NotificationStatus.PENDING)
        .exclude(last_error="")
        .order_by("-last_attempt_at")
        .values_list("last_attempt_at", flat=True)
        .first()
    )
    if failed_at is not None and now - failed_at < retry_pause():
        return "waiting to retry", failed_at + retry_pause() - now
    last = (
        owed.filter(status__in=[NotificationStatus.SENT, NotificationStatus.SENDING])
        .order_by("-last_attempt_at")
        .values_list("last_attempt_at", flat=True)
        .first()
    )
    if window and last is not None and now - last < window:
        return "gathered", last + window - now
    return None


def follow_up_later(task: Task, owner_id: int, delay: timedelta, *, what: str) -> None:
    """Queue `task(owner_id)` (sending what was gathered for one reviewer or one chat) to run
    after `delay`, once per window; the sweep sends it if the broker loses it."""
    if in_process():
        # No broker, no delayed tasks: the in-process sweep after a later commit sends it.
        return
    seconds = max(1, int(delay.total_seconds()) + 1)
    if not cache.add(f"quire:{task.name}:{owner_id}", 1, timeout=seconds):
        return
    try:
        task.apply_async(args=[owner_id], countdown=seconds)
    except (BrokerError, OSError) as exc:
        logger.warning("Could not queue a %s follow-up (%s); the sweep will send it.", what, exc)


def send_on_commit(send: Callable[[list[int]], None], ids: list[int]) -> None:
    """Hand `ids` to `send` once the change commits."""
    transaction.on_commit(partial(_send_and_sweep, send, ids))


def _send_and_sweep(send: Callable[[list[int]], None], ids: list[int]) -> None:
    send(ids)
    if in_process():
        # Without a broker there is no beat either: any commit that owes an email or a chat
        # post retries what both outboxes still owe, so neither waits for one of its own kind.
        sweep(limit=EAGER_SWEEP_BATCH)


# Each channel's sweep (reviews.outbox's emails, reviews.webhooks' chat posts), in the order
# they run: each channel names its own here when it is imported, so the one sweep (the beat's
# minute task, and the in-process one after a commit) reaches every channel without this
# module importing those that import it.
_SWEEPS: dict[int, Callable[..., int]] = {}


def channel_sweep(order: int) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Make the decorated `retry_pending(limit=...)` part of `sweep`, `order`-th."""

    def register(retry_pending: Callable[..., int]) -> Callable[..., int]:
        _SWEEPS[order] = retry_pending
        return retry_pending

    return register


def channel_sweeps() -> list[Callable[..., int]]:
    """Each channel's sweep, in the order `sweep` runs them."""
    return [_SWEEPS[order] for order in sorted(_SWEEPS)]


def sweep(limit: int = SWEEP_BATCH) -> int:
    """Send again what every channel still owes, up to `limit` rows each; how many."""
    return sum(retry_pending(limit=limit) for retry_pending in channel_sweeps())


def in_process() -> bool:
    """No broker (no REDIS_URL): tasks run in process after commit, and there is no beat."""
    return bool(celery_app.conf.task_always_eager)


def send_retrying(task: Task, send: Callable[[int], str], row_id: int) -> str:
    """A sending task's body: `send(row_id)`, retried with backoff (SENDING) on an SMTP or
    network failure."""
    try:
        return send(row_id)
    except (SMTPException, OSError):
        # In process (no broker) a retry would run at once and keep the request waiting:
        # the row stays pending and the sweep sends it later.
        if task.request.is_eager:
            return NotificationStatus.PENDING
        raise


# Sending tasks retry with backoff on an SMTP or network failure.
SENDING: dict[str, Any] = {
    "bind": True,
    "autoretry_for": (SMTPException, OSError),
    "retry_backoff": True,
    "retry_backoff_max": 600,
    "retry_jitter": True,
    "max_retries": 10,
    "acks_late": True,
}


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


# What an operator settles by hand (`manage.py notifications_pending`), e.g. after restoring
# a backup taken while emails and chat posts were owed: the restored rows would go again.
OWED = (NotificationStatus.PENDING, NotificationStatus.SENDING)
MARKED_SENT = "marked sent by an operator (manage.py notifications_pending)"
DROPPED = "dropped by an operator (manage.py notifications_pending)"


Outbox = type[Notification] | type[WebhookPost]


def owed(outbox: Outbox, *, before: datetime | None = None) -> Rows:
    """The rows of `outbox` (Notification or WebhookPost) still to be sent (pending, or
    claimed by a worker), made before `before`."""
    rows: Rows = outbox.objects.filter(status__in=OWED)
    return rows if before is None else rows.filter(created_at__lt=before)


@transaction.atomic
def settle_owed(outbox: Outbox, *, sent: bool, before: datetime | None = None) -> int:
    """Mark what `outbox` still owes as sent (nobody is sent it) or skipped (dropped); how
    many."""
    status, note = (
        (NotificationStatus.SENT, MARKED_SENT) if sent else (NotificationStatus.SKIPPED, DROPPED)
    )
    return (
        owed(outbox, before=before)
        .select_for_update()
        .update(status=status, sent_at=timezone.now(), last_error=note)
    )
