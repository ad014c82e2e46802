"""Every read an agent makes, scoped to its page set in one place.

An entry covers its page and every descendant (a page whose path starts with the entry
page's path and a slash). Agents see live, non-archived pages only. Each selector costs a
fixed number of queries whatever the size of the set.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.db import DEFAULT_DB_ALIAS, connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BooleanField, Exists, F, Func, OuterRef, Q, QuerySet
from django.db.models.signals import post_delete, post_save
from django.db.models.sql.compiler import SQLCompiler
from django.dispatch import receiver

from agents.models import Agent, PageRead, PageSetEntry
from agents.services import token_hash
from core.errors import NotFound, NotInSet
from wiki.models import READABLE_SQL, Attachment, Page, Version, VersionStatus, tree_key
from wiki.search import SetScope


@dataclass(frozen=True)
class SetPage:
    """A page as the agent's set offers it, with the use-when lines of the entry covering it."""

    page: Page
    entry: PageSetEntry
    use_when: list[str]
    always_include: bool


# Every MCP request starts by finding its agent: a process keeps what it found for a few
# seconds. Any change to an agent (rotate, revoke, edit) empties it at once and again on
# commit; another process sees the change when its copy expires.
TOKEN_CACHE_SECONDS = 5.0
_agents_by_token_hash: dict[str, tuple[float, Agent]] = {}


def agent_by_token(token: str) -> Agent | None:
    """The active agent whose bearer token this is, or None: the one place where a token
    becomes an agent."""
    if not token:
        return None
    digest = token_hash(token)
    now = time.monotonic()
    cached = _agents_by_token_hash.get(digest)
    if cached is not None and cached[0] > now:
        return cached[1]
    agent = Agent.objects.filter(token_hash=digest, is_active=True).first()
    if agent is not None:
        _agents_by_token_hash[digest] = (now + TOKEN_CACHE_SECONDS, agent)
    return agent


def forget_agent_tokens() -> None:
    """Empty the token cache, so the next request reads its agent afresh."""
    _agents_by_token_hash.clear()


@receiver(post_save, sender=Agent)
@receiver(post_delete, sender=Agent)
def _agent_changed(**kwargs: Any) -> None:
    # Now, for this transaction's own requests (and tests), and on commit, in case another
    # request cached the old row in between.
    forget_agent_tokens()
    transaction.on_commit(forget_agent_tokens)


def agent_by_name(name: str) -> Agent:
    """The agent called `name`, for the command line; NotFound says how to list them."""
    agent = Agent.objects.filter(name=name).first()
    if agent is None:
        raise NotFound(f"there is no agent named {name!r}; the Django admin lists the agents.")
    return agent


# Past this many entries the coverage stays a subquery: a long OR of path prefixes would
# exceed SQLite's expression depth limit.
PREFIX_CONDITIONS_MAX = 100


class _CoveredBySet(Func):
    """True for a page (the row) that one of the agent's entries covers: the entry's page
    itself, or a page whose path starts with the entry page's path and a slash.

    Written as one SQL fragment (the same on PostgreSQL and SQLite) rather than an ORM
    subquery: it is compiled on every tool call, and Django spent milliseconds building the
    equivalent `Exists` (with its escaped LIKE pattern) for a check that runs in microseconds.
    """

    output_field = BooleanField()
    SQL = (
        "EXISTS (SELECT 1 FROM agents_pagesetentry set_entry "
        "INNER JOIN wiki_page set_page ON set_page.id = set_entry.page_id "
        "WHERE set_entry.agent_id = %s AND (set_entry.page_id = {page_id} "
        "OR substr({path}, 1, length(set_page.path) + 1) = set_page.path || '/'))"
    )

    def __init__(self, agent_id: int) -> None:
        super().__init__(F("pk"), F("path"))
        self.agent_id = agent_id

    def as_sql(  # type: ignore[override]
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper, **extra: Any
    ) -> tuple[str, list[Any]]:
        page_id, path = self.get_source_expressions()
        page_id_sql, page_id_params = compiler.compile(page_id)
        path_sql, path_params = compiler.compile(path)
        sql = self.SQL.format(page_id=page_id_sql, path=path_sql)
        return sql, [self.agent_id, *page_id_params, *path_params]


