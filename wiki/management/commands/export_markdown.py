"""`manage.py export_markdown DIR`: see wiki/exporter.py."""

from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from wiki import exporter


class Command(BaseCommand):
    help = (
        "Write every live page as markdown with YAML frontmatter into DIR, one file per page, "
        "folders following the page tree. Existing files with the same names are overwritten; "
        "other files are left alone. Import the folder again with import_markdown."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("directory", metavar="DIR", help="the folder to write into")

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(options["directory"])
        if root.exists() and not root.is_dir():
            raise CommandError(f"{root} is a file; give a folder to export into.")
        try:
            root.mkdir(parents=True, exist_ok=True)
            count = exporter.export_markdown(root)
        except OSError as error:
            raise CommandError(f"Could not write to {root}: {error.strerror}.") from None
        self.stdout.write(f"exported {count} pages to {root}")
