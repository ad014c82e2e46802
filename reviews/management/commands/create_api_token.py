"""`manage.py create_api_token USERNAME`: a new REST API key, alone on the last line."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.actors import SystemActor
from reviews.api_tokens import api_token_create
from wiki.selectors import person_by_username


class Command(BaseCommand):
    help = (
        "Create a REST API key for a user and print it once (only its hash is stored). "
        "Revoke keys in the Django admin under API tokens."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")

    def handle(self, *args: Any, **options: Any) -> None:
        user = person_by_username(options["username"])
        if user is None:
            raise CommandError(
                f"there is no user named {options['username']!r}; create one with "
                "'python manage.py createsuperuser' or in the Django admin."
            )
        if not user.is_active:
            raise CommandError(f"{user.get_username()} is inactive; activate the account first.")
        key = api_token_create(actor=SystemActor("create_api_token command"), user=user)
        self.stdout.write(
            f"API key for {user.get_username()}, shown once; "
            "send it as 'Authorization: Token <key>':"
        )
        self.stdout.write(key)
