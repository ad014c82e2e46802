"""Where vectors live (pgvector, sqlite-vec or float32 bytes) and how pages' chunks are
embedded and written there (`embed_pages`)."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, OuterRef

from wiki.models import Page, PageChunk
from wiki.semantic.chunking import Chunk, embedding_text, page_chunks
from wiki.semantic.encoders import Embedder, embedder

log = logging.getLogger(__name__)


# pgvector's column has a fixed size: the default model's. A model of another size is
# searched exactly over its stored bytes.
PGVECTOR_DIMENSIONS = 384


# The vector is kept in its row (MAIN): pgvector's default, EXTERNAL, stores every vector in
# the TOAST table, a fetch more for each chunk a small set's search reads (migration 0019).
PGVECTOR_COLUMN_SQL = f"""
ALTER TABLE wiki_pagechunk ADD COLUMN IF NOT EXISTS embedding vector({PGVECTOR_DIMENSIONS});
ALTER TABLE wiki_pagechunk ALTER COLUMN embedding SET STORAGE MAIN;
CREATE INDEX IF NOT EXISTS wiki_pagechunk_embedding_hnsw
    ON wiki_pagechunk USING hnsw (embedding vector_cosine_ops);
"""


def enable_pgvector(conn: BaseDatabaseWrapper) -> bool:
    """Create the pgvector extension, column and index if this PostgreSQL has pgvector."""
    if conn.vendor != "postgresql":
        return False
    with conn.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if cursor.fetchone() is None:
            return False
        cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        cursor.execute(PGVECTOR_COLUMN_SQL)
    _store.cache_clear()
    return True


def enable_pgvector_if_missing() -> bool:
    """Use pgvector when it was installed after the migrations ran; True if it now is."""
    if connection.vendor != "postgresql" or vector_store() == "pgvector":
        return False
    if not enable_pgvector(connection) or vector_store() != "pgvector":
        return False
    # Chunks embedded before have their vectors as bytes only: embed them again.
    PageChunk.objects.exclude(model="").update(model="")
    return True


@cache
def _store(alias: str, vendor: str) -> str:
    with connection.cursor() as cursor:
        if vendor == "postgresql":
            cursor.execute(
                "SELECT 1 FROM information_schema.columns WHERE table_name = 'wiki_pagechunk' "
                "AND column_name = 'embedding' AND table_schema = current_schema()"
            )
            return "pgvector" if cursor.fetchone() is not None else "exact"
        if vendor == "sqlite":
            try:
                cursor.execute("SELECT vec_version()")
                return "sqlite-vec"
            except Exception:  # noqa: BLE001 - the function is missing: no extension
                return "exact"
    return "exact"


def vector_store() -> str:
    """ "pgvector", "sqlite-vec" or "exact" (NumPy over the stored vectors)."""
    return _store(connection.alias, connection.vendor)


def load_sqlite_vec(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """On SQLite, load sqlite-vec into each new connection when Python and the package allow."""
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    if not hasattr(raw, "enable_load_extension"):
        return
    try:
        import sqlite_vec  # type: ignore[import-not-found]

        raw.enable_load_extension(True)
        sqlite_vec.load(raw)
        raw.enable_load_extension(False)
    except (ImportError, OSError, AttributeError) as exc:
        log.info("sqlite-vec not loaded (%s): exact vector search", exc)


def status() -> dict[str, str]:
    """For /healthz: the model (or "none": keyword-only) and where vectors are searched."""
    model = embedder()
    if model is None:
        return {"model": "none", "mode": "keyword-only"}
    try:
        vectors = vectors_for(model)
    except DatabaseError:
        vectors = "unknown (database unreachable)"
    return {"model": model.name, "mode": "hybrid", "vectors": vectors}


def vectors_for(model: Embedder) -> str:
    if settings.QUIRE_VECTOR_SEARCH == "exact":
        return "exact"
    store = vector_store()
    if store == "pgvector" and model.dimensions != PGVECTOR_DIMENSIONS:
        return "exact"
    return store


def to_pgvector(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector.tolist()) + "]"


def pages_to_embed(model_name: str) -> Any:
    """Readable pages whose chunks are missing, stale, or made by another model."""
    current = PageChunk.objects.filter(
        page=OuterRef("pk"), version=OuterRef("live_version"), model=model_name
    )
    return Page.objects.readable().filter(~Exists(current))


def embed_pages(page_ids: Iterable[int], *, model: Embedder | None = None) -> int:
    """Cut the live version of each page into chunks and embed them, skipping pages whose
    chunks are current; returns how many pages were written.

    The model runs outside any transaction; a page's rows are replaced only if it still
    shows the version that was embedded (a newer one queues its own run). On PostgreSQL
    each page is claimed first (an advisory lock), so that two runs at once (two
    `embed_pages` commands, or one and the task) never embed the same page twice: the
    second skips what the first holds, and finds it current afterwards.
    """
    with claimed(list(page_ids)) as mine:
        return _embed_claimed(mine, model or embedder())


# Advisory locks of page claims: this key in the high 32 bits, the page id in the low ones.
CLAIM_KEY = 0x51554952  # "QUIR"


@contextmanager
def claimed(page_ids: list[int]) -> Iterator[list[int]]:
    """The ids among `page_ids` that no other session is embedding, held until the end."""
    if connection.vendor != "postgresql" or not page_ids:
        yield page_ids
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM unnest(%s::bigint[]) AS id "
            "WHERE pg_try_advisory_lock((%s::bigint << 32) + id)",
            [page_ids, CLAIM_KEY],
        )
        mine = [row[0] for row in cursor.fetchall()]
    try:
        yield mine
    finally:
        if mine:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_unlock((%s::bigint << 32) + id) "
                    "FROM unnest(%s::bigint[]) AS id",
                    [CLAIM_KEY, mine],
                )


def _embed_claimed(page_ids: list[int], model: Embedder | None) -> int:
    model_name = model.name if model is not None else ""
    pages = list(
        pages_to_embed(model_name)
        .filter(pk__in=page_ids)
        .select_related("live_version")
        .only("pk", "live_version__id", "live_version__title", "live_version__body")
        .order_by("pk")
    )
    cut = []
    for page in pages:
        version = page.live_version
        assert version is not None
        cut.append((page.pk, version.pk, version.title, page_chunks(version.title, version.body)))
    texts = [embedding_text(title, chunk) for _, _, title, chunks in cut for chunk in chunks]
    hashes = [text_hash(text) for text in texts]
    vectors = None if model is None else _vectors(model, texts, hashes)
    return _write_chunks(cut, hashes, vectors, model, model_name)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _vectors(model: Embedder, texts: list[str], hashes: list[str]) -> np.ndarray:
    """The vectors of `texts`: those this model embedded before (same text hash) are read
    back, and each other distinct text is embedded once."""
    known: dict[str, np.ndarray] = {}
    wanted = sorted(set(hashes))
    for start in range(0, len(wanted), 500):
        rows = PageChunk.objects.filter(
            model=model.name, text_hash__in=wanted[start : start + 500], vector__isnull=False
        ).values_list("text_hash", "vector")
        for digest, stored in rows:
            assert stored is not None
            vector = np.frombuffer(bytes(stored), dtype=np.float32)
            if vector.shape == (model.dimensions,):
                known[digest] = vector
    missing = {digest: text for digest, text in zip(hashes, texts, strict=True)}
    missing = {digest: text for digest, text in missing.items() if digest not in known}
    if missing:
        known.update(zip(missing, model.passages(list(missing.values())), strict=True))
    if not hashes:
        return np.zeros((0, model.dimensions), dtype=np.float32)
    return np.stack([known[digest] for digest in hashes]).astype(np.float32)


def _write_chunks(
    cut: list[tuple[int, int, str, list[Chunk]]],
    hashes: list[str],
    vectors: np.ndarray | None,
    model: Embedder | None,
    model_name: str,
) -> int:
    """Replace the chunks of each page of `cut` (page id, version id, title, its chunks, in
    the order of `hashes` and `vectors`) that still shows that version, in one transaction
    for all of them: a page's rows are locked (in the tree's lock order, by path) so that a
    newer version cannot go live between the check and the write. Returns the pages written."""
    # The bytes are always kept, so that exact search works whatever is installed.
    use_pgvector = (
        model is not None
        and model.dimensions == PGVECTOR_DIMENSIONS
        and vector_store() == "pgvector"
    )
    with transaction.atomic():
        live = set(
            Page.objects.readable()
            .select_for_update()
            .filter(pk__in=[page_id for page_id, _, _, _ in cut])
            .order_by("path")
            .values_list("pk", "live_version_id")
        )
        rows: list[PageChunk] = []
        row_vectors: list[np.ndarray] = []
        written: list[int] = []
        start = 0
        for page_id, version_id, _, chunks in cut:
            first, start = start, start + len(chunks)
            if (page_id, version_id) not in live:
                continue
            written.append(page_id)
            for i, chunk in enumerate(chunks, start=first):
                rows.append(
                    PageChunk(
                        page_id=page_id,
                        version_id=version_id,
                        position=chunk.position,
                        heading=chunk.heading or "",
                        text=chunk.text,
                        model=model_name,
                        vector=None if vectors is None else vectors[i].tobytes(),
                        text_hash=hashes[i] if vectors is not None else "",
                    )
                )
                if vectors is not None:
                    row_vectors.append(vectors[i])
        if not written:
            return 0
        PageChunk.objects.filter(page_id__in=written).delete()
        created = PageChunk.objects.bulk_create(rows)
        if use_pgvector and row_vectors:
            with connection.cursor() as cursor:
                cursor.executemany(
                    "UPDATE wiki_pagechunk SET embedding = %s::vector WHERE id = %s",
                    [
                        (to_pgvector(vector), row.pk)
                        for vector, row in zip(row_vectors, created, strict=True)
                    ],
                )
    return len(written)


def remove_page_chunks(page_id: int) -> None:
    PageChunk.objects.filter(page_id=page_id).delete()
