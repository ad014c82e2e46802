"""Outgoing webhooks: a group's chat hears when a proposal waits on a step of the group, when it
waits past the step's due time (a reminder, then the escalation to the admins), and when nobody
can decide it.

Each post is a `WebhookPost` row written inside the transaction of the change, its text as it
was true then, and sent as Slack/Teams-compatible JSON {"text": ...} by a Celery task queued on
commit. Like the email outbox (reviews.delivery): a chat or broker outage leaves the row
pending for the sweep, MAX_ATTEMPTS make it failed, and a 4xx (a wrong or revoked address)
makes it refused at once; the admin's list of webhook posts sends either again. Like a
reviewer's review emails, a chat's posts are gathered: the first after a quiet spell goes at
once, what follows within QUIRE_WEBHOOK_GATHER_SECONDS goes as one message when it closes.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence, Set
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import requests
from celery import Task, shared_task
from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from reviews import delivery, mail, webhook_address
from reviews.deciders import deciding_groups
from reviews.models import (
    DeliveryChannel,
    GroupWebhook,
    NotificationStatus,
    Review,
    WebhookPost,
    WebhookPostKind,
)
from wiki import permissions
from wiki.models import Version, VersionStatus

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10
# A 4xx means the address is wrong, except these: the chat asks to be tried again later.
RETRIED_4XX = frozenset({408, 425, 429})
# A gathered message lists this many posts at most, in this many characters (Slack shows
# 4,000 characters of a message's text and cuts it at 40,000; Teams takes about 28 KB); the
# rest are counted, with the review queue's address.
GATHERED_LINES = 20
GATHERED_CHARS = 3500
TAKEN_OFF = "the group's webhook was taken off"


# --- queueing (inside the service transaction) ------------------------------------------


def queue_review_webhooks(
    versions: Sequence[Version], *, stuck: Set[int] = frozenset()
) -> list[int]:
    """Owe the chat of each group that decides a proposal's current step a post: a review
    request, or for the versions in `stuck` (nobody may decide their step) the news that
    nobody can. Two queries (the grants above the pages, the webhooks) and one insert,
    whatever the number of proposals."""
    reviews = [version.review for version in versions]
    posts: list[WebhookPost] = []
    for version, chats in zip(versions, _chats_of(reviews), strict=True):
        kind = (
            WebhookPostKind.NOBODY_DECIDES
            if version.pk in stuck
            else WebhookPostKind.REVIEW_REQUESTED
        )
        posts.extend(
            WebhookPost(
                webhook_id=hook, version=version, kind=kind, text=_text(kind, version, group)
            )
            for group, hook in chats
        )
    return _save_and_dispatch(posts)


def queue_reminder(review: Review, *, escalated: bool, waited: timedelta) -> list[int]:
    """Owe the chats of the step's deciding groups the reminder that `review` still waits
    (reviews.asking writes it once per step and revision, and once more when it goes to the
    admins)."""
    kind = WebhookPostKind.REVIEW_ESCALATED if escalated else WebhookPostKind.REVIEW_REMINDER
    (chats,) = _chats_of([review])
    return _save_and_dispatch(
        [
            WebhookPost(
                webhook_id=hook,
                version=review.version,
                kind=kind,
                text=_text(kind, review.version, group, waited=waited),
            )
            for group, hook in chats
        ]
    )


def _chats_of(reviews: Sequence[Review]) -> list[list[tuple[str, int]]]:
    """For each review, the (group, webhook) of each group that decides its current step and
    whose chat may hear of it: the chat is read by the whole group, so a group hears only of a
    proposal the group itself may read (wiki.permissions.group_holds), whichever of its
    members may. At a workflow step, the step's group; at the default step, the groups that
    hold `decide` there (Reviewers, unless a grant names others). One query for the webhooks
    (few), and one for the grants above the pages when there is any."""
    hooks = dict(GroupWebhook.objects.values_list("group__name", "pk"))
    if not hooks or not reviews:
        return [[] for _ in reviews]
    accesses = permissions.accesses_at([review.version.page for review in reviews])
    chats = []
    for review in reviews:
        access = accesses[review.version.page.path]
        chats.append(
            [
                (group, hooks[group])
                for group in deciding_groups(review, access)
                if group in hooks and permissions.group_holds(group, permissions.READ, access)
            ]
        )
    return chats


def _save_and_dispatch(posts: list[WebhookPost]) -> list[int]:
    if not posts:
        return []
    WebhookPost.objects.bulk_create(posts)
    # One task per chat: it sends (or gathers) everything the chat is owed.
    delivery.send_on_commit(
        dispatch, delivery.one_per_chat((post.pk, post.webhook_id) for post in posts)
    )
    return [post.pk for post in posts]


def drop_posts(group_id: int) -> int:
    """The group's webhook is being taken off: what it still owes is not posted anywhere
    (the posts are kept, without the address: reviews.models.WebhookPost)."""
    return WebhookPost.objects.filter(
        webhook__group_id=group_id,
        status__in=[
            NotificationStatus.PENDING,
            NotificationStatus.FAILED,
            NotificationStatus.REFUSED,
        ],
    ).update(status=NotificationStatus.SKIPPED, last_error=TAKEN_OFF)


def drop_posts_since(version: Version, since: datetime) -> int:
    """An approval that moved `version` on (at `since`) was taken back: what the next step's
    chats are still owed about it is not posted (a post already made stays in the chat)."""
    return WebhookPost.objects.filter(
        version=version, created_at__gte=since, status=NotificationStatus.PENDING
    ).update(status=NotificationStatus.SKIPPED, last_error="the approval was taken back")


def dispatch(ids: list[int]) -> None:
    """Hand posts to the one sending task (reviews.delivery.deliver)."""
    delivery.hand_over(delivery.deliver, ids, what="chat post(s)")


# The tasks keep the names they had in reviews.tasks, so posts queued before a deploy still run
# (kept for a release).
@shared_task(name="reviews.tasks.deliver_webhook_post", **delivery.SENDING)
def deliver_webhook_post(self: Task, post_id: int) -> str:
    """A post owed to a group's chat webhook, queued before the one table under the post's
    id of then (`deliver_queued_before`)."""
    return delivery.send_retrying(self, deliver_queued_before, post_id)


@shared_task(name="reviews.tasks.send_webhook_posts", **delivery.SENDING)
def send_webhook_posts(self: Task, webhook_id: int) -> str:
    """The follow-up post gathering what a chat is owed (`send_posts`)."""
    return delivery.send_retrying(self, send_posts, webhook_id)


# --- what a post says ----------------------------------------------------------------------


def _text(kind: str, version: Version, group: str, *, waited: timedelta | None = None) -> str:
    review = version.review
    step = review.current_step
    where = f"step {review.step + 1} of {len(review.steps)}, {step['name']} ({group})"
    whose = f"{_whose(version)} change to {version.page.title} (v{version.number})"
    url = mail.review_url(version)
    if kind == WebhookPostKind.NOBODY_DECIDES:
        return (
            f"Nobody can decide {whose}: it waits on {where}, and nobody there may decide it. "
            f"An admin should act: {url}"
        )
    if kind in (WebhookPostKind.REVIEW_REMINDER, WebhookPostKind.REVIEW_ESCALATED):
        hours = int((waited or timedelta()).total_seconds() // 3600)
        said = "Escalated to the admins" if kind == WebhookPostKind.REVIEW_ESCALATED else "Reminder"
        return f"{said}: {whose} has waited {hours} h on {where}: {url}"
    summary = f": {version.change_summary}" if version.change_summary else ""
    return (
        f"{version.author_name} proposes a change to {version.page.title} "
        f"(v{version.number}){summary}. It waits on {where}: {url}"
    )


def _whose(version: Version) -> str:
    if version.author_agent_id is not None:
        return f"the agent {version.author_agent.name}'s"  # type: ignore[union-attr]
    return f"{version.author_name}'s"


# --- sending (in the task) ----------------------------------------------------------------


def gather_window() -> timedelta:
    return timedelta(seconds=settings.QUIRE_WEBHOOK_GATHER_SECONDS)


def deliver_queued_before(post_id: int) -> str:
    """Send the post a task queued before migration 0020 names: by the id it had then
    (`legacy_id`), renumbered in the one table."""
    renumbered = WebhookPost.objects.filter(legacy_id=post_id).values_list("pk", flat=True).first()
    return deliver(post_id if renumbered is None else renumbered)


def deliver(post_id: int) -> str:
    """Send what the post's chat is owed, this post among it (`send_posts`)."""
    post = WebhookPost.objects.filter(pk=post_id).values(*delivery.SENT_BY).first()
    if post is None:
        return "gone"
    return deliver_row(post_id, post)


