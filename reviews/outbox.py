"""The outbox: who is owed an email (a row per person), and getting each one sent.

Services call `queue_review_requested` / `queue_decision` inside their transaction; the rows
commit with the change, and a Celery task sends each one after commit. A broker or SMTP
outage leaves rows pending, and `retry_pending` (a beat task, every minute) sends them later.
What an email says is reviews/mail.py's business.

Delivery is at least once (reviews.delivery, shared with the chat posts): a worker claims a
row (`sending`) for `SENDING_LEASE`, sends, then marks it sent. One that dies in between
leaves the row claimed; when the lease ends the sweep sends it again, so the email can arrive
twice. Every email of a notification carries the same Message-ID, so a repeat is
recognisable (mail clients drop it): the id is stored on the rows before the first try, and
rows tried before go out again as the email they were, under that id, never gathered with
newer rows into an email with a new one.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterator, Sequence, Set
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta
from functools import partial
from smtplib import SMTPException
from typing import Any, cast
from urllib.parse import urlsplit

from celery import Task, shared_task
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.mail import EmailMessage
from django.db import transaction
from django.utils import timezone

from inbox import services as inbox_services
from reviews import delivery, mail, webhooks
from reviews.deciders import deciders_of
from reviews.delivery import SWEEP_BATCH
from reviews.models import (
    CommentKind,
    DeliveryChannel,
    Notification,
    NotificationDelivery,
    NotificationKind,
    NotificationPreference,
    NotificationStatus,
    ReviewComment,
)
from wiki import permissions
from wiki.models import Version, VersionStatus
from wiki.permissions import reads

logger = logging.getLogger(__name__)


# Set inside `batched()`: review emails owed there are collected instead of sent one by one.
_batch: ContextVar[list[int] | None] = ContextVar("quire_notification_batch", default=None)


# --- queueing (inside the service transaction) ------------------------------------------


@contextmanager
def batched() -> Iterator[list[int]]:
    """Collect the review emails owed inside the block; send one summary per reviewer after.

    A bulk import without --publish would otherwise email every reviewer once per page.
    The rows are still written with each change, so a failure while sending loses nothing:
    what is not sent stays pending for the retry sweep.
    """
    ids: list[int] = []
    token = _batch.set(ids)
    try:
        yield ids
    finally:
        _batch.reset(token)
    if ids:
        # Like every other email, the summary goes out once the changes are committed.
        transaction.on_commit(lambda: send_digests(ids=ids))


def queue_review_requested(version: Version) -> list[int]:
    """Owe every person who may decide the step `version` waits on (reviews.deciders) an
    email about it: now, in the digest, or not at all, as each one prefers."""
    return queue_reviews_requested([version])


def queue_reviews_requested(versions: Sequence[Version]) -> list[int]:
    """`queue_review_requested` for several versions (an import), in a fixed number of
    queries; each proposal's mail goes to its own deciders."""
    if not versions:
        return []
    reviews = [version.review for version in versions]
    deciders = deciders_of(reviews)
    everyone = set().union(*deciders.values())
    preferences = dict(
        get_user_model()
        .objects.filter(pk__in=everyone)
        .exclude(email="")
        .values_list("pk", "reviewer_settings__notifications")
    )
    rows = []
    email_off: set[int] = set()
    stuck = [
        version
        for version, review in zip(versions, reviews, strict=True)
        if not deciders[review.version_id]
    ]
    if stuck:
        rows.extend(_nobody_decides(stuck))
    webhooks.queue_review_webhooks(versions, stuck={version.pk for version in stuck})
    for version, review in zip(versions, reviews, strict=True):
        for user_id in sorted(deciders[review.version_id]):
            if user_id not in preferences:
                continue
            preference = preferences[user_id] or NotificationPreference.IMMEDIATE
            if preference == NotificationPreference.OFF:
                # No email, but the inbox still shows what waits on them.
                email_off.add(user_id)
            delivery = (
                NotificationDelivery.DIGEST
                if preference == NotificationPreference.DAILY
                else NotificationDelivery.IMMEDIATE
            )
            rows.append(
                Notification(
                    kind=NotificationKind.REVIEW_REQUESTED,
                    delivery=delivery,
                    version=version,
                    recipient_id=user_id,
                )
            )
    return _save_and_dispatch(rows, email_off=email_off)


