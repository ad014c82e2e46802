"""`python manage.py create_agent NAME`: an agent, its page set, and its token (shown once)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import services
from core.actors import SystemActor
from core.errors import QuireError
from wiki.models import Page


class Command(BaseCommand):
    help = (
        "Create an agent and print its token on the last line (it is shown only once). "
        "Give it pages with --page PAGE_ID (repeatable) or today's top-level pages with "
        "--all-pages."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--can-edit", action="store_true", help="Let it propose new pages and edits."
        )
        parser.add_argument("--owner", help="Username that gets the agent's decision emails.")
        pages = parser.add_mutually_exclusive_group()
        pages.add_argument(
            "--all-pages",
            action="store_true",
            help="Put every top-level page there is now in its set, with everything under "
            "them; a top-level page made later is not in it until you add it.",
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
            owner = User.objects.filter(username=options["owner"]).first()
            if owner is None:
                raise CommandError(f"there is no user named {options['owner']!r}.")
        if options["all_pages"]:
            pages = list(Page.objects.filter(parent__isnull=True, archived=False).order_by("path"))
        else:
            found = Page.objects.in_bulk(options["page"], field_name="public_id")
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
                pages=pages,
            )
        except QuireError as error:
            raise CommandError(error.message) from None
        rights = "may propose edits" if agent.can_edit_pages else "read-only"
        self.stdout.write(
            f"Created agent {agent.name} ({rights}) with {len(pages)} page(s) in its set. "
            "Its token follows; it is shown only this once."
        )
        self.stdout.write(token)
