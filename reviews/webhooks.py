"""Outgoing webhooks: a group's chat hears when a proposal waits on a step of the group, when it
waits past the step's due time (a reminder, then the escalation to the admins), and when nobody
can decide it.

Each post is a `WebhookPost` row written inside the transaction of the change, its text as it
was true then, and sent as Slack/Teams-compatible JSON {"text": ...} by a Celery task queued on
commit. Like the email outbox (reviews.delivery): a chat or broker outage leaves the row
pending for the sweep, MAX_ATTEMPTS make it failed, and a 4xx (a wrong or revoked address)
makes it refused at once; the admin's list of webhook posts sends either again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence, Set
from datetime import timedelta
from urllib.parse import urlsplit

import requests
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from reviews import delivery, mail
from reviews.models import GroupWebhook, NotificationStatus, Review, WebhookPost, WebhookPostKind
from wiki.models import Version, VersionStatus

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10
# A 4xx means the address is wrong, except these: the chat asks to be tried again later.
RETRIED_4XX = frozenset({408, 425, 429})


# --- queueing (inside the service transaction) ------------------------------------------


def queue_review_webhooks(
    versions: Sequence[Version], *, stuck: Set[int] = frozenset()
) -> list[int]:
    """Owe the chat of each proposal's current step's group a post: a review request, or for
    the versions in `stuck` (nobody may decide their step) the news that nobody can. One query
    for the webhooks and one insert, whatever the number of proposals."""
    reviews = [version.review for version in versions]
    hooks = _hooks_of(reviews)
    posts = []
    for version, review in zip(versions, reviews, strict=True):
        if review.current_step["group"] not in hooks:
            continue
        kind = (
            WebhookPostKind.NOBODY_DECIDES
            if version.pk in stuck
            else WebhookPostKind.REVIEW_REQUESTED
        )
        post = WebhookPost(
            webhook_id=hooks[review.current_step["group"]],
            version=version,
            kind=kind,
            text=_text(kind, version),
        )
        posts.append(post)
    return _save_and_dispatch(posts)


def queue_reminder(review: Review, *, escalated: bool, waited: timedelta) -> list[int]:
    """Owe the chat of the step's group the reminder that `review` still waits (reviews.asking
    writes it once per step and revision, and once more when it goes to the admins)."""
    hooks = _hooks_of([review])
    if review.current_step["group"] not in hooks:
        return []
    kind = WebhookPostKind.REVIEW_ESCALATED if escalated else WebhookPostKind.REVIEW_REMINDER
    post = WebhookPost(
        webhook_id=hooks[review.current_step["group"]],
        version=review.version,
        kind=kind,
        text=_text(kind, review.version, waited=waited),
    )
    return _save_and_dispatch([post])


def _hooks_of(reviews: Sequence[Review]) -> dict[str, int]:
    """The webhook of each group the reviews wait on, by group name (one query)."""
    groups = {review.current_step["group"] for review in reviews}
    if not groups:
        return {}
    return dict(
        GroupWebhook.objects.filter(group__name__in=groups).values_list("group__name", "pk")
    )


def _save_and_dispatch(posts: list[WebhookPost]) -> list[int]:
    if not posts:
        return []
    WebhookPost.objects.bulk_create(posts)
    ids = [post.pk for post in posts]
    transaction.on_commit(lambda: _after_commit(ids))
    return ids


def _after_commit(ids: list[int]) -> None:
    dispatch(ids)
    if delivery.in_process():
        # Without a broker there is no beat either: retry what is still owed now.
        retry_pending(limit=delivery.EAGER_SWEEP_BATCH)


def dispatch(ids: list[int]) -> None:
    """Hand posts to the task queue (reviews.delivery.hand_over)."""
    from reviews import tasks

    delivery.hand_over(tasks.deliver_webhook_post, ids, what="chat post(s)")


# --- what a post says ----------------------------------------------------------------------


def _text(kind: str, version: Version, *, waited: timedelta | None = None) -> str:
    review = version.review
    step = review.current_step
    where = f"step {review.step + 1} of {len(review.steps)}, {step['name']} ({step['group']})"
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


def deliver(post_id: int) -> str:
    """POST one pending row. Returns its new status; raises ChatUnreachable (an OSError) when
    the chat cannot be reached or answers 5xx, for the task to retry."""
    rows = WebhookPost.objects.filter(pk=post_id)
    if not delivery.claim(rows, timezone.now()):
        return "not pending"
    post = rows.select_related("webhook__group", "version").first()
    if post is None:
        return "gone"  # the group's webhook was taken off meanwhile
    if post.version.status != VersionStatus.IN_REVIEW:
        # Held up (a chat or broker outage) until it was decided: old news for the chat.
        delivery.finish(rows, NotificationStatus.SKIPPED, error="no longer waiting for review")
        return NotificationStatus.SKIPPED
    try:
        answer = requests.post(post.webhook.url, json={"text": post.text}, timeout=TIMEOUT_SECONDS)
        if 400 <= answer.status_code < 500 and answer.status_code not in RETRIED_4XX:
            return _refused(rows, post, answer.status_code)
        if not 200 <= answer.status_code < 300:
            raise requests.HTTPError(f"HTTP {answer.status_code} from the chat's webhook")
    except requests.RequestException as exc:
        # The address is the chat's secret: it stays out of the row, the log and the retry.
        failure = ChatUnreachable(_without_address(delivery.describe(exc), post.webhook.url))
        error = delivery.failed_attempt(rows, failure)
        logger.warning("Posting %s to the webhook of %s failed: %s", post_id, post.webhook, error)
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


def _refused(rows: delivery.Rows, post: WebhookPost, status_code: int) -> str:
    # The address is wrong or revoked: trying again will not help; an admin must fix it.
    delivery.finish(
        rows,
        NotificationStatus.REFUSED,
        error=f"HTTP {status_code}: the chat refused the post; check the webhook's address",
    )
    logger.warning(
        "The webhook of %s refused a post (HTTP %s): check the webhook's address on the "
        "group's screen, then send the post again from the admin's webhook posts.",
        post.webhook.group.name,
        status_code,
    )
    return NotificationStatus.REFUSED


def retry_pending(*, limit: int = delivery.SWEEP_BATCH) -> int:
    """Queue again every post still owed (the beat, every minute); returns how many."""
    now = timezone.now()
    grace = delivery.retry_pause()
    delivery.take_back_leases(WebhookPost.objects.all(), now)
    ids = list(
        WebhookPost.objects.filter(status=NotificationStatus.PENDING)
        .filter(
            Q(last_attempt_at__isnull=True, created_at__lt=now - grace)
            | Q(last_attempt_at__lt=now - grace)
        )
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )
    dispatch(ids)
    return len(ids)


def requeue(ids: list[int]) -> int:
    """The admin's "send again": failed and refused posts are owed again, and sent now."""
    delivery.put_back(WebhookPost.objects.filter(pk__in=ids))
    due = list(
        WebhookPost.objects.filter(pk__in=ids, status=NotificationStatus.PENDING).values_list(
            "pk", flat=True
        )
    )
    dispatch(due)
    return len(due)
