"""Sending what is owed outside (emails in reviews.outbox, chat posts in reviews.webhooks), at
least once: a row is claimed for a lease, tried, then marked sent, or given back with its
error until MAX_ATTEMPTS, then failed; the sweep takes back leases that ran out.

Every channel's rows are one table, `Delivery` (`Notification` and `WebhookPost` are its
proxies), sent by one task, `deliver(delivery_id)`, which asks the row's channel to send it
(each channel names its sender here, `channel`, so this module imports none of them), and
swept by one sweep. Each function takes the rows it works on as a queryset, so that every
channel shares one claim, one lease and one count of attempts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from functools import partial
from smtplib import SMTPException
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from kombu.exceptions import OperationalError as BrokerError

from config.celery import app as celery_app
from reviews.models import Delivery, DeliveryChannel, NotificationDelivery, NotificationStatus

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


def send_on_commit(dispatch: Callable[[list[int]], None], ids: list[int]) -> None:
    """Hand `ids` to `dispatch` once the change commits."""
    transaction.on_commit(partial(_send_and_sweep, dispatch, ids))


def _send_and_sweep(dispatch: Callable[[list[int]], None], ids: list[int]) -> None:
    dispatch(ids)
    if in_process():
        # Without a broker there is no beat either: any commit that owes an email or a chat
        # post retries what every channel still owes, so none waits for one of its own kind.
        sweep(limit=EAGER_SWEEP_BATCH)


# Each channel's sender (reviews.outbox's emails, reviews.webhooks' chat posts): given a row's
# id and fields, it sends the row (with what goes along with it). Each channel names its own
# here when it is imported, so that the one task reaches every channel without this module
# importing those that import it.
Sender = Callable[[int, dict[str, Any]], str]
_SENDERS: dict[str, Sender] = {}
# The fields of a row its sender is given, read once by `send` for every channel.
SENT_BY = ("channel", "kind", "delivery", "recipient_id", "not_before", "webhook_id")


def channel(name: str) -> Callable[[Sender], Sender]:
    """Make the decorated `send(row_id, row)` the sender of the channel `name` (`row`: the
    row's `SENT_BY` fields)."""

    def register(sender: Sender) -> Sender:
        _SENDERS[name] = sender
        return sender

    return register


def send(delivery_id: int) -> str:
    """Ask the row's channel to send it; returns the outcome."""
    row = Delivery.objects.filter(pk=delivery_id).values(*SENT_BY).first()
    if row is None:
        return "gone"
    return _SENDERS[row["channel"]](delivery_id, row)


# How the log names a channel's rows.
WHAT: dict[str, str] = {
    DeliveryChannel.EMAIL: "notification(s)",
    DeliveryChannel.CHAT: "chat post(s)",
}


def one_per_chat(rows: Iterable[tuple[int, int | None]]) -> list[int]:
    """The ids of (id, webhook id) pairs to hand over: a chat's sender sends everything the
    chat is owed, so one per webhook; every row of none (an email, or a post whose webhook
    was taken off)."""
    first: dict[int, int] = {}
    for row_id, webhook_id in rows:
        first.setdefault(-row_id if webhook_id is None else webhook_id, row_id)
    return list(first.values())


def sweep(limit: int = SWEEP_BATCH, *, channels: Sequence[str] = DeliveryChannel.values) -> int:
    """Send again what every channel (or those of `channels`) still owes, up to `limit` rows
    each (a backlog of emails never holds up the chat posts); how many."""
    now = timezone.now()
    grace = retry_pause()
    swept = 0
    for name in channels:
        rows = Delivery.objects.filter(channel=name)
        take_back_leases(rows, now)
        due = list(
            rows.filter(status=NotificationStatus.PENDING, delivery=NotificationDelivery.IMMEDIATE)
            .filter(
                Q(last_attempt_at__isnull=True, created_at__lt=now - grace, not_before__isnull=True)
                | Q(last_attempt_at__isnull=True, not_before__lt=now)
                | Q(last_attempt_at__lt=now - grace)
            )
            .order_by("id")
            .values_list("pk", "webhook_id")[:limit]
        )
        hand_over(deliver, one_per_chat(due), what=WHAT[name])
        swept += len(due)
    return swept


def requeue(ids: list[int], *, channels: Sequence[str] = DeliveryChannel.values) -> int:
    """The admin's "send again": failed and refused rows of `ids` are owed again, and each
    immediate one is sent now; how many."""
    rows = Delivery.objects.filter(pk__in=ids, channel__in=channels)
    put_back(rows)
    requeued = 0
    for name in channels:
        due = list(
            rows.filter(
                channel=name,
                status=NotificationStatus.PENDING,
                delivery=NotificationDelivery.IMMEDIATE,
            ).values_list("pk", "webhook_id")
        )
        hand_over(deliver, one_per_chat(due), what=WHAT[name])
        requeued += len(due)
    return requeued


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


@shared_task(name="reviews.tasks.deliver", **SENDING)
def deliver(self: Task, delivery_id: int) -> str:
    """The one sending task: whatever the row's channel, it sends it (`send`)."""
    return send_retrying(self, send, delivery_id)


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


def owed(name: str, *, before: datetime | None = None) -> Rows:
    """The rows of the channel `name` still to be sent (pending, or claimed by a worker),
    made before `before`."""
    rows: Rows = Delivery.objects.filter(channel=name, status__in=OWED)
    return rows if before is None else rows.filter(created_at__lt=before)


@transaction.atomic
def settle_owed(name: str, *, sent: bool, before: datetime | None = None) -> int:
    """Mark what the channel `name` still owes as sent (nobody is sent it) or skipped
    (dropped); how many."""
    status, note = (
        (NotificationStatus.SENT, MARKED_SENT) if sent else (NotificationStatus.SKIPPED, DROPPED)
    )
    return (
        owed(name, before=before)
        .select_for_update()
        .update(status=status, sent_at=timezone.now(), last_error=note)
    )
