"""import_markdown creates new pages in chunks: the same rows as page by page, in few queries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from content import importer
from core.models import AuditEvent
from reviews.actions.create import page_create
from reviews.models import Notification
from wiki import search
from wiki.models import Page, SearchDocument, Version

pytestmark = pytest.mark.django_db

FIXED_ID = "pg_fixedid2"
QUERIES = ("archive", "guide", "rota monday", FIXED_ID)


def write(root: Path, relative: str, content: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Nested folders (with and without a page of their own), titles whose slugs collide,
    an exported page's id, a link to it, a bad file and a page that already holds a slug."""
    root = tmp_path / "docs"
    write(root, "welcome.md", "# Welcome\n\nStart with the [[pg_fixedid2]] guide.\n")
    write(root, "guide/index.md", f"---\ntitle: Guide\nquire_id: {FIXED_ID}\n---\nThe guide.\n")
    write(root, "guide/archive.md", "---\ntitle: Archive\ntags: [tar, zip]\n---\nArchive it.\n")
    write(root, "guide/archive-2.md", "---\ntitle: Archive\nowner: ops\n---\nAgain.\n")
    write(root, "guide/deep/rota.md", "---\ntitle: Rota\n---\nMonday: Ann.\n")
    write(root, "guide/deep/broken.md", "---\ntitle: [unclosed\n---\n")
    write(
        root,
        "guide/deep/links.md",
        "---\ntitle: Links\ninstructions: Read [[pg_fixedid2]] first.\n---\nSee the guide.\n",
    )
    for n in range(7):
        write(root, f"team/member-{n}.md", f"# Member {n}\n\nWorks on the archive.\n")
    return root


def snapshot(report: importer.ImportReport) -> dict[str, Any]:
    """Everything an import writes, keyed by source path instead of database ids."""
    key: dict[int | None, str | None] = {
        page.pk: page.source_path or f"made in Quire: {page.path}" for page in Page.objects.all()
    }
    return {
        "report": (report.summary(), report.skipped),
        "pages": sorted(
            (
                key[p.pk],
                p.public_id if p.public_id == FIXED_ID else "random",
                p.title,
                p.slug,
                p.path,
                key.get(p.parent_id),
                p.tags,
                p.instructions,
                p.extra_frontmatter,
                p.last_version_number,
                p.live_version.number if p.live_version else None,
                p.archived,
            )
            for p in Page.objects.select_related("live_version")
        ),
        "versions": sorted(
            (
                key[v.page_id],
                v.number,
                v.kind,
                v.status,
                v.title,
                v.body,
                v.proposed_body,
                v.tags,
                key.get(v.parent_id),
                v.instructions,
                v.change_summary,
                v.author_user_id,
                v.author_agent_id,
                v.decided_by_id,
                v.decided_at is None,
                v.decision_comment,
                v.base_version_id,
                v.merged,
                v.edited_by_reviewer,
            )
            for v in Version.objects.all()
        ),
        "search rows": sorted(
            (key[d.page_id], d.title, d.tags, d.body) for d in SearchDocument.objects.all()
        ),
        "search hits": {
            query: [(key[hit.page_id], hit.excerpt) for hit in search.search_pages(query)]
            for query in QUERIES
        },
        "audit": [
            (e.action, e.actor_user_id, key.get(e.page_id), e.version_number, e.outcome, e.data)
            for e in AuditEvent.objects.order_by("pk")
        ],
        "notifications": [
            (n.kind, n.delivery, n.recipient_id, key[n.version.page_id], n.version.number)
            for n in Notification.objects.select_related("version").order_by("pk")
        ],
    }


def import_and_snapshot(root: Path, actor: User, *, publish: bool, chunk_size: int) -> Any:
    """Import into the wiki as it is now, snapshot, and undo the import."""
    savepoint = transaction.savepoint()
    report = importer.import_markdown(root, actor=actor, publish=publish, chunk_size=chunk_size)
    taken = snapshot(report)
    transaction.savepoint_rollback(savepoint)
    return taken


@pytest.mark.parametrize("publish", [True, False])
@pytest.mark.parametrize("chunk_size", [3, importer.CHUNK_SIZE])
def test_it_creates_in_chunks_exactly_what_it_creates_page_by_page(
    tree: Path, admin_user: User, reviewer: User, publish: bool, chunk_size: int
) -> None:
    # A page of Quire's own already holds the slug the folder's page would take.
    page_create(actor=admin_user, title="Guide", body="Ours.", publish=True)

    one_by_one = import_and_snapshot(tree, admin_user, publish=publish, chunk_size=1)
    chunked = import_and_snapshot(tree, admin_user, publish=publish, chunk_size=chunk_size)

    assert chunked == one_by_one
    pages = {row[0]: row[1:] for row in chunked["pages"]}
    assert pages["docs/guide/index.md"][:4] == (FIXED_ID, "Guide", "guide-2", "guide-2")
    assert pages["docs/guide/archive-2.md"][2:4] == ("archive-2", "guide-2/archive-2")
    assert chunked["report"][0] == "imported 15 pages (created 15, updated 0, unchanged 0)"
    assert [path for path, _ in chunked["report"][1]] == ["docs/guide/deep/broken.md"]
    assert len(chunked["audit"]) == 1 + 15
    assert [hit[0] for hit in chunked["search hits"][FIXED_ID]] == (
        ["docs/welcome.md"] if publish else []
    )
    # Published pages notify nobody; proposals owe the reviewer one email each.
    assert len(chunked["notifications"]) == (0 if publish else 15)


