"""`manage.py notifications_pending`: after restoring a backup taken while emails and chat
posts were owed, an operator marks them sent or drops them, so nobody is sent them again."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.utils import timezone

from reviews import outbox, webhooks
from reviews.models import (
    GroupWebhook,
    Notification,
    NotificationKind,
    NotificationStatus,
    WebhookPost,
    WebhookPostKind,
)
from tests.conftest import live
from wiki.models import Page


def _owed(make_page: Callable[..., Page], reviewer: User) -> dict[str, Notification | WebhookPost]:
    version = live(make_page("Restored"))
    old = timezone.now() - timedelta(hours=2)
    rows: dict[str, Notification | WebhookPost] = {
        status: Notification.objects.create(
            kind=NotificationKind.DECISION, version=version, recipient=reviewer, status=status
        )
        for status in (NotificationStatus.PENDING, NotificationStatus.SENDING, "sent")
    }
    Notification.objects.filter(pk__in=[row.pk for row in rows.values()]).update(created_at=old)
    rows["new"] = Notification.objects.create(
        kind=NotificationKind.DECISION, version=version, recipient=reviewer
    )
    hook = GroupWebhook.objects.create(
        group=Group.objects.create(name="Chat"), url="https://chat.example/hook"
    )
    rows["post"] = WebhookPost.objects.create(
        webhook=hook, version=version, kind=WebhookPostKind.REVIEW_REQUESTED, text="x"
    )
    WebhookPost.objects.filter(pk=rows["post"].pk).update(created_at=old)
    return rows


def _status(row: Notification | WebhookPost) -> str:
    row.refresh_from_db()
    return row.status


def test_it_lists_marks_sent_and_drops_what_is_owed(
    make_page: Callable[..., Page], reviewer: User
) -> None:
    rows = _owed(make_page, reviewer)
    out = StringIO()
    call_command("notifications_pending", stdout=out)
    assert out.getvalue().splitlines() == ["3 email(s) pending", "1 chat post(s) pending"]

    out = StringIO()
    before = (timezone.now() - timedelta(hours=1)).isoformat()
    call_command("notifications_pending", "--mark-sent", "--before", before, stdout=out)
    assert out.getvalue().splitlines() == ["2 email(s) marked sent", "1 chat post(s) marked sent"]
    assert [_status(rows[key]) for key in ("pending", "sending", "new", "post")] == [
        "sent",
        "sent",
        "pending",
        "sent",
    ]
    # The sweep finds nothing old to send again.
    assert outbox.retry_pending() == 0 and webhooks.retry_pending() == 0

    call_command("notifications_pending", "--drop", stdout=StringIO())
    assert _status(rows["new"]) == NotificationStatus.SKIPPED
    assert "operator" in Notification.objects.get(pk=rows["new"].pk).last_error


def test_it_refuses_a_time_it_cannot_read(db: None) -> None:
    with pytest.raises(CommandError, match="ISO 8601"):
        call_command("notifications_pending", "--drop", "--before", "yesterday")
