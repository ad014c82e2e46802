"""Search prefers pages in the query's language: on tldr pages in five languages (the same
commands and titles in each), an English question finds the English page before its
translations and a French one the French page, by meaning and by keywords alone; exact
titles still come first, and a question in a language the wiki lacks still finds the page;
no search but a process's first waits for the wiki's languages to be read.
"""

from __future__ import annotations

import importlib
import os
import tarfile
import threading
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents import services as agent_services
from core.actors import SystemActor
from wiki import language, search, semantic
from wiki.language import page_language, path_languages, query_language
from wiki.models import Page, SearchDocument
from wiki.scope import EVERYTHING
from wiki.search import search_pages

from .conftest import CORPUS
from .fixtures_mcp import rpc_tool
from .prerequisites import require_corpus
from .test_bench_raw_leg import reads_languages

TLDR = CORPUS / "tldr-pages.tar.gz"
COMMANDS = ("tar", "grep", "chmod", "df", "git-clone", "ln", "wc", "diff")
FOLDERS = ("pages", "pages.fr", "pages.ko", "pages.es", "pages.zh")


@pytest.fixture
def translated(admin_user: User, tmp_path: Path) -> dict[str, str]:
    """The commands in every folder that has them, imported and embedded; source path by
    page public id."""
    require_corpus(TLDR)
    wanted = {f"{folder}/common/{name}.md" for folder in FOLDERS for name in COMMANDS}
    with tarfile.open(TLDR) as archive:
        members = [m for m in archive.getmembers() if m.name in wanted]
        archive.extractall(tmp_path / "tldr", members=members, filter="data")
    call_command(
        "import_markdown",
        str(tmp_path / "tldr"),
        "--publish",
        "--author",
        admin_user.username,
        stdout=StringIO(),
        stderr=StringIO(),
    )
    # The test's transaction never commits, so the on-commit embedding is run here.
    call_command("embed_pages", "--quiet", stdout=StringIO(), stderr=StringIO())
    pages = Page.objects.exclude(source_path__endswith="/").values_list("public_id", "source_path")
    return {public_id: (source or "").split("tldr/", 1)[-1] for public_id, source in pages}


def ranked(query: str, sources: dict[str, str], *, semantic: bool = True) -> list[str]:
    hits = search_pages(query, scope=EVERYTHING, limit=8, semantic=semantic)
    return [sources.get(hit.public_id, "") for hit in hits]


def first_of(paths: list[str], command: str) -> str:
    """The first of `paths` that is a version of `command`, in any language."""
    return next(path for path in paths if path.endswith(f"/common/{command}.md"))


@pytest.mark.django_db
@pytest.mark.semantic
def test_it_detects_each_page_language_when_indexing(translated: dict[str, str]) -> None:
    languages = dict(
        SearchDocument.objects.filter(page__public_id__in=list(translated)).values_list(
            "page__public_id", "language"
        )
    )
    expected = {"pages": "en", "pages.fr": "fr", "pages.ko": "ko", "pages.es": "es"}
    for public_id, source in translated.items():
        folder = source.split("/", 1)[0]
        if folder in expected:
            assert languages[public_id] == expected[folder], source


QUESTIONS = [
    ("how do I extract a tar.gz file", "tar", "pages"),
    ("count the lines in a file", "wc", "pages"),
    ("show the differences between two files", "diff", "pages"),
    ("comment extraire une archive tar.gz", "tar", "pages.fr"),
    ("compter les lignes d'un fichier", "wc", "pages.fr"),
    ("afficher les différences entre deux fichiers", "diff", "pages.fr"),
]


@pytest.mark.django_db
@pytest.mark.semantic
def test_it_ranks_the_page_in_the_question_language_above_its_translations(
    translated: dict[str, str],
) -> None:
    for semantic_on in (True, False):
        for query, command, folder in QUESTIONS:
            paths = ranked(query, translated, semantic=semantic_on)
            expected = f"{folder}/common/{command}.md"
            assert first_of(paths, command) == expected, (query, semantic_on, paths)


