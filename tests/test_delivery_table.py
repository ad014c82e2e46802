"""One delivery row for every channel (issue 50): the emails and the chat posts are rows of one
table, `Delivery` (`Notification` and `WebhookPost` are its proxies), sent by one task that asks
the row's channel to send it and swept by one sweep; migration 0020 moved the rows of the two
tables before it into the one, the emails under their ids."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core import mail as django_mail
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test.utils import CaptureQueriesContext

from reviews import delivery, outbox, webhook_address, webhooks
from reviews.actions.propose import version_propose
from reviews.models import (
    Delivery,
    DeliveryChannel,
    GroupWebhook,
    Notification,
    NotificationKind,
    NotificationStatus,
    WebhookPost,
    WebhookPostKind,
)
from wiki.models import Page, Version
from wiki.roles import REVIEWERS

BEFORE = ("reviews", "0019_alter_notification_kind")
AFTER = ("reviews", "0020_one_delivery_table")


@pytest.fixture
def chat(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the chat is posted: the texts, in order; every post answered 200."""
    texts: list[str] = []

    def post(url: str, body: dict[str, Any], *, timeout: float) -> Any:
        texts.append(body["text"])
        return SimpleNamespace(status_code=200)

    monkeypatch.setattr(webhook_address, "post", post)
    return texts


@pytest.fixture
def proposal(
    make_page: Callable[..., Page],
    reader: User,
    reviewer: User,
    django_capture_on_commit_callbacks: Any,
) -> Version:
    """A proposal waiting on the Reviewers, whose chat has a webhook; nothing sent yet."""
    GroupWebhook.objects.create(
        group=Group.objects.get(name=REVIEWERS), url="https://chat.example.com/hooks/reviews"
    )
    page = make_page("Refund policy", "Refunds take five days.\n")
    with django_capture_on_commit_callbacks(execute=False):
        return version_propose(actor=reader, page=page, body="Refunds take seven days.\n")


def test_one_table_holds_the_emails_and_the_chat_posts(proposal: Version) -> None:
    [email] = Notification.objects.filter(version=proposal)
    [post] = WebhookPost.objects.filter(version=proposal)
    rows = Delivery.objects.filter(version=proposal)
    assert sorted(rows.values_list("pk", "channel")) == sorted(
        [(email.pk, DeliveryChannel.EMAIL), (post.pk, DeliveryChannel.CHAT)]
    )
    # Each proxy reads its own channel only, and makes rows of it (also in a bulk_create).
    assert not Notification.objects.filter(pk=post.pk).exists()
    assert not WebhookPost.objects.filter(pk=email.pk).exists()
    [made] = WebhookPost.objects.bulk_create(
        [WebhookPost(version=proposal, kind=WebhookPostKind.REVIEW_REMINDER, text="Reminder")]
    )
    assert Delivery.objects.get(pk=made.pk).channel == DeliveryChannel.CHAT
    assert set(proposal.notifications.values_list("channel", flat=True)) == {"email", "chat"}