def _covered(agent: Agent, entries: list[tuple[int, str]] | None = None) -> _CoveredBySet | Q:
    """The one statement of the agent's set: true for a page (the row) that one of its
    entries covers, the entry's page itself or any page under it.

    Given the entries as (page id, path) pairs, the prefixes are spelled out and cost a few
    comparisons per page instead of a subquery over the entries for each page.
    """
    if entries is None or len(entries) > PREFIX_CONDITIONS_MAX:
        return _CoveredBySet(agent.pk)
    covered = Q(pk__in=[page_id for page_id, _ in entries])
    for path in dict.fromkeys(path for _, path in entries):
        covered |= Q(path__startswith=path + "/")
    return covered


def visible_pages(agent: Agent) -> QuerySet[Page]:
    """The pages the agent may read: readable (live, not archived) and covered by its set."""
    return Page.objects.readable().filter(_covered(agent))


def set_pages(agent: Agent) -> QuerySet[Page]:
    """The pages the agent's set covers that are not archived, live or not (yet)."""
    return Page.objects.filter(_covered(agent), archived=False)


def _visible_among(agent: Agent, entries: list[tuple[int, str]]) -> QuerySet[Page]:
    """`visible_pages`, given the agent's entries as (page id, path) pairs."""
    if not entries:
        return Page.objects.none()
    return Page.objects.readable().filter(_covered(agent, entries))


def search_scope(agent: Agent) -> QuerySet[Page]:
    """`visible_pages` for a search to embed as a subquery; costs one query (the entries)."""
    entries = list(PageSetEntry.objects.filter(agent=agent).values_list("page_id", "page__path"))
    return _visible_among(agent, entries)


def search_set_scope(agent: Agent, *, under: str | None = None) -> SetScope:
    """The agent's set for `search_pages`, in one query (the entries); `under` narrows it
    to a page id's subtree or a path's."""
    # An entry whose page has no children covers that page alone: no path range for it, so
    # a set of single pages is a list of keys, which the planner counts right.
    has_children = Exists(Page.objects.filter(parent_id=OuterRef("page_id")))
    entries = list(
        PageSetEntry.objects.filter(agent=agent)
        .annotate(has_children=has_children)
        .values_list("page_id", "page__path", "has_children")
    )
    under_path = None
    if under:
        under = under.strip()
        if under.startswith("pg_"):
            under_path = Page.objects.filter(public_id=under).values_list("path", flat=True).first()
            if under_path is None:
                raise no_such_page(under)
        else:
            under_path = under.strip("/")
    return SetScope(
        page_ids=tuple(page_id for page_id, _, _ in entries),
        paths=tuple(dict.fromkeys(path for _, path, children in entries if children)),
        under=under_path,
    )


def no_such_page(public_id: str) -> NotFound:
    return NotFound(
        f"there is no page {public_id} that you can read. "
        "Call browse to list the pages you can use."
    )


def _not_in_set(public_id: str) -> NotInSet:
    return NotInSet(
        f"page {public_id} is not in your page set. Call browse to list the pages you can "
        "use, or ask an admin to add this one."
    )


class ReadablePage(NamedTuple):
    """A page as get_page reads it: the page and its live version, in one row."""

    pk: int
    public_id: str
    path: str
    title: str
    tags: list[str]
    instructions: str
    body: str
    version_number: int
    published_at: datetime
    has_files: bool


# get_page's read, on every call: plain SQL, so that no queryset is built and compiled each
# time. The set check is the one statement of the set (`_CoveredBySet`).
_READABLE_PAGE_SQL = f"""
    SELECT p.id, p.public_id, p.path, v.title, v.tags, v.instructions, v.body, v.number,
           COALESCE(v.decided_at, v.created_at),
           EXISTS (SELECT 1 FROM wiki_attachment a WHERE a.page_id = p.id),
           {_CoveredBySet.SQL.format(page_id="p.id", path="p.path")}
    FROM wiki_page p
    JOIN wiki_version v ON v.id = p.live_version_id
    WHERE p.public_id = %s AND {READABLE_SQL.format(p="p.")}
"""  # noqa: S608 - only constants are interpolated


