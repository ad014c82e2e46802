"""Send the daily digest to reviewers who asked for one (beat runs it daily; cron can too)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from reviews import outbox


class Command(BaseCommand):
    help = (
        "Email each reviewer whose preference is 'daily' one digest of the proposals queued "
        "for them, and re-send immediate notifications that are still owed."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--no-retry",
            action="store_true",
            help="Only send digests; leave owed immediate notifications to the retry task.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        digests = outbox.send_digests()
        retried = 0 if options["no_retry"] else outbox.retry_pending()
        self.stdout.write(f"sent {digests} digest(s); queued {retried} owed notification(s)")
