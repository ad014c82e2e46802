"""The language a page is written in and the language a query is asked in, so that search
prefers pages in the query's language among hits of near-equal relevance (never a filter).

Detected by py3langid (langid.py's naive Bayes model over byte n-grams, 97 languages, 4.5 MB,
no download) from the page's prose: code, URLs and tldr-style `{{placeholders}}` are left
out, since they read the same in every language. A path segment that names one of the
likely languages (`pages.fr/`, `/de/`, `docs/pt_BR/`) settles a close call such as Bosnian
against Croatian. A query is short, so its language is chosen among the languages the wiki
holds (a query in a language the wiki lacks gets the nearest one), and only when the model
is fairly sure: "tar" or "PIV card" are taken to be in the wiki's main language.

The wiki's languages, with their page counts, are kept per process and read again once a
minute by a thread of their own: no search waits for that reading (an index scan of every
page's search row, 15 to 20 ms at 116,000 pages). A server process starts its first reading
as it starts (config/wsgi.py); elsewhere (a shell, a Celery worker) the first search reads
them.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from django.db import connection, connections
from django.db.models import Count

from wiki.models import SearchDocument

logger = logging.getLogger(__name__)

# Codes as py3langid gives them (ISO 639-1 where there is one); "" when undetermined.
UNKNOWN = ""
# Prose read from a page: enough to decide, bounded for long pages.
DETECT_CHARS = 3000
# A page's language is its best guess unless that is below this (the text is mostly code,
# or too short): then UNKNOWN. Close languages share the rest (Spanish 0.50, Galician 0.43).
PAGE_CONFIDENCE = 0.3
# How long the set of the wiki's languages is reused before it is read again.
LANGUAGES_TTL_SECONDS = 60.0

_NOT_PROSE = re.compile(
    r"^\s{0,3}(```|~~~).*?^\s{0,3}\1|`[^`\n]*`|<https?://[^>\s]*>|https?://\S+|\{\{[^}\n]*\}\}",
    re.S | re.M,
)
# A path segment naming a language: "fr", "pt_BR", "zh-TW", or ending in one after a dot
# ("pages.fr").
_SEGMENT = re.compile(r"(?:^|\.)([a-z]{2,3})(?:[_-][a-z]{2,4})?$")


_model_lock = threading.Lock()


def _identifier() -> Any:
    """py3langid's model, loaded once per process (0.4 s); a server process loads it as it
    starts (`wiki.search.warm_up`), and a search meanwhile waits for it."""
    with _model_lock:
        return _load_identifier()


@cache
def _load_identifier() -> Any:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def load_model() -> None:
    _identifier()


def prose(markdown: str) -> str:
    """The words of a page that depend on its language: code and links left out."""
    return " ".join(_NOT_PROSE.sub(" ", markdown[: DETECT_CHARS * 2]).split())[:DETECT_CHARS]


def path_languages(path: str) -> set[str]:
    """Language codes that segments of `path` may name ("pages.pt_BR/common" gives "pt")."""
    found = set()
    for segment in path.lower().split("/"):
        match = _SEGMENT.search(segment)
        if match:
            found.add(match[1])
    return found


def folder_languages(path: str) -> set[str]:
    """The languages the folders of `path` name (its segments but the last, the page's own),
    among those the model knows: "handbook/zh-hans/tools/slack" gives {"zh"}; a folder
    named "cp" or "tar" names none."""
    folders = path.rsplit("/", 1)[0] if "/" in path else ""
    return path_languages(folders) & set(_identifier().nb_classes)


# A question is taken to be in another of the languages a search weighs than the one the
# wiki's counts make likeliest (`likelier_language`) when the model finds it at least this
# likely, and this many times likelier.
OTHER_LANGUAGE_AT_LEAST = 0.1
OTHER_LANGUAGE_TIMES = 2.0


def likelier_language(text: str, language: str, others: Iterable[str]) -> str:
    """`language` (the question's likeliest language among the wiki's, weighted by their
    pages), unless the model alone finds `text` clearly in one of `others` (at least
    OTHER_LANGUAGE_AT_LEAST likely, OTHER_LANGUAGE_TIMES likelier than `language`): a Spanish
    question in a wiki whose pages are all English ("cómo extraer un archivo tar.gz") is
    Spanish when `others` holds "es" (the folders a copy of a page sits in)."""
    candidates = set(others) - {language}
    if not candidates or not text.strip():
        return language
    likelihood = dict(_identifier().rank(text))
    best = max(sorted(candidates), key=lambda other: likelihood.get(other, 0.0))
    chance = likelihood.get(best, 0.0)
    if chance >= OTHER_LANGUAGE_AT_LEAST and chance >= OTHER_LANGUAGE_TIMES * likelihood.get(
        language, 0.0
    ):
        return str(best)
    return language


def page_language(title: str, body: str, path: str = "") -> str:
    """The language of a page (its title and markdown body), or UNKNOWN."""
    text = prose(f"{title}\n\n{body}")
    if not text:
        return UNKNOWN
    ranked = _identifier().rank(text)[:3]
    best, confidence = ranked[0]
    named = path_languages(path)
    for language, share in ranked:
        # A close call, settled by the path.
        if language in named and share >= confidence / 4:
            return str(language)
    return str(best) if confidence >= PAGE_CONFIDENCE else UNKNOWN


def likeliest_language(text: str) -> str:
    """The model's best guess for `text` among all the languages it knows, however unsure."""
    return str(_identifier().classify(text)[0]) if text.strip() else UNKNOWN


def query_language(query: str, languages: Mapping[str, int]) -> str:
    """The likeliest language of `query` among `languages` (the wiki's, with their page
    counts), UNKNOWN when the wiki has one language or none.

    The model's likelihood for each language times the share of the wiki's pages written in
    it: a short query the model reads as Breton or Hungarian as much as English ("unpack a
    zip archive") is taken as English in a wiki mostly in English, and one it cannot tell at
    all ("tar") is taken to be in the language most of the wiki is written in.
    """
    if len(languages) < 2 or not query.strip():
        return UNKNOWN
    likelihood = dict(_identifier().rank(query))
    return max(
        languages,
        key=lambda language: (likelihood.get(language, 0.0) * languages[language], language),
    )


# --- the wiki's languages ---------------------------------------------------------------------

_lock = threading.Lock()
_known: dict[str, tuple[float, dict[str, int]]] = {}
# The databases whose languages a thread is reading again, with that thread. A process forked
# meanwhile (a Celery pool, gunicorn's workers) has no such thread.
_refreshing: dict[str, threading.Thread] = {}
os.register_at_fork(after_in_child=_refreshing.clear)


def _database_key() -> str:
    return f"{connection.alias}:{connection.settings_dict.get('NAME')}"


def wiki_languages() -> Mapping[str, int]:
    """The languages of the indexed pages, with how many pages each has.

    Read from the database as a server process starts (`read_in_background`), or else by
    its first search, which waits for a reading already started; after that a search takes
    the counts kept, and when they are a minute old it starts a thread that reads them again
    (one at a time per process) and goes on with what it has: staleness only weighs a
    query's language (`query_language`), and pages this process indexes meanwhile are
    counted at once (`note_languages`)."""
    key = _database_key()
    with _lock:
        cached = _known.get(key)
        stale = cached is not None and time.monotonic() - cached[0] >= LANGUAGES_TTL_SECONDS
        if stale and key not in _refreshing:
            _start_reader(key)
    if cached is None:
        return _first_reading(key)
    return cached[1]


def read_in_background() -> None:
    """Start reading the wiki's languages on a thread of their own, unless this process has
    them or is reading them: a server process calls it as it starts (`wiki.search.warm_up`),
    so that not even its first search waits for that reading."""
    key = _database_key()
    with _lock:
        if key in _known or key in _refreshing:
            return
        _start_reader(key)


def _start_reader(key: str) -> None:
    """Start a thread reading the languages of `key`'s database, and know it as such (called
    under _lock: whoever finds it in _refreshing may join it, so it is there started or not
    at all; the thread takes _lock only as it ends)."""
    reader = threading.Thread(
        target=_read_again, args=(key,), name="quire-wiki-languages", daemon=True
    )
    try:
        reader.start()
    except RuntimeError:  # no thread to be had: the next search reads them or tries again
        return
    _refreshing[key] = reader


def _first_reading(key: str) -> Mapping[str, int]:
    """This process's first counts: the reading `read_in_background` started, finished, or
    a reading of the search's own when there is none (or it failed)."""
    with _lock:
        reader = _refreshing.get(key)
    if reader is not None:
        reader.join()
    with _lock:
        cached = _known.get(key)
    return cached[1] if cached is not None else count_languages()


def _read_again(key: str) -> None:
    """`count_languages` on a thread of its own (its own connection, closed after)."""
    try:
        count_languages()
    except Exception:
        # The counts kept stay in use; the next try is a minute away, not the next search.
        logger.warning(
            "Could not read the wiki's languages; %s.",
            "keeping the last counts" if key in _known else "the first search reads them",
            exc_info=True,
        )
        with _lock:
            if key in _known:
                _known[key] = (time.monotonic(), _known[key][1])
    finally:
        connections.close_all()
        with _lock:
            _refreshing.pop(key, None)


def wait_for_reading() -> None:
    """Wait for the readings `wiki_languages` started (for tests)."""
    with _lock:
        readers = list(_refreshing.values())
    for reader in readers:
        reader.join()


def count_languages() -> Mapping[str, int]:
    """Read the languages of the indexed pages again, and keep them for wiki_languages."""
    rows = (
        SearchDocument.objects.exclude(language__isnull=True)
        .exclude(language=UNKNOWN)
        .order_by()
        .values_list("language")
        .annotate(pages=Count("*"))
        .values_list("language", "pages")
    )
    found = {str(language): pages for language, pages in rows}
    prime_languages(found)
    return found


def prime_languages(counts: Mapping[str, int]) -> None:
    with _lock:
        _known[_database_key()] = (time.monotonic(), dict(counts))


def note_languages(languages: Iterable[str]) -> None:
    """Pages in these languages were just indexed: searches in this process count them at
    once (until the next reading)."""
    key = _database_key()
    with _lock:
        cached = _known.get(key)
        if cached is None:
            return
        counts = dict(cached[1])
        for language in languages:
            if language:
                counts[language] = counts.get(language, 0) + 1
        _known[key] = (cached[0], counts)