def _aware(moment: datetime | str) -> datetime:
    """A timestamp as the ORM gives it: SQLite returns UTC as text."""
    if isinstance(moment, str):
        return datetime.fromisoformat(moment).replace(tzinfo=UTC)
    return moment


def readable_page_for_agent(agent: Agent, public_id: str) -> ReadablePage:
    """The live page `public_id` with its live version, if the agent's set covers it."""
    with connection.cursor() as cursor:
        cursor.execute(_READABLE_PAGE_SQL, [agent.pk, public_id])
        row = cursor.fetchone()
    if row is None:
        raise no_such_page(public_id)
    *columns, has_files, in_set = row
    if not in_set:
        raise _not_in_set(public_id)
    pk, public_id, path, title, tags, instructions, body, number, published_at = columns
    return ReadablePage(
        pk=pk,
        public_id=public_id,
        path=path,
        title=title,
        tags=json.loads(tags) if isinstance(tags, str) else tags,
        instructions=instructions,
        body=body,
        version_number=number,
        published_at=_aware(published_at),
        has_files=bool(has_files),
    )


def page_for_agent(agent: Agent, public_id: str) -> Page:
    """The live page `public_id` with its live version, if the agent's set covers it."""
    page = (
        Page.objects.readable()
        .select_related("live_version")
        .annotate(in_set=_covered(agent))
        .filter(public_id=public_id)
        .first()
    )
    if page is None:
        raise no_such_page(public_id)
    if not page.in_set:  # type: ignore[attr-defined]
        raise _not_in_set(public_id)
    return page


def page_files(page: ReadablePage) -> list[tuple[str, str]]:
    """The (name, extracted text) of a page's files by name; no query for a page without."""
    if not page.has_files:
        return []
    return list(
        Attachment.objects.filter(page_id=page.pk)
        .order_by("name")
        .values_list("name", "extracted_text")
    )


def page_source_for_agent(agent: Agent, public_id: str) -> Page:
    """A page the agent may propose changes to: live, or not live yet but written by it."""
    own_versions = Version.objects.filter(page=OuterRef("pk"), author_agent=agent)
    page = (
        Page.objects.select_related("live_version", "parent")
        .annotate(in_set=_covered(agent), has_own_version=Exists(own_versions))
        .filter(public_id=public_id)
        .first()
    )
    if page is None or page.archived:
        raise no_such_page(public_id)
    if page.live_version_id is None and not page.has_own_version:  # type: ignore[attr-defined]
        raise no_such_page(public_id)
    if not page.in_set:  # type: ignore[attr-defined]
        raise _not_in_set(public_id)
    return page


def pages_for_agent(agent: Agent, public_ids: Iterable[str]) -> dict[str, Page]:
    """The pages among `public_ids` that the agent can read, by public id, with live versions."""
    ids = list(public_ids)
    if not ids:
        return {}
    pages = visible_pages(agent).filter(public_id__in=ids).select_related("live_version")
    return {page.public_id: page for page in pages}


class SetRow(NamedTuple):
    """A page of the agent's set as plain values, and the entry that offers it."""

    pk: int
    public_id: str
    title: str
    path: str
    entry: PageSetEntry


def _tree_key(row: tuple[int, str, str, str]) -> str:
    return tree_key(row[3])


