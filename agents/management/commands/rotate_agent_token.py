"""`python manage.py rotate_agent_token NAME`: a new token; the old one stops working at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import selectors, services
from core.actors import SystemActor
from core.errors import QuireError


class Command(BaseCommand):
    help = "Give an agent a new token (printed alone on the last line); the old one stops working."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            agent = selectors.agent_by_name(options["name"])
            token = services.agent_token_rotate(
                actor=SystemActor("rotate_agent_token command"), agent=agent
            )
        except QuireError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"New token for {agent.name}; the old one no longer works. It is shown only once."
        )
        self.stdout.write(token)
