"""`python manage.py rebuild_search_index`: rebuild the full-text index from live versions."""

from typing import Any

from django.core.management.base import BaseCommand

from wiki.search import reindex_all


class Command(BaseCommand):
    help = "Rebuild the search index from the live version of every page that is not archived."

    def handle(self, *args: Any, **options: Any) -> None:
        count = reindex_all()
        self.stdout.write(f"indexed {count} page{'' if count == 1 else 's'}")
