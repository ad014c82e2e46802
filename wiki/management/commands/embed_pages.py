"""`python manage.py embed_pages`: chunk and embed every page whose chunks are missing, stale
or made by another model. Resumable: each batch is committed, and a second run goes on
where the first stopped. Several worker processes, one model thread each, share the batches
(`--processes`, the CPU count by default); two runs at once never embed a page twice
(wiki.semantic.claimed)."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, connections
from tqdm import tqdm


class Command(BaseCommand):
    help = (
        "Embed the pages that need it for semantic search (new, changed, or embedded by "
        "another model than QUIRE_EMBEDDING_MODEL), with a progress bar; safe to stop and rerun."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--batch", type=int, default=32, help="pages embedded per call of the model (32)"
        )
        parser.add_argument(
            "--processes",
            type=int,
            default=os.cpu_count() or 1,
            help="worker processes, each running the model on one thread (the CPU count); "
            "1 embeds in this process with QUIRE_EMBEDDING_THREADS threads",
        )
        parser.add_argument("--quiet", action="store_true", help="no progress bar")

    def handle(self, *args: Any, **options: Any) -> None:
        from wiki import semantic

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
        size = max(1, options["batch"])
        batches = [todo[start : start + size] for start in range(0, len(todo), size)]
        # Workers see only committed pages: inside a transaction (a caller's, or a test's)
        # the pages may not be, so they are embedded here.
        processes = max(1, min(options["processes"], len(batches)))
        if connection.in_atomic_block or model is None or _in_memory():
            processes = 1
        began = time.monotonic()
        written = 0
        with tqdm(
            total=len(todo), unit="page", disable=options["quiet"], file=self.stderr
        ) as progress:
            if processes == 1:
                for ids in batches:
                    written += semantic.embed_pages(ids, model=model)
                    progress.update(len(ids))
            else:
                for count, done in _in_workers(batches, processes):
                    written += done
                    progress.update(count)
        took = time.monotonic() - began
        rate = f", {written / took:.1f} pages/s" if written and took > 0 else ""
        workers = f" ({processes} processes)" if processes > 1 else ""
        self.stdout.write(
            f"embedded {written} page{'' if written == 1 else 's'} with "
            f"{name or 'no model'}{workers} in {took:.1f} s{rate}"
        )


def _in_memory() -> bool:
    """An in-memory SQLite database, which other processes cannot open."""
    return connection.vendor == "sqlite" and bool(connection.is_in_memory_db())  # type: ignore[attr-defined]


def _in_workers(batches: list[list[int]], processes: int) -> Iterator[tuple[int, int]]:
    """(pages in the batch, pages written) for each batch, as worker processes finish them."""
    # The workers are new interpreters (spawned, not forked: ONNX Runtime's threads and the
    # database connection do not survive a fork), told which database and model to use;
    # this module imports no model at its top, so that they can load it before Django is set up.
    connections.close_all()
    context = multiprocessing.get_context("spawn")
    setup = (settings.QUIRE_EMBEDDING_MODEL, connection.settings_dict["NAME"])
    with context.Pool(processes, initializer=_start_worker, initargs=setup) as pool:
        yield from pool.imap_unordered(_embed_batch, batches)


def _start_worker(model: str, database: str) -> None:
    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    settings.QUIRE_EMBEDDING_MODEL = model
    # One thread each: the processes share the cores, and a thread waiting for another's
    # work costs more CPU than it saves (29.9 ms a page on 2 threads, 21.6 on 1).
    settings.QUIRE_EMBEDDING_THREADS = 1
    connection.settings_dict["NAME"] = database


def _embed_batch(ids: list[int]) -> tuple[int, int]:
    from wiki import semantic

    return len(ids), semantic.embed_pages(ids)