def _nobody_decides(versions: Sequence[Version]) -> list[Notification]:
    """A proposal waits on a step nobody may decide (an empty group, or its only members
    wrote it or approved it already): the admins are told at once, whatever their review
    email preference, so that it does not wait unseen."""
    admins = permissions.admins().exclude(email="").values_list("pk", flat=True)
    return [
        Notification(kind=NotificationKind.NOBODY_DECIDES, version=version, recipient_id=pk)
        for version in versions
        for pk in admins
    ]


def queue_decision(version: Version) -> list[int]:
    """Owe the author (an agent's owner, or the person who wrote it) the reviewer's decision.

    An approval's email waits until the reviewer can no longer take it back
    (QUIRE_APPROVAL_UNDO_SECONDS, see `drop_decision`); a rejection's goes at once.
    """
    recipient_id = _author_recipient(version)
    if recipient_id is None or recipient_id == version.decided_by_id:
        return []
    if not reads(recipient_id, version.page_id):
        return []  # no mail about a page they may no longer read
    undo_window = timedelta(seconds=settings.QUIRE_APPROVAL_UNDO_SECONDS)
    not_before = None
    if version.status == VersionStatus.APPROVED and undo_window:
        not_before = (version.decided_at or timezone.now()) + undo_window
    row = Notification(
        kind=NotificationKind.DECISION,
        delivery=NotificationDelivery.IMMEDIATE,
        version=version,
        recipient_id=recipient_id,
        not_before=not_before,
    )
    return _save_and_dispatch([row])


def queue_asked(version: Version, *, person_id: int) -> list[int]:
    """Owe a person asked by name (reviews.asking) the request, whatever their review email
    timing: being asked by a colleague is not for the daily digest."""
    row = Notification(
        kind=NotificationKind.REVIEW_ASKED,
        delivery=NotificationDelivery.IMMEDIATE,
        version=version,
        recipient_id=person_id,
    )
    return _save_and_dispatch([row])


def queue_reminders(version: Version, *, person_ids: Sequence[int]) -> list[int]:
    """Owe each of `person_ids` a reminder that `version` still waits (reviews.asking)."""
    rows = [
        Notification(
            kind=NotificationKind.REVIEW_REMINDER,
            delivery=NotificationDelivery.IMMEDIATE,
            version=version,
            recipient_id=person_id,
        )
        for person_id in person_ids
    ]
    return _save_and_dispatch(rows)


def drop_decision(version: Version) -> int:
    """The approval of `version` was taken back: its decision email, still waiting out the
    undo window, is not sent. Returns how many were dropped."""
    inbox_services.withdraw(version_id=version.pk, kind=NotificationKind.DECISION)
    return Notification.objects.filter(
        version=version, kind=NotificationKind.DECISION, status=NotificationStatus.PENDING
    ).update(status=NotificationStatus.SKIPPED, last_error="the approval was taken back")


