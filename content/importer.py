"""Import a folder of markdown files as pages, idempotently by source key.

A page's source key is the imported folder's own name (or the name given with
`--source-name`) and the file's path inside it, `pages/common/tar.md`, so that two folders
with the same inner layout (`pages/` and `pages.de/`) make two sets of pages. A page that
came from another source is never overwritten: the file is reported and skipped.

Folders become parent pages: a folder's `index.md` (or `README.md`) is its page, otherwise an
empty page named after the folder stands for it (source path `folder/`). Title from the
frontmatter `title`, else the first `# heading`, else the file name; tags from `tags` or
`keywords`; `instructions` and `quire_id` (written by export) are honoured; every other
frontmatter key is kept in `Page.extra_frontmatter`. The body is stored byte for byte as
it follows the frontmatter (a first `# heading` used as the title stays in the body).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.db.models import Q

from core.errors import QuireError
from reviews import outbox
from reviews.actions.create import NewPage, pages_create
from reviews.actions.propose import version_propose
from wiki import services, validators
from wiki.credentials import refuse_credentials
from wiki.models import TITLE_MAX, Page, Version, VersionStatus

MARKDOWN_SUFFIXES = (".md", ".markdown")
FOLDER_PAGE_NAMES = ("index.md", "readme.md")
PAGE_ID_RE = re.compile(r"pg_[a-z2-7]{8}")

_FRONTMATTER_RE = re.compile(r"\A---[ \t]*\n(?:(.*?)\n)?---[ \t]*(?:\n|\Z)", re.DOTALL)
_HEADING_RE = re.compile(r"#[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*")
_FENCE_RE = re.compile(r"(```|~~~)")
# Keys stored before they named their folder were made relative to an unknown folder; a
# migration marked them with this prefix, and the first import that finds one takes it.
LEGACY_KEY_PREFIX = "./"
SOURCE_NAME_MAX = 200
SOURCE_KEY_MAX = 1000  # Page.source_path
# New pages are created this many at a time, each chunk in one transaction.
CHUNK_SIZE = 200

# PostgreSQL's foreign-key checks run plans that each session keeps; made while the page
# table was still small (a new wiki's first import), they scan it whole, once per row and
# key: an import into an empty wiki slowed as it grew (11,694 tldr pages: commits of 20 ms
# at the start, 600 ms at the end; 384 million rows read). The import refreshes the tables'
# statistics when its new pages reach this many, and again each time they double, which
# makes PostgreSQL plan those checks again, by index (that import: 55 s -> 29 s).
ANALYZE_FROM = 1_000
ANALYZED_TABLES = ("wiki_page", "wiki_version", "wiki_searchdocument", "wiki_pagechunk")


class _FrontmatterLoader(yaml.SafeLoader):
    """YAML without implicit timestamps: a date stays the string it was written as."""


_FrontmatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


Progress = Callable[[list["SourcePage"]], Iterable["SourcePage"]]


class BadFile(Exception):
    """A source file that cannot be imported; the message says why."""


@dataclass(frozen=True)
class SourcePage:
    """One page to import: from a markdown file, or standing for a folder with no page file."""

    # The source key: the source name, then the path in the folder, posix: "docs/a/b.md",
    # "docs/a/index.md" or, for a folder with no page file, "docs/a/".
    source_path: str
    parent_folder: str | None  # the folder whose page is the parent ("docs/a"), None at the root
    folder: str | None  # for a folder's page: the folder it stands for
    title: str
    body: str
    tags: list[str]
    instructions: str = ""
    extra_frontmatter: dict[str, Any] = field(default_factory=dict)
    quire_id: str | None = None
    position: int | None = None  # `quire_position`: its place among its siblings (export)


@dataclass
class ImportReport:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def imported(self) -> int:
        return self.created + self.updated + self.unchanged

    def summary(self) -> str:
        return (
            f"imported {self.imported} pages (created {self.created}, "
            f"updated {self.updated}, unchanged {self.unchanged})"
        )


# --- reading the source tree ------------------------------------------------------------


def humanise(name: str) -> str:
    """A title from a file or folder name: `paid-parental_leave` -> `Paid parental leave`."""
    words = " ".join(re.split(r"[-_\s]+", name)).strip() or name
    return words[:1].upper() + words[1:]


def split_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """The YAML frontmatter of `text` as a dict, and the body after it, byte for byte."""
    match = _FRONTMATTER_RE.match(text)
    if match is None:
        if re.match(r"---[ \t]*\n", text):
            raise BadFile("the frontmatter that starts on line 1 is never closed with ---")
        return {}, text
    try:
        # A SafeLoader subclass: no arbitrary Python objects.
        meta = yaml.load(match.group(1) or "", Loader=_FrontmatterLoader)  # noqa: S506
    except yaml.YAMLError as error:
        where = getattr(error, "problem_mark", None)
        line = f" (line {where.line + 2})" if where is not None else ""
        problem = getattr(error, "problem", None) or "invalid YAML"
        raise BadFile(f"the frontmatter is not valid YAML{line}: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise BadFile("the frontmatter must be a mapping of keys to values")
    return {str(key): value for key, value in meta.items()}, text[match.end() :]


def first_heading(body: str) -> str | None:
    """The text of the first level-one `# heading` outside code fences."""
    in_fence = False
    for line in body.splitlines():
        if _FENCE_RE.match(line.lstrip()):
            in_fence = not in_fence
            continue
        if not in_fence:
            match = _HEADING_RE.fullmatch(line)
            if match:
                return match.group(1)
    return None


def shortened_title(title: str) -> str:
    """`title` cut to TITLE_MAX characters between words, with an ellipsis."""
    cut = title[: TITLE_MAX - 1]
    space = cut.rfind(" ")
    if space > TITLE_MAX // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-\u2013\u2014") + "…"


def _tag_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part for part in value.split(",")]
    if isinstance(value, list) and all(isinstance(t, str | int | float) for t in value):
        return [str(t) for t in value]
    raise BadFile("tags must be a list of words or a comma-separated string")


def _checked_frontmatter(meta: dict[str, Any]) -> dict[str, Any]:
    """The kept frontmatter is stored and exported again: no credential in it either (its
    lines are counted as YAML writes them, one key or item to a line)."""
    if meta:
        shown = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
        refuse_credentials(shown, field="frontmatter", name="the frontmatter")
    return meta


def parse_source(
    *, text: str, source_path: str, parent_folder: str | None, folder: str | None
) -> SourcePage:
    """Read one markdown file's text into a SourcePage, validated against Quire's limits."""
    meta, body = split_frontmatter(text.replace("\r\n", "\n"))
    raw_title = meta.pop("title", None)
    if isinstance(raw_title, list | dict):
        raise BadFile("the title must be text")
    if "tags" in meta:
        raw_tags = meta.pop("tags")
    else:
        raw_tags = meta.pop("keywords", None)
    instructions = meta.pop("instructions", None) or ""
    if not isinstance(instructions, str):
        raise BadFile("instructions must be text (markdown)")
    quire_id = meta.pop("quire_id", None)
    if quire_id is not None and not (isinstance(quire_id, str) and PAGE_ID_RE.fullmatch(quire_id)):
        raise BadFile("quire_id must be pg_ followed by 8 characters (a-z, 2-7)")
    position = meta.pop("quire_position", None)
    if position is not None and (
        isinstance(position, bool) or not isinstance(position, int) or not 0 <= position < 2**31
    ):
        raise BadFile("quire_position must be a whole number, 0 or more (its place among siblings)")
    name = PurePosixPath(folder if folder is not None else source_path)
    heading = first_heading(body)
    if raw_title is not None and str(raw_title).strip():
        title, from_heading = str(raw_title).strip(), False
    else:
        title = heading or humanise(name.stem if folder is None else name.name)
        from_heading = heading is not None
    # As a reader of the rendered page sees it: `C&oacute;mo` is "Cómo" (a title with an
    # entity reached titles, addresses and what agents and the consent screen were shown).
    # Joiners typed beside a space join nothing (and are refused); the page keeps them.
    title = validators.without_idle_joiners(html.unescape(title))
    if len(title) > TITLE_MAX:
        # Too long for a title, not for the page: shortened here, whole in the body (where a
        # heading already has it; a frontmatter title becomes the body's first heading).
        if not from_heading:
            body = f"# {title}\n\n{body}"
        title = shortened_title(title)
    try:
        json.dumps(meta)
    except (TypeError, ValueError):
        raise BadFile(
            "the frontmatter holds values that are not plain text, numbers or lists"
        ) from None
    try:
        return SourcePage(
            source_path=source_path,
            parent_folder=parent_folder,
            folder=folder,
            title=validators.validate_title(title),
            body=validators.validate_markdown(body, field="body"),
            tags=validators.validate_tags(_tag_list(raw_tags)),
            instructions=validators.validate_markdown(instructions, field="instructions"),
            extra_frontmatter=_checked_frontmatter(meta),
            quire_id=quire_id,
            position=position,
        )
    except QuireError as error:
        raise BadFile(error.message) from None


def _read_text(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise BadFile(
            f"it is not UTF-8 text (byte {error.start} is not valid); save it as UTF-8"
        ) from None


def _sort_key(path: Path) -> list[Any]:
    # Natural order by name without extension, so "foo" comes before "foo-2" and "step-10"
    # after "step-9": siblings get their slugs in the order an export wrote them.
    stem = path.stem if path.is_file() else path.name
    parts = re.split(r"(\d+)", stem.lower())
    return [int(p) if i % 2 else p for i, p in enumerate(parts)] + [path.is_dir()]


def _folder_page_file(directory: Path) -> Path | None:
    by_name = {p.name.lower(): p for p in directory.iterdir() if p.is_file()}
    for name in FOLDER_PAGE_NAMES:
        if name in by_name:
            return by_name[name]
    return None


def _is_visible(path: Path) -> bool:
    return not path.name.startswith(".")


def _is_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES and path.is_file()


def _holds_markdown(directory: Path) -> bool:
    """Whether a folder has markdown files anywhere below it (a folder of images does not)."""
    for entry in filter(_is_visible, directory.iterdir()):
        if _is_markdown(entry) or (
            entry.is_dir() and not entry.is_symlink() and _holds_markdown(entry)
        ):
            return True
    return False


def source_name_for(root: Path, explicit: str | None = None) -> str:
    """The first part of every source key of an import of `root`: its folder name by default.

    Raises ValueError with a sentence saying what to pass instead.
    """
    name = (explicit if explicit is not None else root.resolve().name).strip()
    if not name:
        raise ValueError(
            f"{root} has no folder name to key its pages by; name the source with "
            "--source-name NAME."
        )
    if "/" in name or "\\" in name or name.startswith(".") or len(name) > SOURCE_NAME_MAX:
        raise ValueError(
            f"the source name {name[:50]!r} must be 1 to {SOURCE_NAME_MAX} characters without "
            "slashes and must not start with a dot; choose another --source-name."
        )
    return name


def legacy_key(source_path: str) -> str:
    """The key the page for `source_path` had before keys named their folder."""
    return LEGACY_KEY_PREFIX + source_path.split("/", 1)[1]


def read_source_tree(
    root: Path, *, source_name: str | None = None
) -> tuple[list[SourcePage], list[tuple[str, str]]]:
    """Every page under `root`, parents before children, and the files skipped with reasons.

    Paths (keys, folders and skipped files alike) start with the source name.
    """
    pages: list[SourcePage] = []
    skipped: list[tuple[str, str]] = []
    name = source_name_for(root, source_name)

    def key(path: Path) -> str:
        return f"{name}/{path.relative_to(root).as_posix()}"

    def read_file(path: Path, *, parent_folder: str | None, folder: str | None) -> bool:
        rel = key(path)
        if len(rel) > SOURCE_KEY_MAX:
            skipped.append((rel, f"its path is longer than {SOURCE_KEY_MAX} characters"))
            return False
        try:
            pages.append(
                parse_source(
                    text=_read_text(path),
                    source_path=rel,
                    parent_folder=parent_folder,
                    folder=folder,
                )
            )
        except BadFile as error:
            skipped.append((rel, str(error)))
            return False
        except OSError as error:
            skipped.append((rel, f"it could not be read ({error.strerror})"))
            return False
        return True

    def walk(directory: Path, folder: str | None) -> None:
        page_file = _folder_page_file(directory) if folder is not None else None
        for entry in sorted(filter(_is_visible, directory.iterdir()), key=_sort_key):
            if entry.is_dir():
                # Symlinked folders could loop back on themselves; empty ones make no page.
                if entry.is_symlink() or not _holds_markdown(entry):
                    continue
                sub = key(entry)
                sub_file = _folder_page_file(entry)
                if sub_file is None or not read_file(sub_file, parent_folder=folder, folder=sub):
                    # A folder without a readable page of its own still holds its children.
                    pages.append(
                        SourcePage(
                            source_path=f"{sub}/",
                            parent_folder=folder,
                            folder=sub,
                            title=humanise(entry.name)[:200],
                            body="",
                            tags=[],
                        )
                    )
                walk(entry, sub)
            elif _is_markdown(entry) and entry != page_file:
                read_file(entry, parent_folder=folder, folder=None)

    walk(root, None)
    return pages, skipped


# --- writing pages ------------------------------------------------------------------------


def _current_version(page: Page, actor: User) -> Version | None:
    """What the page says now from the importer's point of view: its own pending proposal,
    else the live version, else the newest one."""
    pending = (
        page.versions.filter(status=VersionStatus.IN_REVIEW, author_user=actor)
        .order_by("-number")
        .first()
    )
    if pending is not None:
        return pending
    if page.live_version is not None:
        return page.live_version
    return page.versions.order_by("-number").first()


def _existing_pages(sources: list[SourcePage]) -> tuple[dict[str, Page], dict[str, Page]]:
    """The pages already imported from these sources, by source key and by public id.

    A page still under its key from before keys named their folder is found by that key.
    """
    by_path: dict[str, Page] = {}
    by_id: dict[str, Page] = {}
    legacy: dict[str, Page] = {}
    pages = Page.objects.select_related("live_version")
    for start in range(0, len(sources), 500):
        chunk = sources[start : start + 500]
        paths = [s.source_path for s in chunk]
        old_paths = [legacy_key(s.source_path) for s in chunk]
        ids = [s.quire_id for s in chunk if s.quire_id is not None]
        found = pages.filter(
            Q(source_path__in=paths) | Q(source_path__in=old_paths) | Q(public_id__in=ids)
        )
        for page in found:
            if page.source_path is not None and page.source_path.startswith(LEGACY_KEY_PREFIX):
                legacy[page.source_path] = page
            elif page.source_path is not None:
                by_path[page.source_path] = page
            by_id[page.public_id] = page
    for source in sources:
        old = legacy.get(legacy_key(source.source_path))
        if old is not None and source.source_path not in by_path:
            by_path[source.source_path] = old
    return by_path, by_id


def _other_source(page: Page, source_name: str) -> str | None:
    """The source another import made `page` from, or None when it is free to update.

    Pages made in Quire itself, by an earlier import of this source, or under a key from
    before keys named their folder may be updated.
    """
    key = page.source_path
    if key is None or key.startswith(LEGACY_KEY_PREFIX) or key.startswith(f"{source_name}/"):
        return None
    return key


def _summary(source: SourcePage) -> str:
    return f"Imported from {source.source_path}."


def _new_page(source: SourcePage, *, parent: Page | None, public_id: str | None) -> NewPage:
    return NewPage(
        title=source.title,
        body=source.body,
        parent=parent,
        tags=source.tags,
        instructions=source.instructions,
        change_summary=_summary(source),
        source_path=source.source_path,
        extra_frontmatter=source.extra_frontmatter,
        public_id=public_id,
    )


@transaction.atomic
def _import_one(
    source: SourcePage,
    *,
    page: Page | None,
    public_id: str | None,
    parent: Page | None,
    actor: User,
    publish: bool,
) -> tuple[str, Page]:
    """Create or update the page for `source`; returns ("created"|"updated"|"unchanged", page).

    `page` is the page imported from the same source path (or with its `quire_id`) before.
    Atomic, so that a refused change leaves the page's import metadata as it was too.
    """
    if page is None:
        new = _new_page(source, parent=parent, public_id=public_id)
        (version,) = pages_create(actor=actor, pages=[new], publish=publish)
        return "created", version.page
    if page.archived:
        raise BadFile(
            f"its page {page.public_id} is archived; restore it in Quire to import it again"
        )
    outcome = "unchanged"
    if page.source_path != source.source_path or page.extra_frontmatter != (
        source.extra_frontmatter
    ):
        renamed_only = page.extra_frontmatter == source.extra_frontmatter and (
            page.source_path == legacy_key(source.source_path)
        )
        services.page_set_import_metadata(
            actor=actor,
            page=page,
            source_path=source.source_path,
            extra_frontmatter=source.extra_frontmatter,
        )
        # Taking over a key from before keys named their folder changes nothing a person sees.
        outcome = "unchanged" if renamed_only else "updated"
    # Publishing compares with what readers see; a proposal compares with what waits.
    current = page.live_version if publish else _current_version(page, actor)
    wanted_parent_id = parent.pk if parent is not None else None
    if current is None or (
        current.title,
        current.body,
        current.tags,
        current.instructions,
        current.parent_id,
    ) != (source.title, source.body, source.tags, source.instructions, wanted_parent_id):
        version_propose(
            actor=actor,
            page=page,
            body=source.body,
            title=source.title,
            tags=source.tags,
            parent=parent,
            instructions=source.instructions,
            change_summary=_summary(source),
            publish=publish,
        )
        outcome = "updated"
    return outcome, page


@dataclass
class _NewPages:
    """New pages waiting to be created together, in one transaction (`pages_create`)."""

    items: list[tuple[SourcePage, Page | None, str | None]] = field(default_factory=list)
    folders: set[str] = field(default_factory=set)
    quire_ids: set[str] = field(default_factory=set)

    def add(self, source: SourcePage, *, parent: Page | None, public_id: str | None) -> None:
        self.items.append((source, parent, public_id))
        if source.folder is not None:
            self.folders.add(source.folder)
        if source.quire_id is not None:
            self.quire_ids.add(source.quire_id)

    def needed_by(self, source: SourcePage) -> bool:
        """Whether deciding on `source` needs these pages made first: its folder's page, or
        the page that takes the id it asks for."""
        return source.parent_folder in self.folders or source.quire_id in self.quire_ids

    def take(self) -> list[tuple[SourcePage, Page | None, str | None]]:
        items = self.items
        self.items, self.folders, self.quire_ids = [], set(), set()
        return items


class _Statistics:
    """Refreshes the planner's statistics of the page tables as an import grows them (on
    PostgreSQL; see ANALYZE_FROM)."""

    def __init__(self) -> None:
        self.next_at = ANALYZE_FROM

    def refresh_if_grown(self, created: int) -> None:
        if connection.vendor != "postgresql" or created < self.next_at:
            return
        self.next_at = 2 * created
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {', '.join(ANALYZED_TABLES)}")


class _ImportRun:
    """One run of `import_pages`: what it has made and refused so far, and the chunk of new
    pages waiting to be created together."""

    def __init__(
        self,
        sources: list[SourcePage],
        *,
        actor: User,
        publish: bool,
        report: ImportReport,
        source_name: str,
    ) -> None:
        self.actor, self.publish, self.report, self.source_name = (
            actor,
            publish,
            report,
            source_name,
        )
        self.folder_pages: dict[str, Page] = {}
        self.by_path, self.by_id = _existing_pages(sources)
        self.run_paths = {source.source_path for source in sources}
        self.claimed: set[int] = set()
        self.missing_folders: set[str] = set()
        self.new_pages = _NewPages()
        self.placed: dict[int, int] = {}
        self.statistics = _Statistics()

    def done(self, source: SourcePage, outcome: str, page: Page) -> None:
        setattr(self.report, outcome, getattr(self.report, outcome) + 1)
        if source.position is not None:
            self.placed[page.pk] = source.position
        self.claimed.add(page.pk)
        self.by_id[page.public_id] = page
        if source.folder is not None:
            self.folder_pages[source.folder] = page

    def refused(self, source: SourcePage, reason: str) -> None:
        self.report.skipped.append((source.source_path, reason))
        if source.folder is not None:
            self.missing_folders.add(source.folder)

    def import_one(
        self,
        source: SourcePage,
        *,
        existing: Page | None,
        parent: Page | None,
        public_id: str | None,
    ) -> None:
        try:
            outcome, page = _import_one(
                source,
                page=existing,
                public_id=public_id,
                parent=parent,
                actor=self.actor,
                publish=self.publish,
            )
        except (BadFile, QuireError) as error:
            self.refused(source, str(error))
            return
        self.done(source, outcome, page)

    def create_new_pages(self) -> None:
        chunk = self.new_pages.take()
        if not chunk:
            return
        self.statistics.refresh_if_grown(self.report.created)
        try:
            versions = pages_create(
                actor=self.actor,
                pages=[_new_page(s, parent=parent, public_id=id_) for s, parent, id_ in chunk],
                publish=self.publish,
            )
        except (QuireError, DatabaseError):
            for source, parent, public_id in chunk:
                self.import_one(source, existing=None, parent=parent, public_id=public_id)
            return
        for (source, _, _), version in zip(chunk, versions, strict=True):
            self.done(source, "created", version.page)

    def claimed_elsewhere(self, source: SourcePage, page: Page) -> bool:
        """Whether `page`, which `source`'s quire_id names, was imported from another source
        that this import does not overwrite (then `source` is refused, saying so)."""
        if page.source_path in self.run_paths:
            return False
        other = _other_source(page, self.source_name)
        if other is None:
            return False
        self.create_new_pages()
        self.refused(
            source,
            f"its quire_id {page.public_id} is a page imported from "
            f"{other}, which this import does not overwrite; import that "
            "source again to update it, or remove quire_id from this file "
            "to import it as a new page",
        )
        return True

    def take(self, source: SourcePage, chunk_size: int) -> None:
        """Decide on one source: wait in the chunk of new pages, update its page, or refuse."""
        if len(self.new_pages.items) >= chunk_size or self.new_pages.needed_by(source):
            self.create_new_pages()
        if source.parent_folder is not None and source.parent_folder in self.missing_folders:
            self.create_new_pages()  # the report keeps the order of the files
            self.refused(source, f"its folder page ({source.parent_folder}/) was not imported")
            return
        parent = self.folder_pages.get(source.parent_folder) if source.parent_folder else None
        existing = self.by_path.get(source.source_path)
        by_quire_id = self.by_id.get(source.quire_id) if source.quire_id is not None else None
        # An exported file finds its page by id, unless that page belongs to another file
        # of this import; a new page keeps the id only while no other page has it.
        if existing is None and by_quire_id is not None and by_quire_id.pk not in self.claimed:
            if self.claimed_elsewhere(source, by_quire_id):
                return
            existing = by_quire_id
        public_id = source.quire_id if by_quire_id is None else None
        if existing is None:
            self.new_pages.add(source, parent=parent, public_id=public_id)
            return
        self.create_new_pages()
        self.import_one(source, existing=existing, parent=parent, public_id=public_id)


def import_pages(
    sources: list[SourcePage],
    *,
    actor: User,
    publish: bool,
    report: ImportReport,
    source_name: str,
    progress: Progress | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> None:
    """Create or update a page for each source, in order (parents come first).

    Consecutive new pages are created together, up to `chunk_size` in one transaction; when
    one of them is refused, that chunk is made page by page so the error names its file.
    A file whose `quire_id` names a page that another source made is reported, not applied.
    """
    run = _ImportRun(sources, actor=actor, publish=publish, report=report, source_name=source_name)
    for source in progress(sources) if progress is not None else sources:
        run.take(source, chunk_size)
    run.create_new_pages()
    if run.placed:
        # Exported places put back: siblings come back in the order they were exported in.
        services.pages_place(actor=actor, places=run.placed)


def import_markdown(
    root: Path,
    *,
    actor: User,
    publish: bool,
    source_name: str | None = None,
    progress: Progress | None = None,
    chunk_size: int = CHUNK_SIZE,
) -> ImportReport:
    """Import every markdown file under `root`; bad files are reported and skipped.

    Keys start with `source_name`, by default the folder's own name (ValueError when that
    cannot be a key).
    """
    name = source_name_for(root, source_name)
    sources, skipped = read_source_tree(root, source_name=name)
    report = ImportReport(skipped=skipped)
    # Pages imported for review: one summary email per reviewer, not one per page.
    with outbox.batched(), _commits_without_waiting():
        import_pages(
            sources,
            actor=actor,
            publish=publish,
            report=report,
            source_name=name,
            progress=progress,
            chunk_size=chunk_size,
        )
    return report


@contextmanager
def _commits_without_waiting() -> Iterator[None]:
    """On PostgreSQL, let each commit return before its WAL reaches the disk.

    An import commits once per chunk of new pages and once per changed page, and waiting
    for the disk is much of its time. A crash can lose only the last fraction of a second
    of pages, never corrupt anything, and an import is idempotent: running it again brings
    those pages in.
    """
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO off")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET synchronous_commit")
