"""`python manage.py revoke_agent NAME`: switch an agent off; its token stops working at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import selectors, services
from core.actors import SystemActor
from core.errors import QuireError


class Command(BaseCommand):
    help = "Revoke an agent: its token stops working at once (rotate_agent_token re-enables it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            agent = selectors.agent_by_name(options["name"])
            services.agent_revoke(actor=SystemActor("revoke_agent command"), agent=agent)
        except QuireError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Revoked {agent.name}; its token no longer works.")
