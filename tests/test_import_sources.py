"""import_markdown source keys: the folder's name in every key, no overwrites across sources."""

from __future__ import annotations

import importlib
import io
import re
import tarfile
from pathlib import Path

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.conftest import CORPUS
from tests.prerequisites import require_corpus
from wiki.models import Page, Version

TLDR = CORPUS / "tldr-pages.tar.gz"


@pytest.fixture
def tldr_archive() -> Path:
    require_corpus(TLDR)
    return TLDR


FILES = ("common/tar.md", "common/ls.md", "common/cp.md", "linux/apt.md")

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("tldr_archive"),
]


def extract(tmp_path: Path, *folders: str) -> None:
    """A few tldr pages of each folder (same inner layout in every language) into tmp_path."""
    wanted = {f"{folder}/{name}" for folder in folders for name in FILES}
    with tarfile.open(TLDR) as archive:
        members = [m for m in archive.getmembers() if m.name in wanted]
        assert len(members) == len(wanted)
        archive.extractall(tmp_path, members=members, filter="data")


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("import_markdown", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def counts(stdout: str) -> tuple[int, int, int]:
    match = re.search(r"\(created (\d+), updated (\d+), unchanged (\d+)\)", stdout)
    assert match, stdout
    created, updated, unchanged = map(int, match.groups())
    return created, updated, unchanged


def live_body(source_path: str) -> str:
    page = Page.objects.select_related("live_version").get(source_path=source_path)
    assert page.live_version is not None
    return page.live_version.body


def test_it_keeps_both_sets_when_two_folders_share_a_layout(
    admin_user: User, tmp_path: Path
) -> None:
    extract(tmp_path, "pages", "pages.de")

    run(str(tmp_path / "pages"), "--publish")
    stdout, stderr = run(str(tmp_path / "pages.de"), "--publish")

    assert (counts(stdout), stderr) == ((6, 0, 0), "")  # 4 files and 2 folder pages
    assert "Archiving utility" in live_body("pages/common/tar.md")
    assert "Archivierungstool" in live_body("pages.de/common/tar.md")
    assert Page.objects.filter(source_path__startswith="pages/").count() == 6
    assert Page.objects.filter(source_path__startswith="pages.de/").count() == 6
    german = Page.objects.get(source_path="pages.de/common/tar.md")
    assert german.parent is not None and german.parent.source_path == "pages.de/common/"


def test_it_changes_nothing_when_one_folder_is_imported_again(
    admin_user: User, tmp_path: Path
) -> None:
    extract(tmp_path, "pages", "pages.de")
    run(str(tmp_path / "pages"), "--publish")
    run(str(tmp_path / "pages.de"), "--publish")
    before = list(Version.objects.order_by("pk").values_list("pk", "page_id", "status"))

    stdout, stderr = run(str(tmp_path / "pages.de"), "--publish")

    assert (counts(stdout), stderr) == ((0, 0, 6), "")
    assert list(Version.objects.order_by("pk").values_list("pk", "page_id", "status")) == before


def test_it_keys_pages_by_the_source_name_given_on_the_command_line(
    admin_user: User, tmp_path: Path
) -> None:
    extract(tmp_path, "pages")

    run(str(tmp_path / "pages"), "--publish", "--source-name", "tldr-en")
    stdout, _ = run(str(tmp_path / "pages"), "--publish", "--source-name", "tldr-en")

    assert counts(stdout) == (0, 0, 6)
    assert "Archiving utility" in live_body("tldr-en/common/tar.md")
    with pytest.raises(CommandError, match="--source-name"):
        run(str(tmp_path / "pages"), "--source-name", "../elsewhere")


def test_it_reports_a_collision_with_a_page_from_another_source(
    admin_user: User, tmp_path: Path
) -> None:
    extract(tmp_path, "pages")
    run(str(tmp_path / "pages"), "--publish")
    english = Page.objects.get(source_path="pages/common/tar.md")
    body = live_body("pages/common/tar.md")
    # A file that claims the English page by id, in a folder of another name.
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "tar.md").write_text(
        f"---\nquire_id: {english.public_id}\n---\n# tar\n\nSomething else entirely.\n"
    )

    stdout, stderr = run(str(tmp_path / "other"), "--publish")

    assert counts(stdout) == (0, 0, 0)
    assert f"skipped other/tar.md: its quire_id {english.public_id} is a page imported " in stderr
    assert "from pages/common/tar.md" in stderr
    assert live_body("pages/common/tar.md") == body
    assert english.versions.count() == 1


def test_it_takes_over_pages_imported_under_keys_without_their_folder(
    admin_user: User, tmp_path: Path
) -> None:
    extract(tmp_path, "pages", "pages.de")
    run(str(tmp_path / "pages"), "--publish")
    # As an earlier Quire stored them: relative to the imported folder.
    for page in Page.objects.all():
        page.source_path = (page.source_path or "").removeprefix("pages/")
        page.save(update_fields=["source_path"])
    migration = importlib.import_module("wiki.migrations.0007_import_source_keys")
    migration.mark_legacy_keys(apps, None)
    assert Page.objects.filter(source_path="./common/tar.md").exists()
    versions = Version.objects.count()

    stdout, stderr = run(str(tmp_path / "pages"), "--publish")
    german, _ = run(str(tmp_path / "pages.de"), "--publish")

    assert (counts(stdout), stderr) == ((0, 0, 6), "")
    assert Version.objects.count() == versions + 6  # only the German pages are new
    assert counts(german) == (6, 0, 0)
    assert "Archiving utility" in live_body("pages/common/tar.md")
    assert not Page.objects.filter(source_path__startswith="./").exists()