def withdraw_review_requests(version: Version, *, since: datetime) -> list[int]:
    """An approval that moved `version` on to its next step (at `since`) was taken back: the
    review emails that step's deciders were owed and not sent yet are dropped, their unread
    "waiting on you" items go, as do the step's chat posts not made yet, and each one
    already emailed is told it no longer waits on them. Those it waits on again (the step
    before) are not told anything new."""
    waits_on = deciders_of([version.review]).get(version.pk, set())
    asked = Notification.objects.filter(
        version=version, kind=NotificationKind.REVIEW_REQUESTED, created_at__gte=since
    ).exclude(recipient_id__in=waits_on)
    told = sorted(
        set(
            asked.filter(
                status__in=(NotificationStatus.SENT, NotificationStatus.SENDING)
            ).values_list("recipient_id", flat=True)
        )
    )
    asked.filter(status=NotificationStatus.PENDING).update(
        status=NotificationStatus.SKIPPED, last_error="the approval was taken back"
    )
    inbox_services.withdraw(
        version_id=version.pk, kind=NotificationKind.REVIEW_REQUESTED, besides=waits_on
    )
    webhooks.drop_posts_since(version, since)
    notices = [
        Notification(kind=NotificationKind.REVIEW_WITHDRAWN, version=version, recipient_id=pk)
        for pk in told
    ]
    return _save_and_dispatch(notices)


def queue_changes_requested(version: Version, *, requested_by: AbstractBaseUser) -> list[int]:
    """Owe the author (an agent's owner, or the person who wrote it) the reviewer's request."""
    recipient_id = _author_recipient(version)
    if recipient_id is None or recipient_id == requested_by.pk:
        return []
    if not reads(recipient_id, version.page_id):
        return []
    row = Notification(
        kind=NotificationKind.CHANGES_REQUESTED,
        delivery=NotificationDelivery.IMMEDIATE,
        version=version,
        recipient_id=recipient_id,
    )
    asked = (
        ReviewComment.objects.filter(
            version=version, author_id=requested_by.pk, kind=CommentKind.CHANGES_REQUESTED
        )
        .values_list("body", flat=True)
        .last()
    )
    return _save_and_dispatch([row], note=asked or "", note_by_id=requested_by.pk)


def _author_recipient(version: Version) -> int | None:
    """Who hears about decisions on `version`: its human author, or its agent's owner."""
    if version.author_agent_id is not None:
        owner_id: int | None = (
            Version.objects.filter(pk=version.pk)
            .values_list("author_agent__owner", flat=True)
            .first()
        )
        return owner_id
    return version.author_user_id


def _save_and_dispatch(
    rows: list[Notification],
    *,
    email_off: Set[int] = frozenset(),
    note: str = "",
    note_by_id: int | None = None,
) -> list[int]:
    if not rows:
        return []
    # The one place where notifications are written: the in-app inbox gets its items here,
    # and the outbox keeps only the emails each person still wants (inbox.services.deliver).
    wanted = inbox_services.deliver(
        [(_to(row), row.kind, row.version_id, row.recipient_id not in email_off) for row in rows],
        note=note,
        note_by_id=note_by_id,
    )
    rows = [row for position, row in enumerate(rows) if position in wanted]
    if not rows:
        return []
    Notification.objects.bulk_create(rows)
    later = [row for row in rows if row.not_before is not None]
    if later:
        # Queued to run when it is due; the sweep sends it if the broker loses it.
        transaction.on_commit(lambda: dispatch([row.pk for row in later], at=later[0].not_before))
        rows = [row for row in rows if row.not_before is None]
    ids = [row.pk for row in rows if row.delivery == NotificationDelivery.IMMEDIATE]
    batch = _batch.get()
    if batch is not None:
        batch.extend(ids)
        return ids
    if ids:
        delivery.send_on_commit(dispatch, ids)
    return ids


def _to(row: Notification) -> int:
    """Whom the email is to: an email always has a recipient (the table's check constraint),
    a chat post, of the same table, none."""
    return cast(int, row.recipient_id)


def dispatch(ids: list[int], *, at: datetime | None = None) -> None:
    """Hand rows to the one sending task (reviews.delivery.deliver)."""
    delivery.hand_over(delivery.deliver, ids, what="notification(s)", at=at)


# The tasks keep the names they had in reviews.tasks, so rows queued before a deploy still run:
# an email keeps its id in the one table (migration 0020), so the old task sends it as the one
# task would (kept for a release).
@shared_task(name="reviews.tasks.deliver_notification", **delivery.SENDING)
def deliver_notification(self: Task, notification_id: int) -> str:
    return delivery.send_retrying(self, delivery.send, notification_id)


