"""One delivery row for every channel (issue 50): the emails (`Notification`) and the chat
posts (`WebhookPost`) move into one table, `Delivery`, of which both become proxies.

The emails keep their ids: a Message-ID (reviews.outbox.message_id) and the tasks queued
before the deploy (`reviews.tasks.deliver_notification`) name them. The chat posts are
renumbered after every id the emails ever used (the old post's id is kept in `legacy_id`, which
the old task name `reviews.tasks.deliver_webhook_post` still reads), and the table's next id
comes after them all, so a new email never gets the id, nor the Message-ID, of an email sent
before. Rows are copied by SQL (INSERT ... SELECT), their times unchanged.

Reversible: going back copies the emails to their table under their ids, and the chat posts
under their old ids (those made since, after them); each table then counts on from the last id
the one table used.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

import reviews.models

SHARED = (
    "kind",
    "version_id",
    "status",
    "attempts",
    "last_error",
    "created_at",
    "last_attempt_at",
    "sent_at",
)
EMAIL = ("recipient_id", "delivery", "not_before", "message_id")
CHAT = ("webhook_id", "text")


def _used_up_to(connection, table: str) -> int:
    """The highest id `table` has ever given out (its sequence), or its highest id."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MAX(id) FROM {connection.ops.quote_name(table)}")
        used = cursor.fetchone()[0] or 0
        if connection.vendor == "postgresql":
            cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            sequence = cursor.fetchone()[0]
            if sequence:
                cursor.execute(f"SELECT last_value, is_called FROM {sequence}")
                last, called = cursor.fetchone()
                used = max(used, last if called else last - 1)
        elif connection.vendor == "sqlite":
            cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
            row = cursor.fetchone()
            used = max(used, row[0] if row else 0)
    return int(used)


def _count_on_from(connection, table: str, used: int) -> None:
    """Make `table` give out ids after `used` (and after its highest)."""
    used = max(used, _used_up_to(connection, table))
    if used < 1:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s, true)", [table, used]
            )
        elif connection.vendor == "sqlite":
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [used, table])
            if cursor.rowcount == 0:
                cursor.execute(
                    "INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, used]
                )


def _copy(connection, source: str, target: str, columns: dict[str, str], where: str = "") -> None:
    """INSERT INTO target (keys) SELECT values FROM source [WHERE ...]."""
    quote = connection.ops.quote_name
    into = ", ".join(quote(column) for column in columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(target)} ({into}) "
            f"SELECT {', '.join(columns.values())} FROM {quote(source)} {where}"
        )


def _tables(apps):
    return [
        apps.get_model("reviews", name)._meta.db_table
        for name in ("Delivery", "Notification", "WebhookPost")
    ]


def one_table(apps, schema_editor) -> None:
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    delivery, emails, posts = _tables(apps)
    shared = {column: quote(column) for column in SHARED}
    _copy(
        connection,
        emails,
        delivery,
        {"id": "id", "channel": "'email'", **shared, **{c: quote(c) for c in EMAIL}, "text": "''"},
    )
    after = _used_up_to(connection, emails)
    _copy(
        connection,
        posts,
        delivery,
        {
            "id": f"id + {after}",
            "legacy_id": "id",
            "channel": "'chat'",
            **shared,
            **{c: quote(c) for c in CHAT},
            "delivery": "'immediate'",
            "message_id": "''",
        },
    )
    _count_on_from(connection, delivery, after + _used_up_to(connection, posts))


def two_tables(apps, schema_editor) -> None:
    connection = schema_editor.connection
    quote = connection.ops.quote_name
    delivery, emails, posts = _tables(apps)
    shared = {column: quote(column) for column in SHARED}
    _copy(
        connection,
        delivery,
        emails,
        {"id": "id", **shared, **{c: quote(c) for c in EMAIL}},
        "WHERE channel = 'email'",
    )
    _copy(
        connection,
        delivery,
        posts,
        {"id": "COALESCE(legacy_id, id)", **shared, **{c: quote(c) for c in CHAT}},
        "WHERE channel = 'chat'",
    )
    used = _used_up_to(connection, delivery)
    _count_on_from(connection, emails, used)
    _count_on_from(connection, posts, used)


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0019_alter_notification_kind"),
        ("wiki", "0025_searchdocument_fingerprint"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Delivery",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "channel",
                    models.CharField(
                        choices=[("email", "Email"), ("chat", "Chat post")], max_length=5
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("review_requested", "Review requested"),
                            ("decision", "Decision"),
                            ("changes_requested", "Changes requested"),
                            ("nobody_decides", "Nobody can decide"),
                            ("review_asked", "Asked by name"),
                            ("review_reminder", "Reminder"),
                            ("review_withdrawn", "No longer waits on you"),
                            ("review_escalated", "Escalated to the admins"),
                        ],
                        max_length=20,
                    ),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending"),
                            ("sending", "Sending"),
                            ("sent", "Sent"),
                            ("skipped", "Skipped"),
                            ("failed", "Failed"),
                            ("refused", "Refused"),
                        ],
                        default="pending",
                        max_length=10,
                    ),
                ),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("last_error", models.TextField(blank=True, default="")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("last_attempt_at", models.DateTimeField(blank=True, null=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                ("not_before", models.DateTimeField(blank=True, null=True)),
                (
                    "delivery",
                    models.CharField(
                        choices=[("immediate", "Immediately"), ("digest", "In the daily digest")],
                        default="immediate",
                        max_length=10,
                    ),
                ),
                ("message_id", models.CharField(blank=True, default="", max_length=200)),
                ("text", models.TextField(blank=True, default="")),
                ("legacy_id", models.PositiveIntegerField(blank=True, db_index=True, null=True)),
                (
                    "recipient",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "version",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="notifications",
                        to="wiki.version",
                    ),
                ),
                (
                    "webhook",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="posts",
                        to="reviews.groupwebhook",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "deliveries",
                "ordering": ["-created_at", "-id"],
            },
        ),
        migrations.AddIndex(
            model_name="delivery",
            index=models.Index(
                fields=["status", "channel", "delivery"], name="delivery_status_channel"
            ),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.CheckConstraint(
                condition=models.Q(("channel__in", ["email", "chat"])),
                name="delivery_channel_known",
            ),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("channel", "chat"),
                    models.Q(
                        ("legacy_id__isnull", True),
                        ("recipient__isnull", False),
                        ("webhook__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="delivery_email_has_a_recipient",
            ),
        ),
        migrations.AddConstraint(
            model_name="delivery",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("channel", "email"), ("recipient__isnull", True), _connector="OR"
                ),
                name="delivery_chat_post_has_no_recipient",
            ),
        ),
        migrations.RunPython(one_table, two_tables),
        migrations.DeleteModel(
            name="Notification",
        ),
        migrations.DeleteModel(
            name="WebhookPost",
        ),
        migrations.CreateModel(
            name="Notification",
            fields=[],
            options={
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=(reviews.models.ChannelRow, "reviews.delivery"),
        ),
        migrations.CreateModel(
            name="WebhookPost",
            fields=[],
            options={
                "proxy": True,
                "indexes": [],
                "constraints": [],
            },
            bases=(reviews.models.ChannelRow, "reviews.delivery"),
        ),
    ]