def page_set_rows(agent: Agent) -> list[SetRow]:
    """Every page the agent can read, in curated order, in two queries and no Page instances.

    Entries come in their position order, each followed by the live pages under it in tree
    order. A page belongs to the nearest entry above it (or its own entry) and carries that
    entry's use-when lines and always-include flag; every page is listed once.
    """
    entries = list(
        PageSetEntry.objects.filter(agent=agent).select_related("page").order_by("position", "id")
    )
    if not entries:
        return []
    entry_by_path: dict[str, PageSetEntry] = {}
    for entry in entries:
        entry_by_path.setdefault(entry.page.path, entry)
    pages = _visible_among(agent, [(entry.page_id, entry.page.path) for entry in entries])
    grouped: dict[int, list[tuple[int, str, str, str]]] = {entry.pk: [] for entry in entries}
    for row in pages.values_list("pk", "public_id", "title", "path"):
        path = row[3]
        nearest = entry_by_path.get(path)
        cut = len(path)
        while nearest is None and cut > 0:
            cut = path.rfind("/", 0, cut)
            if cut < 0:
                break
            nearest = entry_by_path.get(path[:cut])
        if nearest is not None:
            grouped[nearest.pk].append(row)
    result: list[SetRow] = []
    for entry in entries:
        result.extend(SetRow(*row, entry) for row in sorted(grouped[entry.pk], key=_tree_key))
    return result


def page_set_coverage(entries: list[tuple[int, str]]) -> Counter[int]:
    """How many live pages each entry gives its agent (by entry id), in one query.

    The same rule as `page_set_rows` (a page belongs to its own entry, else to the nearest
    entry above it), worked out over the live pages' paths in Python: for a set of thousands
    of entries that is far cheaper than asking the database which entry covers each page.
    """
    by_path: dict[str, int] = {}
    for entry_id, path in entries:  # (entry id, its page's path), in curated order
        by_path.setdefault(path, entry_id)
    covered: Counter[int] = Counter()
    if not by_path:
        return covered
    roots = {path.split("/", 1)[0] for path in by_path}
    live = Page.objects.filter(live_version__isnull=False, archived=False).values_list(
        "path", flat=True
    )
    for path in live:
        if path.split("/", 1)[0] not in roots:
            continue
        nearest = by_path.get(path)
        cut = len(path)
        while nearest is None and cut > 0:
            cut = path.rfind("/", 0, cut)
            if cut < 0:
                break
            nearest = by_path.get(path[:cut])
        if nearest is not None:
            covered[nearest] += 1
    return covered


def agent_page_set(agent: Agent) -> list[SetPage]:
    """`page_set_rows` as Page instances (with only those fields loaded), for the screens."""
    fields = ["id", "public_id", "title", "path"]
    return [
        SetPage(
            page=Page.from_db(
                DEFAULT_DB_ALIAS, fields, [row.pk, row.public_id, row.title, row.path]
            ),
            entry=row.entry,
            use_when=list(row.entry.use_when),
            always_include=row.entry.always_include,
        )
        for row in page_set_rows(agent)
    ]


def last_read_live_version(agent: Agent, page: Page) -> int | None:
    """The live version of `page` the agent last read through get_page or get_page_source:
    what its next replace proposal started from (None if it never read the page)."""
    return (
        PageRead.objects.filter(agent=agent, page=page)
        .values_list("version_number", flat=True)
        .first()
    )


def live_bodies(page_ids: list[int]) -> dict[int, str]:
    """The live markdown of each page among `page_ids` (by primary key), in one query."""
    if not page_ids:
        return {}
    rows = Page.objects.filter(pk__in=page_ids, live_version__isnull=False).values_list(
        "pk", "live_version__body"
    )
    return dict(rows)


def own_pending_proposal(agent: Agent, page: Page) -> Version | None:
    return (
        Version.objects.filter(page=page, author_agent=agent, status=VersionStatus.IN_REVIEW)
        .order_by("-number")
        .first()
    )


def own_last_decision(agent: Agent, page: Page) -> Version | None:
    return (
        Version.objects.filter(
            page=page,
            author_agent=agent,
            status__in=[VersionStatus.APPROVED, VersionStatus.REJECTED],
        )
        .order_by("-decided_at", "-number")
        .first()
    )


def own_newest_version(agent: Agent, page: Page) -> Version | None:
    """The agent's latest version of `page`, whatever became of it."""
    return Version.objects.filter(page=page, author_agent=agent).order_by("-number").first()
