"""What a process loads before its first search, the pool that embeds questions, and the
search's part of /healthz."""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from wiki.language import load_model, read_in_background, wait_for_reading
from wiki.search.fusion import FOREIGN_KEYWORD_WEIGHT
from wiki.semantic import embedder
from wiki.semantic import status as semantic_status

_warming: list[threading.Thread] = []


_fork_safe = False


def warm_up() -> None:
    """Load, on threads of their own, what a process's first search would otherwise load on
    its path: the language model (0.4 s), the embedding model (0.2 s, none when search is
    keyword-only) and the wiki's languages (15 to 20 ms at 116,000 pages). A server process
    calls it as it starts (config/wsgi.py); a search that comes meanwhile waits for what it
    needs rather than loading it a second time, and one that comes after a failed loading
    loads it itself."""
    global _fork_safe
    if not _fork_safe:
        # A server that forks its workers after loading the app (gunicorn --preload, so that
        # they share one copy of the models) must not fork while these threads hold a lock
        # or a connection: a worker forked then hung on its first search. The fork waits
        # for them (a second at most); the workers then start with the models loaded.
        os.register_at_fork(before=wait_for_warm_up)
        _fork_safe = True
    read_in_background()
    thread = threading.Thread(target=_load_models, name="quire-search-warm-up", daemon=True)
    try:
        thread.start()
    except RuntimeError:  # the first search loads them
        return
    _warming.append(thread)


def _load_models() -> None:
    try:
        load_model()
        embedder()
    except Exception:
        logging.getLogger(__name__).warning(
            "Could not load the search's models as the process started; the first search "
            "loads them.",
            exc_info=True,
        )


def wait_for_warm_up() -> None:
    """Wait for what `warm_up` started (for tests)."""
    while _warming:
        _warming.pop().join()
    wait_for_reading()


# Threads that embed queries beside their keyword ranking (`search_pages`), a pool per
# process (a forked worker starts its own): as many as searches that may run at once in a
# gunicorn worker's threads; each embedding uses one ONNX thread.
EMBEDDING_THREADS = 8


_pool: tuple[int, ThreadPoolExecutor] | None = None


_pool_lock = threading.Lock()


def embedding_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None or _pool[0] != os.getpid():
            _pool = (
                os.getpid(),
                ThreadPoolExecutor(EMBEDDING_THREADS, thread_name_prefix="quire-embed"),
            )
        return _pool[1]


def status() -> dict[str, str]:
    """For /healthz: how search ranks (wiki.semantic.status) and, with a model, its languages
    and what a question in another language finds."""
    said = semantic_status()
    model = embedder()
    if model is None:
        return said
    if model.languages is None:
        said["languages"] = "many"
        said["otherLanguages"] = (
            "A question in a language the model was not trained on finds the pages holding "
            "its words, ranked by them and by the little meaning the model draws from it."
        )
        return said
    said["languages"] = ", ".join(sorted(model.languages))
    said["otherLanguages"] = (
        "A question in another language finds the pages holding its words, ranked by them: "
        "in a script the model reads letter by letter (Chinese, Japanese, Korean, Cyrillic, "
        "Arabic...) by its words alone; in one it reads as word pieces (French, Spanish...) "
        f"by its words, weighted {FOREIGN_KEYWORD_WEIGHT:g} times more than in English, and "
        "by the little meaning the model draws from it (the nearest pages are kept however "
        "far). Pages in the question's language come first among equal hits; Japanese and "
        "Chinese questions typed without spaces are split into their words."
    )
    return said
