"""Copies and translations (issue 49, point 2): the tldr pages, each copied untranslated into
eight language folders as a handbook's untranslated pages are. A question finds the original
as one hit naming where the copies are (`alsoAt`), preferring the question's language and
the shallower path, over MCP and in the web search; the empty folder pages ("Ar", "Zh hans")
never rank above pages with content.
"""

from __future__ import annotations

import importlib
import re
import tarfile
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents import services as agent_services
from core.actors import SystemActor
from wiki.copies import EMPTY, fingerprint, near, same_page
from wiki.models import Page, SearchDocument
from wiki.scope import EVERYTHING
from wiki.search import names_title, search_pages

from .conftest import CORPUS
from .fixtures_mcp import rpc_tool
from .prerequisites import require_corpus
from .question_sets import TLDR_NAMES, TLDR_QUESTIONS, measure, reciprocal_rank

pytestmark = [pytest.mark.django_db, pytest.mark.semantic]

TLDR = CORPUS / "tldr-pages.tar.gz"
FOLDERS = ("ar", "de", "es", "fr", "ja", "ko", "pt-br", "zh-hans")
# The English questions whose answers are tldr's common pages, answered by the originals.
QUESTIONS = [
    (query, tuple(e.replace("pages/common/", "tldr/common/") for e in expected))
    for query, expected in TLDR_QUESTIONS
    if all(e.startswith("pages/common/") for e in expected)
]


@pytest.fixture
def copied(admin_user: User, tmp_path: Path) -> Iterator[tuple[dict[str, str], str]]:
    """The common tldr pages at tldr/common/, and a copy of each at tldr/<folder>/common/ for
    the 8 FOLDERS, imported and embedded; source path by public id, and an agent's token."""
    require_corpus(TLDR)
    root = tmp_path / "tldr"
    with tarfile.open(TLDR) as archive:
        for name in TLDR_NAMES:
            file = archive.extractfile(f"pages/common/{name}.md")
            assert file is not None
            text = file.read()
            for folder in ("", *FOLDERS):
                target = root / folder / "common" / f"{name}.md"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(text)
    call_command(
        "import_markdown",
        str(root),
        "--publish",
        "--author",
        admin_user.username,
        stdout=StringIO(),
        stderr=StringIO(),
    )
    # The test's transaction never commits, so the on-commit embedding is run here.
    call_command("embed_pages", "--quiet", stdout=StringIO(), stderr=StringIO())
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="copies")
    for page in Page.objects.filter(parent__isnull=True):
        agent_services.page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    sources = dict(Page.objects.values_list("public_id", "source_path"))
    yield {pk: source or "" for pk, source in sources.items()}, token


RESULT_PATH = re.compile(r'class="result-path[^>]*>([^<]*)<')


def over_mcp(client: Client, token: str, query: str) -> list[dict[str, Any]]:
    answer = rpc_tool(client, token, "search_pages", query=query)
    assert answer["isError"] is False, answer
    found: list[dict[str, Any]] = answer["structuredContent"]["results"]
    return found


def test_a_question_finds_the_original_once_with_its_copies_named(
    client: Client, copied: tuple[dict[str, str], str]
) -> None:
    sources, token = copied
    answers = []
    for query, expected in QUESTIONS:
        hits = over_mcp(client, token, query)
        ranked = [sources[hit["pageId"]] for hit in hits]
        answers.append((ranked, expected))
        names = [path.rsplit("/", 1)[-1] for path in ranked if path.endswith(".md")]
        assert len(names) == len(set(names)), (query, ranked)  # one hit per page and copies
    report = measure(answers)
    print(report)  # shown with -s
    assert report["mrr"] >= 0.8, report
    assert report["top3"] >= 0.9, report

    hits = over_mcp(client, token, "how do I extract a tar.gz file")
    [tar] = [hit for hit in hits if sources[hit["pageId"]] == "tldr/common/tar.md"]
    # Paths start at the agent's set entry, the imported folder's page.
    assert tar["path"] == "common/tar"
    assert sorted(tar["alsoAt"], key=lambda copy: copy["path"]) == [
        {"pageId": pk, "path": f"{folder}/common/tar"}
        for folder in FOLDERS
        for pk, source in sources.items()
        if source == f"tldr/{folder}/common/tar.md"
    ]