@delivery.channel(DeliveryChannel.CHAT)
def deliver_row(post_id: int, post: dict[str, Any]) -> str:
    """`deliver`, the post's fields read (reviews.delivery.SENT_BY)."""
    if post["webhook_id"] is None:
        # Its group's webhook was taken off meanwhile (or the group deleted).
        rows = WebhookPost.objects.filter(pk=post_id, status=NotificationStatus.PENDING)
        delivery.finish(rows, NotificationStatus.SKIPPED, error=TAKEN_OFF)
        return NotificationStatus.SKIPPED
    return send_posts(post["webhook_id"])


def send_posts(webhook_id: int) -> str:
    """POST what a chat is owed: at once after a quiet spell, else gathered into one message
    when the window closes (reviews.delivery.gathered_for, as for a reviewer's emails).
    Returns the outcome; raises ChatUnreachable (an OSError) when the chat cannot be reached
    or answers 5xx, for the task to retry."""
    with transaction.atomic():
        # One decision at a time per chat, so two workers never both send "the first".
        hook = GroupWebhook.objects.select_for_update().filter(pk=webhook_id).first()
        if hook is None:
            return "gone"
        owed = WebhookPost.objects.filter(webhook_id=webhook_id)
        pending = list(owed.filter(status=NotificationStatus.PENDING).values_list("pk", flat=True))
        if not pending:
            return "not pending"
        now = timezone.now()
        # "Nobody can decide" is said at once (what waits with it goes along); else the
        # window gathers, as for review emails. A failed send's pause holds for every kind.
        urgent = owed.filter(pk__in=pending, kind=WebhookPostKind.NOBODY_DECIDES).exists()
        gathered = delivery.gathered_for(owed, now, timedelta(0) if urgent else gather_window())
        if gathered is not None:
            outcome, delay = gathered
            delivery.follow_up_later(send_webhook_posts, webhook_id, delay, what="chat")
            return outcome
        delivery.claim(owed.filter(pk__in=pending), now)
    # Only the rows this worker claimed: one is never sent by two.
    claimed = WebhookPost.objects.filter(
        pk__in=pending, status=NotificationStatus.SENDING, last_attempt_at=now
    )
    posts = list(claimed.select_related("version").order_by("created_at", "pk"))
    waiting = [post for post in posts if post.version.status == VersionStatus.IN_REVIEW]
    passed = [post.pk for post in posts if post.version.status != VersionStatus.IN_REVIEW]
    if passed:
        # Held up (a chat or broker outage, or the window) until it was decided: old news.
        rows = WebhookPost.objects.filter(pk__in=passed)
        delivery.finish(rows, NotificationStatus.SKIPPED, error="no longer waiting for review")
    if not waiting:
        return NotificationStatus.SKIPPED
    text = waiting[0].text if len(waiting) == 1 else _gathered_text(waiting)
    return _post(hook, WebhookPost.objects.filter(pk__in=[post.pk for post in waiting]), text)