@pytest.mark.parametrize("publish", [True, False])
def test_it_imports_a_folder_in_a_constant_number_of_queries(
    tmp_path: Path, admin_user: User, reviewer: User, publish: bool
) -> None:
    counts = []
    for size in (50, 150):
        root = tmp_path / f"folder-{size}"
        for n in range(size):
            write(root, f"sub/page-{n}.md", f"# Page {n}\n\nSome words about page {n}.\n")
        # Each import as a new request would load its actor: the policy keeps what it read of
        # the actor's groups on the user object for the rest of the request.
        actor = User.objects.get(pk=admin_user.pk)
        with CaptureQueriesContext(connection) as queries:
            report = importer.import_markdown(root, actor=actor, publish=publish)
        assert report.created == size + 1  # and the folder's page
        counts.append(len(queries))
    # The lookup of existing pages, then per chunk: the savepoint, the parent lock, the
    # siblings' slugs and places (a new page goes last), the pages, versions, live pointers
    # and search rows (or the reviewers and their notifications) and the audit rows. Page by
    # page it took 16 per page.
    # Proposals add per chunk the workflow assignments above the pages, the reviews and
    # their first revisions, who decides them (reviews.deciders: the step's people, section
    # grants, earlier approvals, the admins when nobody can) and their inbox items. Publishing
    # asks once whether a workflow applies under the folder (nobody publishes around one).
    # Review requests look up the steps' groups' chat webhooks once per chunk. The permission
    # policy reads the importer's groups once (publish and propose are asked of it, issue 46),
    # and a proposal's chat post asks which groups may read it (the grants above, once).
    assert counts[0] <= (27 if publish else 45)
    if connection.vendor == "postgresql":
        assert counts[1] == counts[0]
    else:
        # SQLite splits each INSERT into batches of at most 999 parameters (proposals'
        # review rows are wide: one more batch; so are the delivery rows since emails and
        # chat posts share one table, issue 50: one more).
        assert counts[1] <= counts[0] + (6 if publish else 9)


def test_it_reports_the_one_refused_page_of_a_chunk_and_creates_the_rest(
    tree: Path, admin_user: User
) -> None:
    def progress(sources: list[importer.SourcePage]) -> Iterator[importer.SourcePage]:
        # Someone creates a page with the id that guide/index.md asks for, after the import
        # looked for the ids it would need but before it creates that page.
        page_create(actor=admin_user, title="Taken", body="Mine.", publish=True, public_id=FIXED_ID)
        yield from sources

    report = importer.import_markdown(
        tree, actor=admin_user, publish=True, progress=progress, chunk_size=importer.CHUNK_SIZE
    )

    reasons = dict(report.skipped)
    assert "the page id pg_fixedid2 is taken" in reasons["docs/guide/index.md"]
    # Its folder's pages have no parent page to go under, so they are reported too.
    assert "its folder page (docs/guide/) was not imported" in reasons["docs/guide/archive.md"]
    assert report.created == 9  # welcome.md, the team folder's page and its 7 members
    assert Page.objects.get(source_path="docs/welcome.md").live_version is not None
    assert Page.objects.filter(source_path__startswith="docs/team/").count() == 8


def test_it_changes_nothing_when_imported_again_after_chunks(tree: Path, admin_user: User) -> None:
    importer.import_markdown(tree, actor=admin_user, publish=True, chunk_size=4)
    versions = Version.objects.count()
    events = AuditEvent.objects.count()

    again = importer.import_markdown(tree, actor=admin_user, publish=True, chunk_size=4)

    assert again.summary() == "imported 15 pages (created 0, updated 0, unchanged 15)"
    assert (Version.objects.count(), AuditEvent.objects.count()) == (versions, events)


@pytest.mark.postgres
def test_it_refreshes_the_planners_statistics_as_it_grows_the_page_tables(
    tmp_path: Path, admin_user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL's foreign-key checks keep the plans they made while the page table was
    empty (a scan of the whole table, once per row and key): the import analyzes the page
    tables when its new pages reach ANALYZE_FROM and each time they double, so that they are
    planned again (11,694 tldr pages into an empty wiki: 55 s before, 29 s after)."""
    monkeypatch.setattr(importer, "ANALYZE_FROM", 10)
    root = tmp_path / "many"
    for n in range(45):
        write(root, f"page-{n:02}.md", f"# Page {n}\n\nText {n}.\n")

    with CaptureQueriesContext(connection) as captured:
        report = importer.import_markdown(root, actor=admin_user, publish=True, chunk_size=5)

    assert report.created == 45
    analyzed = [query["sql"] for query in captured if query["sql"].startswith("ANALYZE")]
    # At 10 pages created, then 20, then 40.
    assert analyzed == [f"ANALYZE {', '.join(importer.ANALYZED_TABLES)}"] * 3