def test_a_question_in_a_folder_s_language_gets_that_folder_s_copy(
    client: Client, copied: tuple[dict[str, str], str]
) -> None:
    sources, token = copied
    hits = over_mcp(client, token, "cómo extraer un archivo tar.gz comprimido")
    paths = [sources[hit["pageId"]] for hit in hits]
    tar = next(path for path in paths if path.endswith("/common/tar.md"))
    assert tar == "tldr/es/common/tar.md", paths
    original = next(pk for pk, source in sources.items() if source == "tldr/common/tar.md")
    assert {"pageId": original, "path": "common/tar"} in hits[paths.index(tar)]["alsoAt"]


def test_empty_folder_pages_never_rank_above_pages_with_content(
    client: Client, copied: tuple[dict[str, str], str]
) -> None:
    sources, token = copied
    empty = set(SearchDocument.objects.filter(body="").values_list("page__public_id", flat=True))
    assert len(empty) >= 1 + len(FOLDERS)  # "Common", "Ar", "Zh hans"...
    for query in ("ar", "zh hans", "arabic pages", "common commands", "list files"):
        hits = over_mcp(client, token, query)
        # A title that is the question itself still comes first ("Ar" for "ar").
        kinds = [hit["pageId"] in empty for hit in hits if hit["title"].lower() != query]
        assert kinds == sorted(kinds), (query, [sources[hit["pageId"]] for hit in hits])


def test_keyword_only_search_folds_copies_too(copied: tuple[dict[str, str], str]) -> None:
    sources, _ = copied
    for query, expected in QUESTIONS[:10]:
        hits = search_pages(query, scope=EVERYTHING, limit=8, semantic=False, fold_copies=True)
        ranked = [sources[hit.public_id] for hit in hits]
        names = [path.rsplit("/", 1)[-1] for path in ranked]
        assert len(names) == len(set(names)), (query, ranked)
        if reciprocal_rank(ranked, expected) == 0:
            assert not any(path.endswith(expected[0][len("tldr/") :]) for path in ranked)


def test_the_web_search_shows_one_result_naming_the_copies(
    client: Client, admin_user: User, copied: tuple[dict[str, str], str]
) -> None:
    client.force_login(admin_user)
    html = client.get("/search/", {"q": "how do I extract a tar.gz file"}).content.decode()
    results = html.split('<li class="result">')[1:]
    paths = [RESULT_PATH.findall(result)[0] for result in results]
    tar = [result for result, path in zip(results, paths, strict=True) if path.endswith("/tar")]
    assert len(tar) == 1, paths
    assert paths[results.index(tar[0])] in ("common/tar", "tldr/common/tar")
    assert "Also at" in tar[0] and "zh-hans/common/tar</a>" in tar[0]


def test_a_copy_s_fingerprint_is_near_and_another_page_s_far() -> None:
    text = (
        "Archiving utility. Often combined with a compression method, such as gzip or bzip2. "
        "Create an archive and write it to a file. Extract an archive in a target directory."
    )
    copy = text.upper().replace(". ", ".\n\n- ")  # the same words, other markup and case
    edited = text + " Also see the zip page."
    other = "Show the differences between two files, line by line, or between two folders."
    assert fingerprint(copy) == fingerprint(text)
    assert near(fingerprint(text), fingerprint(edited))
    assert not near(fingerprint(text), fingerprint(other))
    assert fingerprint("") == EMPTY and fingerprint("   ") == EMPTY
    assert same_page(("tar", fingerprint(text)), ("Tar", fingerprint(copy)))
    assert not same_page(("tar", fingerprint(text)), ("zip", fingerprint(text)))
    assert not same_page(("Ar", EMPTY), ("Ar", EMPTY))  # pages with no text are no copies


def test_the_migration_fingerprints_the_rows_indexed_before(make_page: Any) -> None:
    migration = importlib.import_module("wiki.migrations.0025_searchdocument_fingerprint")
    page = make_page("Tar", "Create an archive and write it to a file.\n")
    folder = make_page("Ar", "")
    indexed = dict(SearchDocument.objects.values_list("page_id", "fingerprint"))
    SearchDocument.objects.update(fingerprint=None)  # as indexed before the column

    migration.fingerprint_documents(apps, None)

    assert dict(SearchDocument.objects.values_list("page_id", "fingerprint")) == indexed
    assert indexed[folder.pk] == EMPTY and indexed[page.pk] not in (None, EMPTY)


def test_a_page_with_no_text_stays_in_place_where_the_question_names_it() -> None:
    """A redirect's page (the 18F handbook's "Open source policy") is only its title: the
    handbook question "can we publish our code as open source" asks for it by name, while a
    language folder's page answers no question that does not name it."""
    assert names_title("can we publish our code as open source", "Open source policy")
    assert not names_title("how do I list files", "Zh hans")
    assert not names_title("anything", "")