def _gathered_text(posts: list[WebhookPost]) -> str:
    """One message listing `posts`: the first GATHERED_LINES that fit in GATHERED_CHARS, then
    how many more, with the review queue's address."""
    proposals = len({post.version_id for post in posts})
    lines = [
        f"{proposals} proposals wait for review:"
        if proposals > 1
        else "1 proposal waits for review:"
    ]
    size = len(lines[0])
    for post in posts[:GATHERED_LINES]:
        line = f"• {post.text}"
        if len(lines) > 1 and size + 1 + len(line) > GATHERED_CHARS:
            break
        lines.append(line)
        size += 1 + len(line)
    more = len(posts) - (len(lines) - 1)
    if more:
        lines.append(f"and {more} more: {settings.QUIRE_BASE_URL}{reverse('reviews:queue')}")
    return "\n".join(lines)


def _post(hook: GroupWebhook, rows: delivery.Rows, text: str) -> str:
    """POST `text` standing for `rows` (claimed) to the chat, and mark them sent, refused (a
    4xx), or owed again with the error (raised for the task to retry)."""
    try:
        # Sent to the address checked; never redirected (it could lead inside the network).
        answer = webhook_address.post(hook.url, {"text": text}, timeout=TIMEOUT_SECONDS)
        if 300 <= answer.status_code < 500 and answer.status_code not in RETRIED_4XX:
            return _refused(rows, hook, answer.status_code)
        if not 200 <= answer.status_code < 300:
            raise requests.HTTPError(f"HTTP {answer.status_code} from the chat's webhook")
    except webhook_address.Refused as refused:
        return _address_refused(rows, hook, str(refused))
    except requests.RequestException as exc:
        # The address is the chat's secret: it stays out of the row, the log and the retry.
        failure = ChatUnreachable(_without_address(delivery.describe(exc), hook.url))
        error = delivery.failed_attempt(rows, failure)
        logger.warning("Posting to the webhook of %s failed: %s", hook.group.name, error)
        raise failure from None
    delivery.finish(rows, NotificationStatus.SENT)
    return NotificationStatus.SENT


