"""Chinese, Japanese and Korean queries on the tldr pages in those languages, on both databases.

The pages are imported through the real importer and searched through the MCP tool. A CJK
word is found where the page holds it, never where the page merely holds its characters
apart; an agent finds nothing outside its set. On PostgreSQL the index picks the pages that
hold the word's character pairs (migration 0014), so the phrase is checked on those pages
only: the plan is pinned.
"""

from __future__ import annotations

import json
import tarfile
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
from tests.bulk import make_live
from tests.prerequisites import require_corpus
from wiki.models import Page, SearchDocument
from wiki.search import cjk_terms, document_fields, index_page, parse_query, search_pages

from .conftest import CORPUS
from .fixtures_mcp import rpc_tool

pytestmark = pytest.mark.django_db

TLDR = CORPUS / "tldr-pages.tar.gz"
COMMANDS = "tar zip unzip gzip 7z ls cp mv rm find grep du df chmod chown curl wget git ssh kill"
LANGUAGES = ("ja", "ko", "zh")
QUERIES = ("ファイル", "파일 목록", "压缩文件", "アーカイブ", "디렉토리", "文件")


@pytest.fixture
def cjk_site(admin_user: User, tmp_path: Path) -> dict[str, str]:
    """tldr's pages on these commands in Japanese, Korean and Chinese (and English), imported;
    returns each page's source path keyed by public id."""
    require_corpus(TLDR)
    wanted = {
        f"{folder}/common/{name}.md"
        for folder in ["pages"] + [f"pages.{language}" for language in LANGUAGES]
        for name in COMMANDS.split()
    }
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
    rows = Page.objects.exclude(source_path="").values_list("public_id", "source_path")
    return {public_id: source or "" for public_id, source in rows}


def agent_token(*roots: str) -> str:
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="cjk-bot")
    for path in roots:
        agent_services.page_set_add(
            actor=SystemActor("tests"), agent=agent, page=Page.objects.get(path=path)
        )
    return token


def search(client: Client, token: str, query: str) -> list[dict[str, Any]]:
    result = rpc_tool(client, token, "search_pages", query=query)
    assert result["isError"] is False, result
    hits: list[dict[str, Any]] = result["structuredContent"]["results"]
    return hits


def holders(query: str) -> set[int]:
    """The live pages whose title or body holds every word of `query` (read directly)."""
    words = query.split()
    found = set()
    for page in Page.objects.filter(live_version__isnull=False).select_related("live_version"):
        version = page.live_version
        assert version is not None
        text = f"{version.title}\n{version.body}"
        if all(word in text for word in words):
            found.add(page.pk)
    return found


def test_cjk_words_find_the_pages_that_hold_them(client: Client, cjk_site: dict[str, str]) -> None:
    token = agent_token(*Page.objects.filter(parent__isnull=True).values_list("path", flat=True))
    for query in QUERIES:
        expected = holders(query)
        assert expected, query  # the corpus holds every query
        hits = search(client, token, query)
        found = set(
            Page.objects.filter(public_id__in=[h["pageId"] for h in hits]).values_list(
                "pk", flat=True
            )
        )
        assert len(hits) == len(found) == min(len(expected), 8), query
        assert found <= expected, (query, found - expected)
    # Named pages, with the word in the excerpt as the page writes it.
    [zip_page] = [
        h
        for h in search(client, token, "压缩文件")
        if cjk_site[h["pageId"]].endswith("zh/common/zip.md")
    ]
    assert "压缩文件" in zip_page["excerpt"]
    listing = [cjk_site[h["pageId"]] for h in search(client, token, "파일 목록")]
    assert any(path.startswith("tldr/pages.ko/") for path in listing)
    assert all(path.startswith("tldr/pages.ko/") for path in listing)


def test_a_page_holding_the_characters_apart_is_not_found(
    client: Client, cjk_site: dict[str, str], editor: User
) -> None:
    [scrambled] = Page.objects.bulk_create([Page(title="順番", slug="order", path="order")])
    make_live([scrambled], author=editor, body=lambda n, page: "ルイァフ 록목 일파 件文缩压")
    scrambled.refresh_from_db()
    index_page(scrambled)
    for query in QUERIES:
        hits = search_pages(query, limit=50)
        assert scrambled.pk not in {hit.page_id for hit in hits}, query
    assert [hit.page_id for hit in search_pages("ルイァフ")] == [scrambled.pk]


def test_an_agent_finds_no_cjk_page_outside_its_set(
    client: Client, cjk_site: dict[str, str]
) -> None:
    japanese = Page.objects.get(source_path="tldr/pages.ja/")
    token = agent_token(japanese.path)
    for query in QUERIES:
        for hit in search(client, token, query):
            assert cjk_site[hit["pageId"]].startswith("tldr/pages.ja/"), (query, hit)
    # Korean and Chinese words are in other folders only.
    assert search(client, token, "파일 목록") == []
    assert search(client, token, "压缩文件") == []
    assert search(client, token, "ファイル")


