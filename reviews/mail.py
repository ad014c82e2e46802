"""What review emails say: a proposal waiting, a decision, a digest of several proposals.

Pure composition: reviews/outbox.py decides who is owed an email and sends what this builds.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.urls import reverse

from reviews.models import (
    Approval,
    CommentKind,
    Notification,
    NotificationKind,
    Review,
    ReviewAsk,
    ReviewComment,
)
from reviews.selectors import text_changed
from wiki.models import Version, VersionKind, VersionStatus
from wiki.selectors import path_shown_to

DIFF_EXCERPT_LINES = 20


@dataclass(frozen=True)
class DiffSummary:
    added: int
    removed: int
    excerpt: str

    def __str__(self) -> str:
        return f"+{self.added}/\u2212{self.removed} lines"


def diff_summary(version: Version) -> DiffSummary:
    """Lines added and removed by `version` against what is live now, and the first hunk lines."""
    live = version.page.live_version
    # A decided version is compared with what was live before it; a proposal with what is now.
    reference = version.base_version if live is not None and live.pk == version.pk else live
    live_body = reference.body if reference is not None else ""
    if version.kind == VersionKind.APPEND and version.status == VersionStatus.IN_REVIEW:
        new_body = live_body.rstrip("\n") + "\n\n" + version.proposed_body.strip("\n") + "\n"
    else:
        new_body = version.body
    added = removed = 0
    excerpt: list[str] = []
    for line in difflib.unified_diff(
        live_body.splitlines(), new_body.splitlines(), lineterm="", n=0
    ):
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
        if len(excerpt) < DIFF_EXCERPT_LINES:
            excerpt.append(line)
    return DiffSummary(added=added, removed=removed, excerpt="\n".join(excerpt))


def review_url(version: Version) -> str:
    path = reverse("reviews:review", args=[version.page.public_id, version.number])
    return f"{settings.QUIRE_BASE_URL}{path}"


def compose(notification: Notification) -> EmailMessage | None:
    """The email for one row, or None when it is no longer worth sending."""
    recipient = notification.recipient
    if not recipient.email or not recipient.is_active:
        return None
    version = notification.version
    if notification.kind == NotificationKind.REVIEW_REQUESTED:
        if version.status != VersionStatus.IN_REVIEW:
            return None
        return compose_one_request(recipient, version)
    elif notification.kind in (NotificationKind.REVIEW_ASKED, NotificationKind.REVIEW_REMINDER):
        if version.status != VersionStatus.IN_REVIEW:
            return None
        context = _version_context(version, recipient)
        if notification.kind == NotificationKind.REVIEW_ASKED:
            ask = (
                ReviewAsk.objects.filter(review__version=version, person=recipient)
                .select_related("asked_by")
                .first()
            )
            asked_by = ask.asked_by.get_username() if ask and ask.asked_by else "Someone"
            subject = f"[Quire] {asked_by} asks you to review {version.title} (v{version.number})"
            extra: dict[str, object] = {"asked_by": asked_by}
        else:
            subject = f"[Quire] Reminder: {version.title} (v{version.number}) still waits"
            extra = {"reminder": True}
        body = render_to_string(
            "email/review_requested.txt", {"recipient": recipient, **context, **extra}
        )
    elif notification.kind == NotificationKind.REVIEW_WITHDRAWN:
        context = _version_context(version, recipient)
        subject = f"[Quire] {version.title} (v{version.number}) no longer waits on you"
        body = render_to_string("email/review_withdrawn.txt", {"recipient": recipient, **context})
    elif notification.kind == NotificationKind.NOBODY_DECIDES:
        if version.status != VersionStatus.IN_REVIEW:
            return None
        context = _version_context(version, recipient)
        subject = f"[Quire] Nobody can decide: {version.title} (v{version.number})"
        body = render_to_string("email/nobody_decides.txt", {"recipient": recipient, **context})
    elif notification.kind == NotificationKind.CHANGES_REQUESTED:
        if version.status != VersionStatus.IN_REVIEW:
            return None
        context = _version_context(version, recipient)
        subject = f"[Quire] Changes requested on v{version.number} of {version.title}"
        body = render_to_string(
            "email/changes_requested.txt",
            {"recipient": recipient, "request": _changes_request(version), **context},
        )
    else:
        context = _version_context(version, recipient)
        verb = "approved" if version.status == VersionStatus.APPROVED else "rejected"
        subject = f"[Quire] v{version.number} of {version.title} was {verb}"
        body = render_to_string(
            "email/decision.txt", {"recipient": recipient, "verb": verb, **context}
        )
    return EmailMessage(subject=subject, body=body, to=[recipient.email])


def compose_one_request(recipient: AbstractBaseUser, version: Version) -> EmailMessage:
    """The email asking a decider to review one proposal."""
    context = _version_context(version, recipient)
    subject = f"[Quire] Review requested: {version.title} (v{version.number})"
    body = render_to_string("email/review_requested.txt", {"recipient": recipient, **context})
    return EmailMessage(subject=subject, body=body, to=[getattr(recipient, "email", "")])


def _changes_request(version: Version) -> ReviewComment | None:
    return (
        ReviewComment.objects.filter(version=version, kind=CommentKind.CHANGES_REQUESTED)
        .select_related("author")
        .order_by("-created_at", "-id")
        .first()
    )


def _version_context(version: Version, recipient: Any) -> dict[str, object]:
    return {
        "version": version,
        "page": version.page,
        # The page's path as the recipient is shown it: a section hidden from them above a
        # page granted back to them is not named.
        "page_path": path_shown_to(recipient, version.page),
        "author": version.author_name,
        "kind": version.get_kind_display().lower(),
        "diff": diff_summary(version),
        "review_url": review_url(version),
        "decided_by": version.decided_by.get_username() if version.decided_by else "",
        "step": _step(version),
        "text_changed": _text_changed(version),
    }


def _text_changed(version: Version) -> str:
    """Said to the next approver when a reviewer edited the text after others approved it."""
    if version.status != VersionStatus.IN_REVIEW or not version.edited_by_reviewer:
        return ""
    return text_changed(
        list(Approval.objects.filter(version=version).select_related("user").order_by("pk"))
    )


def _step(version: Version) -> str:
    """The step a proposal waits on, e.g. `2 of 2, Final check (Reviewers)`, when its
    workflow has several."""
    try:
        review = version.review
    except Review.DoesNotExist:
        return ""
    if len(review.steps) < 2:  # the default single step: nothing to say
        return ""
    step = review.current_step
    return f"{review.step + 1} of {len(review.steps)}, {step['name']} ({step['group']})"


def compose_digest(recipient: AbstractBaseUser, waiting: list[Version]) -> EmailMessage:
    """One email listing `waiting` proposals for a reviewer (the daily digest, or a batch)."""
    # A proposal asked about twice (its step came round again) is listed once.
    unique = list({version.pk: version for version in waiting}.values())
    items = [_version_context(version, recipient) for version in unique]
    body = render_to_string(
        "email/review_digest.txt",
        {
            "recipient": recipient,
            "items": items,
            "queue_url": f"{settings.QUIRE_BASE_URL}{reverse('reviews:queue')}",
        },
    )
    count = len(items)
    subject = f"[Quire] {count} proposal{'s' if count != 1 else ''} waiting for review"
    return EmailMessage(subject=subject, body=body, to=[getattr(recipient, "email", "")])
