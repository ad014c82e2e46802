"""`python manage.py delete_unused_oauth_clients [--hours N]`: what the hourly task does."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from connect import services


class Command(BaseCommand):
    help = "Delete registered OAuth clients that never completed a connection."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--hours",
            type=int,
            default=settings.QUIRE_OAUTH_UNUSED_CLIENT_HOURS,
            help="Only clients registered more than this many hours ago.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        count = services.clients_delete_unused(older_than=timedelta(hours=options["hours"]))
        self.stdout.write(f"deleted {count} unused client(s)")
