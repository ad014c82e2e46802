"""search_pages answers plain questions on the shared corpora: a table of queries and the
page each should bring first (or among the first three), on both databases.

The handbook (18F) and a slice of the tldr pages (English and Korean) are imported once per
test through the real importer; the queries go through the MCP tool.
"""

from __future__ import annotations

import re
import tarfile
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from agents import services as agent_services
from core.actors import SystemActor
from wiki.models import Page

from .conftest import CORPUS, HANDBOOK
from .fixtures_mcp import rpc_tool
from .prerequisites import require_corpus

pytestmark = pytest.mark.django_db

TLDR = CORPUS / "tldr-pages.tar.gz"
TLDR_PAGES = [
    f"pages/common/{name}.md"
    for name in (
        "tar gzip zstd bzip2 xz 7z unzip zip git git-commit git-push git-clone ssh ssh-keygen "
        "docker docker-ps kill pkill find grep du df curl wget chmod chown"
    ).split()
] + ["pages.ko/common/tar.md", "pages.ko/common/git.md", "pages.ko/common/grep.md"]

# (query, the source path expected first, or a tuple of acceptable ones in the first three)
QUESTIONS: list[tuple[str, str | tuple[str, ...]]] = [
    # Exact titles come first, above pages that only mention the word.
    ("tar", ("pages/common/tar.md",)),  # pages.ko's "tar" is titled exactly so too
    ("git", "pages/common/git.md"),
    ("Paid parental leave (PPL)", "travel-and-leave/paid-parental-leave.md"),
    # Plain questions: stop words need not match, most-words hits follow.
    ("how do I extract a tar archive", "pages/common/tar.md"),
    ("how can I kill a process by its name", ("pages/common/pkill.md", "pages/common/kill.md")),
    ("disk space usage", ("pages/common/du.md", "pages/common/df.md")),
    ("how do I download a file from the web", ("pages/common/wget.md", "pages/common/curl.md")),
    ("how do I generate an ssh key", "pages/common/ssh-keygen.md"),
    ("can I take paid leave when my child is born", "travel-and-leave/paid-parental-leave.md"),
    (
        "what do I do if my laptop is stolen",
        "getting-started/equipment.md",
    ),
    (
        "how do I get reimbursed for a taxi on a work trip",
        ("travel-and-leave/travel-and-leave-policies/travel-guide-faq.md",),
    ),
    ("which password manager should I use", "password-requirements.md"),
]


def _extract_tldr(into: Path) -> None:
    with tarfile.open(TLDR) as archive:
        wanted = set(TLDR_PAGES)
        members = [m for m in archive.getmembers() if m.name in wanted]
        archive.extractall(into, members=members, filter="data")


@pytest.fixture
def corpora_token(admin_user: User, tmp_path: Path) -> str:
    require_corpus(HANDBOOK)
    require_corpus(TLDR)
    _extract_tldr(tmp_path / "tldr")
    for source in (HANDBOOK, tmp_path / "tldr"):
        call_command(
            "import_markdown",
            str(source),
            "--publish",
            "--author",
            admin_user.username,
            stdout=StringIO(),
            stderr=StringIO(),
        )
    agent, token = agent_services.agent_create(actor=SystemActor("tests"), name="corpora-bot")
    for page in Page.objects.filter(parent__isnull=True).order_by("path"):
        agent_services.page_set_add(actor=SystemActor("tests"), agent=agent, page=page)
    return token


def search(client: Client, token: str, query: str, **extra: str) -> list[dict[str, str]]:
    result = rpc_tool(client, token, "search_pages", query=query, **extra)
    assert result["isError"] is False, result
    hits: list[dict[str, str]] = result["structuredContent"]["results"]
    return hits


def sources(hits: list[dict[str, str]]) -> list[str]:
    by_id = dict(
        Page.objects.filter(public_id__in=[h["pageId"] for h in hits]).values_list(
            "public_id", "source_path"
        )
    )
    return [by_id[h["pageId"]] or "" for h in hits]


def test_it_answers_the_table_of_questions(client: Client, corpora_token: str) -> None:
    misses = []
    for query, expected in QUESTIONS:
        ranked = sources(search(client, corpora_token, query))
        if isinstance(expected, str):
            ok = bool(ranked) and ranked[0].endswith(expected)
        else:
            ok = any(path.endswith(e) for path in ranked[:3] for e in expected)
        if not ok:
            misses.append((query, expected, ranked[:3]))
    assert misses == []


def test_it_ranks_pages_holding_every_word_above_those_holding_most(
    client: Client, corpora_token: str
) -> None:
    query = "compress files into an archive with gzip and tar"
    hits = search(client, corpora_token, query)
    assert hits
    words = ["compress", "files", "archive", "gzip", "tar"]
    full = [h for h in hits if all(w in (h["title"] + h["excerpt"]).lower() for w in words)]
    # Pages holding every word, if any, are the first ones.
    assert hits[: len(full)] == full


def test_it_narrows_to_a_subtree_and_returns_paths(client: Client, corpora_token: str) -> None:
    everywhere = search(client, corpora_token, "leave")
    assert any(not h["path"].startswith("travel-and-leave/") for h in everywhere)
    under = search(client, corpora_token, "leave", under="travel-and-leave")
    assert under
    assert all(
        h["path"] == "travel-and-leave" or h["path"].startswith("travel-and-leave/") for h in under
    )
    root = Page.objects.get(path="travel-and-leave")
    assert search(client, corpora_token, "leave", under=root.public_id) == under


def test_it_keeps_the_spaces_of_a_korean_excerpt(client: Client, corpora_token: str) -> None:
    page = Page.objects.get(source_path__endswith="pages.ko/common/tar.md")
    hits = search(client, corpora_token, "압축")
    hit = next(h for h in hits if h["pageId"] == page.public_id)
    # Korean separates words with spaces: the excerpt keeps them as the page has them
    # (which fragment is shown differs between the databases).
    body = page.live_version.body  # type: ignore[union-attr]
    pairs = re.findall(r"(?=([가-힣]+ [가-힣]+))", hit["excerpt"])
    assert len([pair for pair in pairs if pair in body]) >= 3, hit["excerpt"]
