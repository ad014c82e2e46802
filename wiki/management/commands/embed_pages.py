"""`python manage.py embed_pages`: chunk and embed every page whose chunks are missing, stale
or made by another model. Resumable: each batch is committed, and a second run goes on
where the first stopped."""

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from wiki import semantic


class Command(BaseCommand):
    help = (
        "Embed the pages that need it for semantic search (new, changed, or embedded by "
        "another model than QUIRE_EMBEDDING_MODEL), with a progress bar; safe to stop and rerun."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=32, help="pages embedded per call of the model (32)"
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        model = semantic.embedder()
        if model is None:
            self.stderr.write(
                "No embedding model (QUIRE_EMBEDDING_MODEL is 'none' or did not load): "
                "only the chunks are written, and search stays keyword-only."
            )
        if semantic.enable_pgvector_if_missing():
            self.stdout.write("pgvector is now in use for the vectors.")
        name = model.name if model is not None else ""
        todo = list(semantic.pages_to_embed(name).order_by("pk").values_list("pk", flat=True))
        batch = max(1, options["batch"])
        began = time.monotonic()
        written = 0
        with tqdm(
            total=len(todo), unit="page", disable=options["quiet"], file=self.stderr
        ) as progress:
            for start in range(0, len(todo), batch):
                ids = todo[start : start + batch]
                written += semantic.embed_pages(ids, model=model)
                progress.update(len(ids))
        took = time.monotonic() - began
        rate = f", {written / took:.1f} pages/s" if written and took > 0 else ""
        self.stdout.write(
            f"embedded {written} page{'' if written == 1 else 's'} with "
            f"{name or 'no model'} in {took:.1f} s{rate}"
        )