# Questions as Japanese and Chinese readers type them, without spaces, and the tldr page
# that answers each (issue 37: they found nothing, searched as one word of all their
# characters).
QUESTIONS = {
    "ディスクの使用量を表示するには": "tldr/pages.ja/common/df.md",
    "隠しファイルを一覧表示する方法": "tldr/pages.ja/common/ls.md",
    "ファイルのアクセス権限を変更したい": "tldr/pages.ja/common/chmod.md",
    "怎么查看磁盘使用情况": "tldr/pages.zh/common/df.md",
    "如何删除文件": "tldr/pages.zh/common/rm.md",
    "列出目录中的隐藏文件": "tldr/pages.zh/common/ls.md",
    "修改文件的访问权限": "tldr/pages.zh/common/chmod.md",
}


def test_questions_without_spaces_find_the_pages_in_their_language(
    client: Client, cjk_site: dict[str, str]
) -> None:
    token = agent_token(*Page.objects.filter(parent__isnull=True).values_list("path", flat=True))
    for question, answer in QUESTIONS.items():
        hits = [cjk_site[hit["pageId"]] for hit in search(client, token, question)]
        assert hits, question
        assert answer in hits[:3], (question, hits)
        folder = answer.split("common/")[0]
        assert all(path.startswith(folder) for path in hits[:3]), (question, hits)
    # A word of the question alone, and the question in the middle of an English one.
    [first, *_] = search(client, token, "gzip 如何压缩文件")
    assert cjk_site[first["pageId"]] == "tldr/pages.zh/common/gzip.md"


def test_a_question_is_cut_into_words_and_a_word_is_left_whole() -> None:
    assert cjk_terms(["ファイルを圧縮する方法"]) == (["ファイル", "圧縮", "方法"], 0)
    assert cjk_terms(["如何删除文件"]) == (["删除", "除文", "文件"], 1)
    assert cjk_terms(["怎么查看磁盘使用情况吗"]) == (
        ["查看", "看磁", "磁盘", "盘使", "使用", "用情", "情况"],
        3,
    )
    assert cjk_terms(["如何使用tar命令"]) == (["使用", "tar", "命令"], 0)
    assert cjk_terms(["为什么如何怎么"]) is None
    assert cjk_terms(["ひらがなだけです"]) == (["ひらがなだけです"], 0)
    # Korean is written with spaces: its words stay whole.
    assert cjk_terms(["tar로"]) is None
    assert cjk_terms(["디렉토리목록보기"]) is None
    # Words of up to four characters are searched as today, as the phrase of their characters.
    assert cjk_terms(["压缩文件"]) is None
    assert cjk_terms(["使い方"]) is None
    assert parse_query("如何删除文件").spanning == 1
    assert parse_query('"如何删除文件"').groups == [["如\u2008何\u2008删\u2008除\u2008文\u2008件"]]


@pytest.mark.postgres
def test_the_index_picks_the_pages_holding_the_word(editor: User) -> None:
    """300 pages hold the characters of ファイル apart, 5 hold the word: the index hands the
    phrase check those 5 only (before, every page holding the four characters)."""
    pages = Page.objects.bulk_create(
        Page(title=f"Page {n}", slug=f"page-{n}", path=f"page-{n}") for n in range(305)
    )

    def body(n: int, page: Page) -> str:
        return "ファイルを開く" if n < 5 else "イルカのファン、ァ"

    versions = make_live(pages, author=editor, body=body)
    SearchDocument.objects.bulk_create(
        SearchDocument(page=page, title=title, tags=tags, body=text)
        for page, version in zip(pages, versions, strict=True)
        for title, tags, text in [document_fields(title=page.title, tags=[], body=version.body)]
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE wiki_searchdocument")
    with CaptureQueriesContext(connection) as captured:
        hits = search_pages("ファイル", limit=8)
    assert {hit.page_id for hit in hits} == {page.pk for page in pages[:5]}
    [sql] = [q["sql"] for q in captured if "wiki_searchdocument d" in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan: dict[str, Any] = json.loads(json.dumps(cursor.fetchone()[0]))[0]
    everything = nodes(plan["Plan"])
    [index_scan] = [
        n for n in everything if n.get("Index Name") == "wiki_searchdocument_vector_gin"
    ]
    # The pages whose titles hold the word are read first (none here), then the 5.
    heap_scans = [
        n
        for n in everything
        if n["Node Type"] == "Bitmap Heap Scan" and n.get("Relation Name") == "wiki_searchdocument"
    ]
    assert sum(scan["Actual Rows"] for scan in heap_scans) == 5
    for heap_scan in heap_scans:
        assert heap_scan.get("Rows Removed by Index Recheck", 0) == 0, heap_scan
    assert index_scan


def nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    found = [node]
    for child in node.get("Plans", []):
        found += nodes(child)
    return found


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_migration_indexes_the_pairs_of_pages_indexed_before_it(
    cjk_site: dict[str, str],
) -> None:
    """Migration 0014 on a database whose CJK pages were indexed without the pairs: back to
    0013 (the pairs go), forward again (they come back), and the words are found."""
    from django.db.migrations.executor import MigrationExecutor

    def pairs() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM wiki_searchdocument "
                "WHERE vector @@ to_tsquery('simple', 'ファ')"
            )
            return int(cursor.fetchone()[0])

    assert pairs() > 0
    executor = MigrationExecutor(connection)
    executor.migrate([("wiki", "0013_page_chunks")])
    assert pairs() == 0
    # Forward to every app's leaf, not only wiki's: going back to wiki 0013 unapplied the
    # other apps' migrations that depend on later wiki ones (reviews, inbox), and the tests
    # after this one on the same database need their tables.
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert pairs() > 0
    assert search_pages("ファイル")
