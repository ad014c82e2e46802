"""What emails and chat posts Quire still owes, and, for an operator, settling them by hand.

After restoring a backup taken while notifications were pending, the restored rows would be
sent again (the sweep sends what is pending): mark them sent, or drop them, before starting
the workers (docs/operating.md, "Restoring a backup").
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reviews import delivery
from reviews.models import DeliveryChannel

OUTBOXES = (("email(s)", DeliveryChannel.EMAIL), ("chat post(s)", DeliveryChannel.CHAT))


class Command(BaseCommand):
    help = (
        "List the emails and chat posts still owed; with --mark-sent or --drop, settle them "
        "so that nobody is sent them (e.g. after restoring a backup)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        action = parser.add_mutually_exclusive_group()
        action.add_argument(
            "--mark-sent", action="store_true", help="Mark them sent: they are not sent."
        )
        action.add_argument("--drop", action="store_true", help="Mark them skipped (dropped).")
        parser.add_argument(
            "--before",
            help="Only those made before this time (ISO 8601, e.g. 2026-12-07T18:00:00Z).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        before = _moment(options["before"])
        settle = options["mark_sent"] or options["drop"]
        for what, channel in OUTBOXES:
            if not settle:
                count = delivery.owed(channel, before=before).count()
                self.stdout.write(f"{count} {what} pending")
                continue
            count = delivery.settle_owed(channel, sent=options["mark_sent"], before=before)
            done = "marked sent" if options["mark_sent"] else "dropped"
            self.stdout.write(f"{count} {what} {done}")


def _moment(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        moment = parse_datetime(value)
    except ValueError:
        moment = None
    if moment is None:
        raise CommandError(
            f"--before {value!r} is not a time: write it as ISO 8601, e.g. 2026-12-07T18:00:00Z."
        )
    return moment if timezone.is_aware(moment) else timezone.make_aware(moment)
