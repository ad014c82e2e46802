"""Outgoing webhooks for review requests: a group's chat hears when a proposal waits on it.

`queue_review_webhooks` runs inside the transaction that puts a proposal at a step (beside
the review emails in reviews.outbox) and queues one Celery task per webhook on commit;
`post_review_request` (the task) POSTs Slack/Teams-compatible JSON {"text": ...}.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import requests
from django.db import transaction

from reviews import mail
from reviews.models import GroupWebhook, Review
from wiki.models import Version

logger = logging.getLogger(__name__)

TIMEOUT_SECONDS = 10


def queue_review_webhooks(reviews: Sequence[Review]) -> int:
    """Queue a post for each review whose current step's group has a webhook (one query)."""
    groups = {review.current_step["group"] for review in reviews}
    hooks = dict(
        GroupWebhook.objects.filter(group__name__in=groups).values_list("group__name", "pk")
    )
    posts = [
        (hooks[review.current_step["group"]], review.version_id)
        for review in reviews
        if review.current_step["group"] in hooks
    ]
    if posts:
        transaction.on_commit(lambda: _dispatch(posts))
    return len(posts)


def _dispatch(posts: list[tuple[int, int]]) -> None:
    from reviews import tasks

    for webhook_id, version_id in posts:
        try:
            tasks.post_review_webhook.delay(webhook_id, version_id)
        except OSError as exc:  # the broker is down: a chat message is not worth failing for
            logger.warning("review webhook %s not queued: %s", webhook_id, exc)


def review_request_text(version: Version) -> str:
    review = version.review
    step = review.current_step
    summary = f": {version.change_summary}" if version.change_summary else ""
    return (
        f"{version.author_name} proposes a change to {version.page.title} "
        f"(v{version.number}){summary}. "
        f"It waits on step {review.step + 1} of {len(review.steps)}, {step['name']} "
        f"({step['group']}): {mail.review_url(version)}"
    )


def post_review_request(webhook_id: int, version_id: int) -> str:
    """POST the review request; raises OSError (requests' errors are) for the task to retry.
    Returns what happened: sent, refused (a 4xx: not retried), or gone (the webhook or the
    proposal is no longer there)."""
    hook = GroupWebhook.objects.filter(pk=webhook_id).first()
    version = (
        Version.objects.select_related("page", "review", "author_user", "author_agent")
        .filter(pk=version_id)
        .first()
    )
    if hook is None or version is None:
        return "gone"
    answer = requests.post(
        hook.url, json={"text": review_request_text(version)}, timeout=TIMEOUT_SECONDS
    )
    if 400 <= answer.status_code < 500:
        # The URL or the hook is wrong: trying again will not help; an admin must fix it.
        logger.warning(
            "the webhook of %s refused a review request (%s); check its URL",
            hook.group_id,
            answer.status_code,
        )
        return "refused"
    answer.raise_for_status()
    return "sent"
