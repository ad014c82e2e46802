"""`python manage.py revoke_agent NAME`: switch an agent off; its token stops working at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import services
from agents.models import Agent
from wiki.errors import QuireError


class Command(BaseCommand):
    help = "Revoke an agent: its token stops working at once (rotate_agent_token re-enables it)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        agent = Agent.objects.filter(name=options["name"]).first()
        if agent is None:
            raise CommandError(f"there is no agent named {options['name']!r}.")
        try:
            services.agent_revoke(actor=None, agent=agent)
        except QuireError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"Revoked {agent.name}; its token no longer works.")
