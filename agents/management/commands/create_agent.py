"""`python manage.py create_agent NAME`: an agent, its page set, and its token (shown once)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import services
from core.actors import SystemActor
from core.errors import QuireError
from wiki.models import Page
from wiki.selectors import pages_by_public_id, person_by_username


class Command(BaseCommand):
    help = (
        "Create an agent and print its token on the last line (it is shown only once). "
        "Give it pages with --page PAGE_ID (repeatable) or every page, now and later, with "
        "--all-pages."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--can-edit", action="store_true", help="Let it propose new pages and edits."
        )
        parser.add_argument(
            "--connector-tools",
            action="store_true",
            help="Also offer search and fetch, the tools ChatGPT's connectors call.",
        )
        parser.add_argument("--owner", help="Username that gets the agent's decision emails.")
        pages = parser.add_mutually_exclusive_group()
        pages.add_argument(
            "--all-pages",
            action="store_true",
            help="Give it one entry that covers every page, those published later included.",
        )
        pages.add_argument(
            "--page",
            action="append",
            default=[],
            metavar="PAGE_ID",
            help="A page (pg_xxxxxxxx) for its set, with everything under it; repeatable.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = None
        if options["owner"]:
            owner = person_by_username(options["owner"])
            if owner is None:
                raise CommandError(f"there is no user named {options['owner']!r}.")
        pages: list[Page] = []
        if not options["all_pages"]:
            found = pages_by_public_id(options["page"])
            missing = [page_id for page_id in options["page"] if page_id not in found]
            if missing:
                raise CommandError(f"no such page: {', '.join(missing)}.")
            pages = [found[page_id] for page_id in dict.fromkeys(options["page"])]
        try:
            agent, token = services.agent_create(
                actor=SystemActor("create_agent command"),
                name=options["name"],
                description=options["description"],
                owner=owner,
                can_edit_pages=options["can_edit"],
                connector_tools=options["connector_tools"],
                pages=pages,
                all_pages=options["all_pages"],
            )
        except QuireError as error:
            raise CommandError(error.message) from None
        rights = "may propose edits" if agent.can_edit_pages else "read-only"
        given = "every page, now and later," if agent.all_pages else f"{len(pages)} page(s)"
        self.stdout.write(
            f"Created agent {agent.name} ({rights}) with {given} in its set. "
            "Its token follows; it is shown only this once."
        )
        self.stdout.write(token)