@shared_task(name="reviews.tasks.send_review_requests", **delivery.SENDING)
def send_review_requests_task(self: Task, recipient_id: int) -> str:
    """The follow-up email gathering a reviewer's review requests (`send_review_requests`)."""
    return delivery.send_retrying(self, send_review_requests, recipient_id)


# --- sending (in the task) --------------------------------------------------------------


def deliver(notification_id: int) -> str:
    """Send one pending row. Returns its new status; raises on an SMTP or network failure."""
    row = Notification.objects.filter(pk=notification_id).values(*delivery.SENT_BY).first()
    if row is None:
        return "not pending"
    return deliver_row(notification_id, row)


@delivery.channel(DeliveryChannel.EMAIL)
def deliver_row(notification_id: int, row: dict[str, Any]) -> str:
    """`deliver`, the row's fields read (reviews.delivery.SENT_BY).

    The row is claimed (reviews.delivery.claim) rather than locked while talking to the SMTP
    server. A review request goes through `send_review_requests`, which gathers a reviewer's emails.
    """
    if row["not_before"] is not None and row["not_before"] >= timezone.now():
        # Early (a task queued for its time ran sooner): the sweep sends it when due.
        return "not due yet"
    if (
        row["kind"] == NotificationKind.REVIEW_REQUESTED
        and row["delivery"] == NotificationDelivery.IMMEDIATE
    ):
        return send_review_requests(row["recipient_id"])
    if not delivery.claim(Notification.objects.filter(pk=notification_id), timezone.now()):
        return "not pending"
    notification = Notification.objects.select_related(
        "recipient",
        "version__page__live_version",
        "version__base_version",
        "version__author_agent",
        "version__author_user",
        "version__decided_by",
    ).get(pk=notification_id)
    return _send([notification], lambda: mail.compose(notification))


def _send_as_before(
    rows: list[Notification], build: Callable[[list[Notification]], EmailMessage | None]
) -> str:
    """Send `rows` (claimed by the caller) as emails built by `build`: the rows an earlier
    try stored a Message-ID on go again together under it, as the email they were; the
    rest go together in a new one. Returns the last email's outcome."""
    groups: dict[str, list[Notification]] = {}
    for row in rows:
        groups.setdefault(row.message_id, []).append(row)
    # The repeats first, newest rows last, as they were gathered.
    ordered = sorted(groups.items(), key=lambda item: item[0] == "")
    outcome: str = NotificationStatus.SKIPPED
    for number, (_, group) in enumerate(ordered):
        try:
            outcome = _send(group, partial(build, group))
        except Exception as exc:
            # The rows not tried yet are given back, as a failed try leaves its own.
            later = [row.pk for _, rest in ordered[number + 1 :] for row in rest]
            if later:
                _failed_attempt(later, exc)
            raise
    return outcome


def message_id(ids: list[int]) -> str:
    """The Message-ID of the email standing for the rows `ids`: the same each time it is
    sent, so that a repeat (see the module's docstring) is recognisable."""
    host = urlsplit(settings.QUIRE_BASE_URL).hostname or "quire.invalid"
    key = ".".join(map(str, ids[:5]))
    if len(ids) > 5:
        key += "." + hashlib.sha256(",".join(map(str, ids)).encode()).hexdigest()[:16]
    return f"<quire-notification-{key}.{len(ids)}@{host}>"