@pytest.mark.django_db
@pytest.mark.semantic
def test_it_answers_over_mcp_in_the_question_language(
    client: Client, translated: dict[str, str]
) -> None:
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="languages")
    for page in Page.objects.filter(parent__isnull=True):
        agent_services.page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    result = rpc_tool(client, token, "search_pages", query="rendre un fichier exécutable")
    paths = [translated.get(hit["pageId"], "") for hit in result["structuredContent"]["results"]]
    assert first_of(paths, "chmod") == "pages.fr/common/chmod.md", paths


@pytest.mark.django_db
@pytest.mark.semantic
def test_exact_titles_still_come_first(translated: dict[str, str]) -> None:
    for title in ("tar", "git clone"):
        hits = search_pages(title, scope=EVERYTHING, limit=8)
        assert hits[0].title == title
        assert hits[0].exact_title


@pytest.mark.django_db
@pytest.mark.semantic
def test_a_question_in_a_language_the_wiki_lacks_still_finds_the_page(
    translated: dict[str, str],
) -> None:
    # No German page: the nearest ones still answer.
    paths = ranked("wie entpacke ich ein tar.gz Archiv", translated)
    assert any(path.endswith("/common/tar.md") for path in paths[:3]), paths


@pytest.mark.django_db
@pytest.mark.semantic
def test_a_query_in_a_script_the_model_cannot_read_is_searched_by_its_words(
    translated: dict[str, str],
) -> None:
    # all-MiniLM-L6-v2 reads Korean letter by letter: its vector would rank Korean pages at
    # random, so only the words count.
    model = semantic.embedder()
    assert model is not None
    assert model.unreadable_share("파일에서 문자열 찾기") == 1.0
    assert model.unreadable_share("extraire une archive tar.gz") == 0.0
    assert semantic.nearest_chunks("파일에서 문자열 찾기", None, {}) == []
    paths = ranked("파일에서 문자열 찾기", translated)
    assert paths[0] == "pages.ko/common/grep.md", paths


def test_page_language_reads_prose_not_code() -> None:
    body = (
        "> Archiver et extraire des fichiers.\n\n- Crée une archive à partir de fichiers :\n\n"
        "`tar cf {{target.tar}} {{file1 file2}}`\n\n```\ntar xzf archive.tar.gz --verbose\n```\n"
    )
    assert page_language("tar", body) == "fr"
    assert page_language("tar", "```\ntar xzf archive.tar.gz\n```") == ""


def test_a_path_segment_settles_a_close_call() -> None:
    assert path_languages("pages.pt_BR/common/tar") >= {"pt"}
    assert path_languages("docs/fr/install") >= {"fr"}
    assert "ps" not in path_languages("pagesbs/common/docker-ps")
    bosnian = "> Prikazuje prvi deo datoteka.\n\n- Prikaži prvih nekoliko linija datoteke:"
    assert page_language("head", bosnian, "docs/sr/head") == "sr"
    assert page_language("head", bosnian, "docs/bs/head") == "bs"


def test_query_language_weighs_the_model_by_the_wiki_languages() -> None:
    wiki = {"en": 700, "fr": 200, "ko": 650, "hu": 10}
    assert query_language("count the lines in a file", wiki) == "en"
    assert query_language("compter les lignes d'un fichier", wiki) == "fr"
    assert query_language("압축 파일 풀기", wiki) == "ko"
    # The model reads this as Breton as much as English: no Breton page, few Hungarian ones.
    assert query_language("unpack a zip archive", wiki) == "en"
    # Nothing to tell by: the language most of the wiki is in.
    assert query_language("tar", wiki) == "en"
    # A wiki in one language has no preference to make.
    assert query_language("compter les lignes", {"en": 5}) == ""


