"""`manage.py import_markdown DIR [--publish] [--author USERNAME]`: see content/importer.py."""

from __future__ import annotations

import sys
import time
from argparse import ArgumentParser
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from content import importer
from wiki import permissions
from wiki.selectors import first_superuser, person_by_username


def _author(username: str | None, *, publish: bool) -> User:
    if username:
        named = person_by_username(username)
        if named is None:
            raise CommandError(f"There is no user named {username!r}; check --author.")
        user = named
    else:
        found = first_superuser()
        if found is None:
            raise CommandError(
                "No superuser exists to author the import; create one with "
                "`manage.py createsuperuser` or pass --author USERNAME."
            )
        user = found
    if not user.is_active:
        raise CommandError(f"The user {user.username!r} is inactive; choose another --author.")
    # The pages go in at the top level: the policy's answer there (a section's own grants are
    # asked again for each page by the service).
    refusal = permissions.refusal(user, permissions.PUBLISH, None)
    if publish and refusal is not None:
        raise CommandError(
            f"{user.username!r} cannot publish: {refusal} Or choose another --author, or "
            "import without --publish so the pages wait in review."
        )
    return user


class Command(BaseCommand):
    help = (
        "Import a folder of markdown files as pages. Folders become parent pages; re-importing "
        "the same folder updates only what changed. Without --publish every new or changed "
        "page waits in review."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("directory", metavar="DIR", help="the folder of markdown files")
        parser.add_argument(
            "--publish",
            action="store_true",
            help="make the imported content live at once (the author must be an editor)",
        )
        parser.add_argument(
            "--source-name",
            metavar="NAME",
            help="the name that keys this folder's pages (default: the folder's own name); "
            "importing again under the same name updates those pages",
        )
        parser.add_argument(
            "--author",
            metavar="USERNAME",
            help="who authors the versions (default: the first superuser)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["directory"])
        if not root.is_dir():
            raise CommandError(f"{root} is not a folder; give the folder that holds the files.")
        publish: bool = options["publish"]
        actor = _author(options["author"], publish=publish)
        started = time.monotonic()

        def progress(sources: list[importer.SourcePage]) -> Iterable[importer.SourcePage]:
            return tqdm(sources, desc="importing", unit="page", file=sys.stderr, disable=None)

        try:
            source_name = importer.source_name_for(root, options["source_name"])
        except ValueError as error:
            raise CommandError(str(error)) from None
        report = importer.import_markdown(
            root, actor=actor, publish=publish, source_name=source_name, progress=progress
        )
        for path, reason in report.skipped:
            self.stderr.write(f"skipped {path}: {reason}")
        self.stdout.write(report.summary())
        if report.skipped:
            count = len(report.skipped)
            self.stderr.write(f"{count} file{'' if count == 1 else 's'} skipped")
        if options["verbosity"] > 1:
            self.stdout.write(f"took {time.monotonic() - started:.1f} s")