def _send(rows: list[Notification], build: Callable[[], EmailMessage | None]) -> str:
    """Build and send one email standing for `rows` (claimed by the caller); whatever
    happens, the rows leave `sending`."""
    ids = [row.pk for row in rows]
    try:
        message = build()
        if message is not None:
            # Built in full here, so that a message that cannot be built (a header with a
            # newline, a template error) is found now, not half-way through sending.
            # ", " lets a long list fold over several header lines: SMTP refuses a line
            # over 1,000 characters, which a follow-up gathering ~200 proposals reached.
            message.extra_headers["X-Quire-Notifications"] = ", ".join(map(str, ids))
            message.extra_headers["Message-ID"] = _stored_message_id(rows)
            message.message()
    except Exception as exc:  # noqa: BLE001 - any failure to build is recorded on the row
        _unbuildable(ids, exc)
        return NotificationStatus.FAILED
    if message is None:
        _finish(ids, NotificationStatus.SKIPPED)
        return NotificationStatus.SKIPPED
    try:
        message.send()
    except Exception as exc:
        # SMTP or network failures are retried; anything else too, after the pause.
        _failed_attempt(ids, exc)
        raise
    _finish(ids, NotificationStatus.SENT)
    return NotificationStatus.SENT


def _stored_message_id(rows: list[Notification]) -> str:
    """The Message-ID an earlier try stored on the rows, or a new one, stored on them now
    (committed before the email leaves, so a fault after sending cannot lose it)."""
    kept = {row.message_id for row in rows} - {""}
    if len(kept) == 1:
        return kept.pop()
    ids = [row.pk for row in rows]
    new = message_id(ids)
    Notification.objects.filter(pk__in=ids).update(message_id=new)
    for row in rows:
        row.message_id = new
    return new


def _unbuildable(ids: list[int], exc: BaseException) -> None:
    error = f"could not build the email: {exc.__class__.__name__}: {exc}"[:2000]
    Notification.objects.filter(pk__in=ids).update(
        status=NotificationStatus.FAILED, last_error=error
    )
    logger.error("Notification(s) %s marked failed: %s", ids, error)


# --- gathering a reviewer's review requests ----------------------------------------------


def gather_window() -> timedelta:
    return timedelta(seconds=settings.QUIRE_REVIEW_EMAIL_GATHER_SECONDS)


def send_review_requests(recipient_id: int) -> str:
    """Email a reviewer what waits for them: at once after a quiet spell, else gathered.

    The first proposal after a quiet spell goes out on its own at once. Review requests
    owed within QUIRE_REVIEW_EMAIL_GATHER_SECONDS of the last one wait, and one follow-up
    email lists them all when the window closes, so a busy team gets a few emails an hour
    instead of one per proposal.
    """
    window = gather_window()
    with transaction.atomic():
        # One decision at a time per reviewer, so two workers never both send "the first".
        get_user_model().objects.select_for_update().filter(pk=recipient_id).first()
        owed = Notification.objects.filter(
            recipient_id=recipient_id,
            kind=NotificationKind.REVIEW_REQUESTED,
            delivery=NotificationDelivery.IMMEDIATE,
        )
        pending = list(owed.filter(status=NotificationStatus.PENDING).values_list("pk", flat=True))
        if not pending:
            return "not pending"
        now = timezone.now()
        gathered = delivery.gathered_for(owed, now, window)
        if gathered is not None:
            outcome, delay = gathered
            delivery.follow_up_later(
                send_review_requests_task, recipient_id, delay, what="review email"
            )
            return outcome
        delivery.claim(owed.filter(pk__in=pending), now)
    rows = list(
        Notification.objects.filter(pk__in=pending)
        .select_related(
            "recipient",
            "version__page__live_version",
            "version__base_version",
            "version__author_agent",
            "version__author_user",
            "version__decided_by",
            "version__review",
        )
        .order_by("version__created_at", "pk")
    )
    waiting, passed = _still_asked(rows)
    if passed:
        _finish(passed, NotificationStatus.SKIPPED)
    if not waiting:
        return NotificationStatus.SKIPPED
    return _send_as_before(waiting, _review_requests_email)


def _review_requests_email(rows: list[Notification]) -> EmailMessage | None:
    """One review request's email, or one listing several."""
    if len(rows) == 1:
        return mail.compose(rows[0])
    recipient = rows[0].recipient
    if not recipient.email or not recipient.is_active:
        return None
    return mail.compose_digest(recipient, [row.version for row in rows])