@pytest.mark.django_db(transaction=True)
def test_a_search_never_waits_to_read_the_wiki_languages_again(
    make_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a process has the wiki's languages, a search whose counts are a minute old goes on
    with them, and a thread of its own reads them again (an index scan of every page's search
    row: 15 to 20 ms at 116,000 pages, which one search a minute per process used to wait
    for)."""
    make_page("Tar", "Archive files with tar: create, list and extract an archive.\n")
    make_page("Tar (français)", "Archiver des fichiers avec tar : créer et extraire.\n")
    language.prime_languages({"de": 3})  # as read a minute ago, before these pages
    monkeypatch.setattr(language, "LANGUAGES_TTL_SECONDS", 0.0)

    with CaptureQueriesContext(connection) as queries:
        hits = search_pages("extract an archive", scope=EVERYTHING, limit=8)
    assert [hit.title for hit in hits][:1] == ["Tar"]
    assert not any(reads_languages(query["sql"]) for query in queries)

    language.wait_for_reading()
    monkeypatch.setattr(language, "LANGUAGES_TTL_SECONDS", float("inf"))
    assert language.wiki_languages() == {"en": 1, "fr": 1}


@pytest.mark.semantic
@pytest.mark.django_db(transaction=True)
def test_a_server_process_loads_what_search_needs_before_its_first_search(
    make_page: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """config/wsgi.py, which each gunicorn worker (and runserver) loads as it starts, loads the
    language model and the embedding model and reads the wiki's languages: the process's first
    search loads and reads none of them (0.4 s, 0.2 s and 15 to 20 ms at 116,000 pages, on
    that search's path before)."""
    make_page("Tar", "Archive files with tar: create, list and extract an archive.\n")
    make_page("Tar (français)", "Archiver des fichiers avec tar : créer et extraire.\n")
    # A process that has loaded and read nothing yet.
    monkeypatch.setattr(language, "_known", {})
    language._load_identifier.cache_clear()
    semantic._load.cache_clear()

    import config.wsgi

    importlib.reload(config.wsgi)
    search.wait_for_warm_up()
    loaded = (language._load_identifier.cache_info(), semantic._load.cache_info())
    assert [info.currsize for info in loaded] == [1, 1]
    assert semantic.embedder() is not None

    with CaptureQueriesContext(connection) as queries:
        hits = search_pages("extract an archive", scope=EVERYTHING, limit=8)
    assert [hit.title for hit in hits][:1] == ["Tar"]
    assert not any(reads_languages(query["sql"]) for query in queries)
    # Nothing loaded again: every model the search asked for was already there.
    after = (language._load_identifier.cache_info(), semantic._load.cache_info())
    assert [info.misses for info in after] == [info.misses for info in loaded]
    assert language.wiki_languages() == {"en": 1, "fr": 1}


@pytest.mark.django_db(transaction=True)
def test_a_first_search_waits_for_the_reading_under_way(make_page: Any) -> None:
    """A search that comes while the process's first reading is under way takes that
    reading's counts rather than reading them a second time."""
    make_page("Tar", "Archive files with tar: create, list and extract an archive.\n")
    language._known.clear()
    with CaptureQueriesContext(connection) as queries:
        language.read_in_background()
        counts = language.wiki_languages()
    assert counts == {"en": 1}
    assert not any(reads_languages(query["sql"]) for query in queries)


def test_a_forked_process_starts_its_own_reading() -> None:
    """A process forked while a thread read the languages (a Celery pool's child) does not
    have that thread: it must not wait forever for it to finish."""
    reader = threading.Thread()  # started, as every reader in _refreshing is (joinable)
    reader.start()
    reader.join()
    language._refreshing["forked"] = reader
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0 if "forked" not in language._refreshing else 1)
        _, status = os.waitpid(pid, 0)
    finally:
        language._refreshing.pop("forked", None)
    assert os.waitstatus_to_exitcode(status) == 0
