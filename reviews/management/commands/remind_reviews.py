"""Remind about proposals waiting past their due time now (the beat does it every hour)."""

from typing import Any

from django.core.management.base import BaseCommand

from reviews import asking


class Command(BaseCommand):
    help = "Remind deciders (then admins) about proposals waiting past QUIRE_REVIEW_DUE_HOURS."

    def handle(self, *args: Any, **options: Any) -> None:
        counts = asking.reviews_remind()
        self.stdout.write(
            f"reminded deciders about {counts.get('deciders', 0)} proposal(s), "
            f"admins about {counts.get('admins', 0)}"
        )