def _still_asked(rows: list[Notification]) -> tuple[list[Notification], list[int]]:
    """The review requests whose proposal still waits on a step their recipient decides
    (reviews.deciders), and the ids of the rest: proposals decided since, or moved on to
    another group's step (a gathered follow-up or a digest can come after Legal has finished
    and Reviewers decide)."""
    reviews = {
        row.version.review.pk: row.version.review
        for row in rows
        if row.version.status == VersionStatus.IN_REVIEW
        and getattr(row.version, "review", None) is not None
    }
    deciders = deciders_of(reviews.values())
    asked, passed = [], []
    for row in rows:
        review = getattr(row.version, "review", None)
        if review is not None and row.recipient_id in deciders.get(review.version_id, set()):
            asked.append(row)
        else:
            passed.append(row.pk)
    return asked, passed


def _finish(ids: list[int], status: str) -> None:
    delivery.finish(Notification.objects.filter(pk__in=ids), status)


def _failed_attempt(ids: list[int], exc: BaseException) -> None:
    error = delivery.failed_attempt(Notification.objects.filter(pk__in=ids), exc)
    logger.warning("Sending notification(s) %s failed: %s", ids, error)


def retry_pending(*, limit: int = SWEEP_BATCH) -> int:
    """Queue again every immediate email still owed (the one sweep, for the emails); returns
    how many were queued."""
    return delivery.sweep(limit, channels=[DeliveryChannel.EMAIL])


def requeue(ids: list[int]) -> int:
    """Put failed rows back in the queue and send every selected immediate row now."""
    return delivery.requeue(ids, channels=[DeliveryChannel.EMAIL])


# --- digests (the daily one, and the summary of a batch) ---------------------------------


def send_digests(*, ids: list[int] | None = None) -> int:
    """One email per reviewer listing the proposals owed to them since their last digest.

    With `ids`, exactly those rows are summed up instead (a batch, see `batched`).
    """
    owed = (
        Notification.objects.filter(pk__in=ids)
        if ids is not None
        else Notification.objects.filter(delivery=NotificationDelivery.DIGEST)
    )
    pending = (
        owed.filter(status=NotificationStatus.PENDING)
        .select_related("recipient", "version__page__live_version", "version__author_agent")
        .select_related("version__author_user", "version__base_version", "version__review")
        .order_by("recipient_id", "version__created_at")
    )
    by_recipient: dict[int, list[Notification]] = {}
    for row in pending:
        by_recipient.setdefault(_to(row), []).append(row)
    sent = 0
    for rows in by_recipient.values():
        stamp = timezone.now()
        delivery.claim(Notification.objects.filter(pk__in=[row.pk for row in rows]), stamp)
        # Only the rows this run claimed: a concurrent run keeps the others.
        claimed = set(
            Notification.objects.filter(
                pk__in=[row.pk for row in rows],
                status=NotificationStatus.SENDING,
                last_attempt_at=stamp,
            ).values_list("pk", flat=True)
        )
        rows = [row for row in rows if row.pk in claimed]
        if not rows:
            continue
        recipient = rows[0].recipient
        asked, passed = _still_asked(rows)
        if passed:
            _finish(passed, NotificationStatus.SKIPPED)
        if not asked:
            continue
        try:
            outcome = _send_as_before(asked, partial(_digest_of, recipient))
        except (SMTPException, OSError):
            continue  # the rows wait for the next digest
        sent += outcome == NotificationStatus.SENT
    return sent


def _digest_of(recipient: Any, rows: list[Notification]) -> EmailMessage | None:
    return _digest(recipient, [row.version for row in rows])


def _digest(recipient: Any, waiting: list[Version]) -> EmailMessage | None:
    if not recipient.email or not recipient.is_active:
        return None
    return mail.compose_digest(recipient, waiting)
