"""Send the daily digest to reviewers who asked for one (beat runs it daily; cron can too)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reviews import outbox, tasks


class Command(BaseCommand):
    help = (
        "Email each reviewer whose preference is 'daily' one digest of the proposals queued "
        "for them, and re-send the immediate notifications and chat posts still owed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-retry",
            action="store_true",
            help="Only send digests; leave what is still owed to the retry task.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        digests = outbox.send_digests()
        retried = 0 if options["no_retry"] else tasks.retry_pending_notifications()
        self.stdout.write(
            f"sent {digests} digest(s); queued {retried} owed notification(s) and chat post(s)"
        )