@pytest.mark.django_db(transaction=True)
def test_each_channel_must_have_its_own_fields(
    chat: list[str], proposal: Version, reviewer: User
) -> None:
    hook = GroupWebhook.objects.get()
    for row in (
        Notification(kind=NotificationKind.DECISION, version=proposal),  # to nobody
        WebhookPost(kind=WebhookPostKind.REVIEW_REMINDER, version=proposal, recipient=reviewer),
        Notification(
            kind=NotificationKind.DECISION, version=proposal, recipient=reviewer, webhook=hook
        ),
        Delivery(channel="fax", kind=NotificationKind.DECISION, version=proposal),
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            row.save()


@pytest.mark.usefixtures("eager_tasks")
def test_the_one_task_sends_an_email_row_and_a_chat_row(
    proposal: Version, reviewer: User, chat: list[str]
) -> None:
    [email] = Notification.objects.filter(version=proposal)
    [post] = WebhookPost.objects.filter(version=proposal)

    assert delivery.deliver.delay(email.pk).result == NotificationStatus.SENT
    assert delivery.deliver.delay(post.pk).result == NotificationStatus.SENT

    [message] = django_mail.outbox
    assert message.to == [reviewer.email]
    assert message.extra_headers["Message-ID"] == outbox.message_id([email.pk])
    assert chat == [post.text]
    assert set(Delivery.objects.values_list("status", flat=True)) == {NotificationStatus.SENT}
    assert delivery.deliver.delay(post.pk + 1000).result == "gone"


@pytest.mark.usefixtures("eager_tasks")
def test_the_one_sweep_reads_the_one_table_once_per_channel(
    proposal: Version, chat: list[str], settings: Any
) -> None:
    settings.QUIRE_OUTBOX_SWEEP_GRACE_SECONDS = 0
    with CaptureQueriesContext(connection) as queries:
        # Both rows are owed: the email to the reviewer and the chat's post, each sent once.
        assert delivery.sweep() == 2
    swept = [q["sql"] for q in queries if "reviews_delivery" in q["sql"]]
    assert swept and not any("reviews_notification" in q["sql"] for q in queries)
    assert len(django_mail.outbox) == 1 and len(chat) == 1
    assert delivery.sweep() == 0


def _at(migration: tuple[str, str]) -> Any:
    executor = MigrationExecutor(connection)
    executor.migrate([migration])
    return executor.loader.project_state([migration]).apps


@pytest.fixture
def back_to_the_leaves() -> Iterator[None]:
    """Whatever the test does, the database ends with every migration applied."""
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_tasks", "back_to_the_leaves")
def test_the_migration_moves_both_tables_into_one_keeping_the_email_ids(
    chat: list[str], proposal: Version, reviewer: User
) -> None:
    hook = GroupWebhook.objects.get()
    Delivery.objects.all().delete()
    chat.clear()

    old = _at(BEFORE)
    emails = old.get_model("reviews", "Notification").objects
    posts = old.get_model("reviews", "WebhookPost").objects
    sent = emails.create(
        kind="decision",
        version_id=proposal.pk,
        recipient_id=reviewer.pk,
        status="sent",
        message_id="<quire-notification-1.1@quire.example.com>",
    )
    owed = emails.create(kind="review_requested", version_id=proposal.pk, recipient_id=reviewer.pk)
    # The table had given out a higher id, to a row deleted since: nothing gets it again.
    emails.create(kind="decision", version_id=proposal.pk, recipient_id=reviewer.pk).delete()
    highest = emails.create(kind="decision", version_id=proposal.pk, recipient_id=reviewer.pk)
    highest_id = highest.pk
    highest.delete()
    first = posts.create(
        webhook_id=hook.pk, version_id=proposal.pk, kind="review_requested", text="One"
    )
    second = posts.create(
        webhook_id=hook.pk, version_id=proposal.pk, kind="review_reminder", text="Two"
    )
    old_emails = list(emails.order_by("pk").values())
    old_posts = list(posts.order_by("pk").values())

    _at(AFTER)
    assert list(
        Notification.objects.order_by("pk").values_list(
            "pk", "kind", "status", "message_id", "created_at"
        )
    ) == [
        (row["id"], row["kind"], row["status"], row["message_id"], row["created_at"])
        for row in old_emails
    ]
    assert [row.pk for row in Notification.objects.order_by("pk")] == [sent.pk, owed.pk]
    moved = list(WebhookPost.objects.order_by("pk"))
    assert [
        (row.legacy_id, row.text, row.kind, row.webhook_id, row.created_at) for row in moved
    ] == [
        (row["id"], row["text"], row["kind"], row["webhook_id"], row["created_at"])
        for row in old_posts
    ]
    assert min(row.pk for row in moved) > highest_id
    new = Notification.objects.create(kind="decision", version=proposal, recipient=reviewer)
    assert new.pk > max(row.pk for row in moved)
    new.delete()

    # A task queued before the deploy under the old name and the post's old id still sends it
    # (with what its chat is owed besides).
    assert webhooks.deliver_webhook_post.delay(first.pk).result == NotificationStatus.SENT
    assert len(chat) == 1 and "One" in chat[0] and "Two" in chat[0]
    assert set(WebhookPost.objects.values_list("status", flat=True)) == {"sent"}

    # Back: each row to its table, under the id it had.
    old = _at(BEFORE)
    emails = old.get_model("reviews", "Notification").objects
    posts = old.get_model("reviews", "WebhookPost").objects
    assert list(emails.order_by("pk").values_list("pk", "message_id")) == [
        (row["id"], row["message_id"]) for row in old_emails
    ]
    assert list(posts.order_by("pk").values_list("pk", "text", "status")) == [
        (first.pk, "One", "sent"),
        (second.pk, "Two", "sent"),
    ]


@pytest.mark.usefixtures("eager_tasks")
def test_the_admin_lists_every_channel_in_one_list_and_sends_either_again(
    proposal: Version, admin_user: User, chat: list[str], client: Any
) -> None:
    [email] = Notification.objects.filter(version=proposal)
    [post] = WebhookPost.objects.filter(version=proposal)
    Delivery.objects.update(status=NotificationStatus.FAILED, last_error="SMTP or chat down")
    client.force_login(admin_user)

    index = client.get("/admin/reviews/").content.decode()
    assert "/admin/reviews/delivery/" in index
    assert "/admin/reviews/notification/" not in index
    assert "/admin/reviews/webhookpost/" not in index
    listing = client.get("/admin/reviews/delivery/").content.decode()
    assert _row(email) in listing and _row(post) in listing
    chats = client.get("/admin/reviews/delivery/?channel__exact=chat").content.decode()
    assert _row(email) not in chats and _row(post) in chats

    client.post(
        "/admin/reviews/delivery/",
        {"action": "send_again", "_selected_action": [email.pk, post.pk]},
    )
    assert len(django_mail.outbox) == 1 and chat == [post.text]
    assert set(Delivery.objects.values_list("status", flat=True)) == {NotificationStatus.SENT}


def _row(row: Delivery) -> str:
    """A row's checkbox in the admin's list."""
    return f'name="_selected_action" value="{row.pk}"'