class ChatUnreachable(OSError):
    """The chat could not be reached or answered 5xx: the task tries again (reviews.tasks)."""


def _without_address(error: str, url: str) -> str:
    address = urlsplit(url)
    # requests names the path with its query (Teams' workflow addresses sign it there).
    with_query = f"{address.path}?{address.query}" if address.query else address.path
    error = error.replace(url, "<the webhook>")
    for path in (with_query, address.path):
        if len(path) > 1:
            error = error.replace(path, "/<path>")
    return error


def _refused(rows: delivery.Rows, hook: GroupWebhook, status_code: int) -> str:
    # The address is wrong or revoked: trying again will not help; an admin must fix it.
    delivery.finish(
        rows,
        NotificationStatus.REFUSED,
        error=f"HTTP {status_code}: the chat refused the post; check the webhook's address",
    )
    logger.warning(
        "The webhook of %s refused a post (HTTP %s): check the webhook's address on the "
        "group's screen, then send the post again from the admin's webhook posts.",
        hook.group.name,
        status_code,
    )
    return NotificationStatus.REFUSED


def _address_refused(rows: delivery.Rows, hook: GroupWebhook, reason: str) -> str:
    # Checked again at each post: the name may resolve inside the network now.
    delivery.finish(rows, NotificationStatus.REFUSED, error=f"not posted: {reason}")
    logger.warning("Not posting to the webhook of %s: %s.", hook.group.name, reason)
    return NotificationStatus.REFUSED


def retry_pending(*, limit: int = delivery.SWEEP_BATCH) -> int:
    """Queue again every post still owed (the one sweep, for the chat posts); returns how
    many."""
    return delivery.sweep(limit, channels=[DeliveryChannel.CHAT])


def requeue(ids: list[int]) -> int:
    """The admin's "send again": failed and refused posts are owed again, and sent now."""
    return delivery.requeue(ids, channels=[DeliveryChannel.CHAT])
