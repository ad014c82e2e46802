"""Every read an agent makes, scoped to its page set in one place.

An entry covers its page and every descendant (a page whose path starts with the entry
page's path and a slash). Agents see live, non-archived pages only. Each selector costs a
fixed number of queries whatever the size of the set.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DEFAULT_DB_ALIAS, transaction
from django.db.models import Count, Exists, OuterRef, Q, QuerySet
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from agents.models import Agent, PageRead, PageSetEntry
from config.cache import (
    counter_hit,
    counter_unhit,
    shared_value,
    shared_value_and_hit,
    shared_value_set,
)
from config.replicas import read_connection
from core.errors import NotFound
from core.models import AuditEvent
from core.tokens import token_hash
from reviews.deciders import approvals_prefetch
from wiki.models import Attachment, Page, Version, VersionStatus
from wiki.scope import (
    EVERY_PAGE,
    EVERYTHING,
    Root,
    Scope,
    is_top_shown,
    nearest_root,
    placed_key,
    readable_sql,
    shown_path,
)

PAGE_ID_PREFIX = "pg_"


@dataclass(frozen=True)
class SetPage:
    """A page as the agent's set offers it, with the use-when lines of the entry covering it."""

    page: Page
    entry: PageSetEntry
    use_when: list[str]
    always_include: bool


# Every MCP request starts by finding its agent: a process keeps what it found for a few
# seconds. Any change to an agent (rotate, revoke, edit) empties it at once and again on
# commit. With Redis, the commit also sets a new shared generation that every process reads
# before trusting its copy, so the change reaches every process at once; without Redis (the
# embedded default is one process) another process sees it when its copy expires.
TOKEN_CACHE_SECONDS = 5.0
AGENTS_GENERATION_KEY = "quire:agents-generation"
_agents_by_token_hash: dict[str, tuple[float, str | None, Agent]] = {}


class _KeptScope:
    """The scope (`agent_scope`) of a kept agent copy, read once and trusted exactly as long
    as the copy: with Redis, while the shared generation stays the one the copy was read
    under. That generation also moves, on commit, when any agent's page set changes and when
    any page is saved again or deleted (a move or rename changes the paths a scope holds). A
    request confirms it before it uses the copy, so a scope read before a change committed
    is not used after it: the copy it sits on is no longer handed out. A new page (proposed,
    or imported in bulk) moves nothing: it can only give a single-page entry children, which
    the kept scope hides (never shows) until the copy expires (TOKEN_CACHE_SECONDS).
    Without Redis nothing is kept: another process could not tell this one of a change."""

    __slots__ = ("scope",)

    def __init__(self) -> None:
        self.scope: Scope | None = None


# The attribute of a kept Agent instance that holds its _KeptScope.
_KEPT_SCOPE = "quire_kept_scope"


def _agents_generation() -> str | None:
    """The shared generation of agents, "" when it cannot be had (no value yet, Redis down):
    then nothing kept may be trusted. None without Redis, where only the lifetime counts."""
    if not settings.REDIS_URL:
        return None
    generation = shared_value(AGENTS_GENERATION_KEY)
    if generation is None:
        shared_value_set(AGENTS_GENERATION_KEY, uuid.uuid4().hex, only_if_absent=True)
        generation = shared_value(AGENTS_GENERATION_KEY)
    return "" if generation is None else generation


def agent_by_token(token: str) -> Agent | None:
    """The active agent whose bearer token this is, or None: the one place where a token
    becomes an agent."""
    if not token:
        return None
    return _agent_by_digest(token_hash(token))


def _agent_by_digest(digest: str) -> Agent | None:
    now = time.monotonic()
    generation = _agents_generation()
    cached = _agents_by_token_hash.get(digest)
    if cached is not None and cached[0] > now and cached[1] == generation != "":
        return cached[2]
    return _agent_read(digest, generation, now)


def _agent_read(digest: str, generation: str | None, now: float) -> Agent | None:
    agent = Agent.objects.filter(token_hash=digest, is_active=True).first()
    if agent is not None and generation != "":
        if generation is not None:
            vars(agent)[_KEPT_SCOPE] = _KeptScope()
        _agents_by_token_hash[digest] = (now + TOKEN_CACHE_SECONDS, generation, agent)
    return agent


@dataclass(frozen=True)
class FoundAgent:
    """An agent found by its token (`agent_by_token_kept`) whose kept copy may still need
    the shared generation's word (`confirm_agent`) before anything is done for it."""

    agent: Agent
    digest: str
    # The shared generation the kept copy was read under; None when it needs no check (read
    # from the database just now, or no Redis, where only its lifetime counts).
    kept_under: str | None


def agent_by_token_kept(token: str) -> FoundAgent | None:
    """`agent_by_token`, except that a copy this process kept is returned without reading
    the shared generation: the caller must `confirm_agent` it before acting for the agent,
    which for a tool call checks the generation and counts the call in one Redis round trip
    instead of two."""
    if not token:
        return None
    digest = token_hash(token)
    cached = _agents_by_token_hash.get(digest)
    if cached is not None and cached[0] > time.monotonic() and cached[1] != "":
        return FoundAgent(cached[2], digest, cached[1])
    agent = _agent_by_digest(digest)
    return None if agent is None else FoundAgent(agent, digest, None)


def confirm_agent(
    found: FoundAgent, *, counter: str | None = None, timeout: int = 0
) -> tuple[Agent | None, int | None]:
    """The agent of `found` if its token still holds (None otherwise: rotated, revoked, the
    agent changed), and with `counter`, that counter's new value after one hit
    (`config.cache.counter_hit`, kept `timeout` seconds): with Redis, one round trip for
    both. A hit counted for a token that no longer holds is taken back."""
    if found.kept_under is None:
        return found.agent, (None if counter is None else counter_hit(counter, timeout=timeout))
    if counter is None:
        return _agent_by_digest(found.digest), None
    both = shared_value_and_hit(AGENTS_GENERATION_KEY, counter, timeout=timeout)
    if both is None:  # Redis is not there or failed: as agent_by_token does, then count
        agent = _agent_by_digest(found.digest)
        return agent, (None if agent is None else counter_hit(counter, timeout=timeout))
    generation, count = both
    if generation is not None and str(generation) == found.kept_under:
        return found.agent, count
    # Changed since it was kept (or the generation is gone): read it again.
    agent = _agent_read(found.digest, _agents_generation(), time.monotonic())
    if agent is None:
        counter_unhit(counter)
        return None, None
    return agent, count


def forget_agent_tokens() -> None:
    """Empty the token cache, so the next request reads its agent afresh."""
    _agents_by_token_hash.clear()


def _agents_changed_everywhere() -> None:
    """After a change to an agent commits: forget here, and with Redis in every process."""
    forget_agent_tokens()
    if settings.REDIS_URL:
        shared_value_set(AGENTS_GENERATION_KEY, uuid.uuid4().hex)


@receiver(post_save, sender=Agent)
@receiver(post_delete, sender=Agent)
@receiver(post_save, sender=PageSetEntry)
@receiver(post_delete, sender=PageSetEntry)
@receiver(post_delete, sender=Page)
def _agent_changed(**kwargs: Any) -> None:
    agents_changed()


@receiver(post_save, sender=Page)
def _page_saved(*, created: bool, **kwargs: Any) -> None:
    # A saved page may have moved (its path and its pages' paths changed). A new one only
    # gives its parent a child, which a kept scope hides until it expires (see _KeptScope):
    # an agent's page proposals keep their agent's copy.
    if not created:
        agents_changed()


def agents_changed() -> None:
    """An agent, a page set or the tree changed in this transaction: what this process kept
    of agents and their scopes is forgotten now (for this transaction's own requests, and
    tests), and again on commit everywhere, in case another request kept the old rows in
    between. Called by the signals above and by the page set's bulk changes."""
    forget_agent_tokens()
    transaction.on_commit(_agents_changed_everywhere)


def agent_by_name(name: str) -> Agent:
    """The agent called `name`, for the command line; NotFound says how to list them."""
    agent = Agent.objects.filter(name=name).first()
    if agent is None:
        raise NotFound(f"there is no agent named {name!r}; the Django admin lists the agents.")
    return agent


# The roots of an agent's set, as the subquery a Scope of roots not loaded reads: the
# paths of its entries' pages.
_ENTRY_PATHS_SQL = (
    "SELECT set_page.path FROM agents_pagesetentry set_entry INNER JOIN wiki_page set_page "
    "ON set_page.id = set_entry.page_id WHERE set_entry.agent_id = %s"
)


# The agent's entries as Scope roots, in the set's order: page id, path, has children.
_ENTRY_ROOTS_SQL = (
    "SELECT set_entry.page_id, set_page.path, EXISTS (SELECT 1 FROM wiki_page child "
    "WHERE child.parent_id = set_entry.page_id) FROM agents_pagesetentry set_entry "
    "INNER JOIN wiki_page set_page ON set_page.id = set_entry.page_id "
    "WHERE set_entry.agent_id = %s ORDER BY set_entry.position, set_entry.id"
)


def owner_reader(agent: Agent) -> int:
    """`Scope.reader` of the agent: its owner, so that it never reads more than its owner may
    (an agent with no owner reads only what no read grant restricts). The Scope's SQL knows
    an active superuser owner by pk, so this costs no query."""
    return agent.owner_id or 0


def _entries_scope(agent: Agent) -> Scope:
    """The agent's set as a Scope whose roots stay in the database (a subquery)."""
    return Scope(roots_sql=(_ENTRY_PATHS_SQL, (agent.pk,)), reader=owner_reader(agent))


def _unloaded_scope(agent: Agent) -> Scope:
    return EVERYTHING.read_by(owner_reader(agent)) if agent.all_pages else _entries_scope(agent)


def agent_scope(agent: Agent, *, under: str | None = None) -> Scope:
    """What the agent may see, with its entries loaded (one query; none for an all-pages
    agent, or for a kept copy that read them already: see _KeptScope). `under` narrows it to
    a page of the set (by id) or a path as the agent sees it; an id the agent cannot read is
    `no_such_page`."""
    kept: _KeptScope | None = vars(agent).get(_KEPT_SCOPE)
    if agent.all_pages:
        scope = EVERYTHING.read_by(owner_reader(agent))
    elif kept is not None and kept.scope is not None:
        scope = kept.scope
    else:
        # An entry whose page has no children covers that page alone: a key, not a range,
        # so that a set of single pages is a list of keys, which the planner counts right.
        # Plain SQL: every search and browse of an agent starts here, and building the
        # same statement through the ORM took longer than running it.
        with read_connection().cursor() as cursor:
            cursor.execute(_ENTRY_ROOTS_SQL, [agent.pk])
            rows = cursor.fetchall()
        scope = Scope.of(
            (Root(page_id, path, bool(children)) for page_id, path, children in rows),
            reader=owner_reader(agent),
        )
        if kept is not None:
            kept.scope = scope
    return narrow_to(scope, under) if under else scope


def narrow_to(scope: Scope, under: str) -> Scope:
    """`scope` narrowed to a page of it (by id: one query) or a path as its reader sees it;
    an id it does not cover is `no_such_page`, whether the page exists or not."""
    under = under.strip()
    if not under:
        return scope
    if under.startswith(PAGE_ID_PREFIX):
        path = scope_pages(scope).filter(public_id=under).values_list("path", flat=True).first()
        if path is None:
            raise no_such_page(under)
        return scope.narrowed((path,))
    if not scope.reader:  # no read grant hides a page above one this reader sees
        return scope.narrowed(tuple(scope.real_paths(under)))
    # The path as the reader was shown it: a page hidden from them is not one (as a missing
    # one), and a path starting below a hidden page is the page's under it (one query).
    shown = under.strip("/")
    named = (
        Page.objects.filter(scope.q(readable=False), scope.named(shown))
        .annotate(hidden_prefix=scope.hidden_prefix())
        .values_list("path", "hidden_prefix")
    )
    return scope.narrowed(tuple(path for path, cut in named if scope.shown(path, cut) == shown))


def scope_pages(scope: Scope) -> QuerySet[Page]:
    """The pages a Scope lets its reader see."""
    return Page.objects.filter(scope.q())


def visible_pages(agent: Agent) -> QuerySet[Page]:
    """The pages the agent may read: readable and covered by its set (one query)."""
    return scope_pages(_unloaded_scope(agent))


def no_such_page(public_id: str) -> NotFound:
    """The one answer for a page the agent cannot read, whether it exists or not."""
    return NotFound(
        f"there is no page {public_id} that you can read. "
        "Call browse to list the pages you can use."
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
    root_path: str  # the outermost entry covering it, for `agent_path`
    hidden_prefix: int  # the start of its path naming pages hidden from the agent's owner


# get_page's read, on every call: plain SQL, so that no queryset is built and compiled each
# time. The entry covering the page comes from the agent's Scope: none (NULL), the page is
# outside the set. (One subquery for both: cheaper to plan than a set check beside it.)
_READABLE_PAGE_SQL = """
    SELECT p.id, p.public_id, p.path, v.title, v.tags, v.instructions, v.body, v.number,
           COALESCE(v.decided_at, v.created_at),
           EXISTS (SELECT 1 FROM wiki_attachment a WHERE a.page_id = p.id),
           {hidden_prefix}, {root_path}
    FROM wiki_page p
    JOIN wiki_version v ON v.id = p.live_version_id
    WHERE p.public_id = %s AND {readable}
"""


def _aware(moment: datetime | str) -> datetime:
    """A timestamp as the ORM gives it: SQLite returns UTC as text."""
    if isinstance(moment, str):
        return datetime.fromisoformat(moment).replace(tzinfo=UTC)
    return moment


def readable_page_for_agent(agent: Agent, public_id: str) -> ReadablePage:
    """The live page `public_id` with its live version, if the agent may read it; else the
    same `no_such_page` whether it exists or not."""
    scope = _unloaded_scope(agent)
    root_path, params = scope.root_path_sql("p")
    sql = _READABLE_PAGE_SQL.format(
        root_path=root_path, hidden_prefix=scope.hidden_prefix_sql("p"), readable=readable_sql("p")
    )
    with read_connection().cursor() as cursor:
        cursor.execute(sql, [*params, public_id])
        row = cursor.fetchone()
    if row is None or row[-1] is None:
        raise no_such_page(public_id)
    *columns, has_files, hidden_prefix, root = row
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
        root_path=root,
        hidden_prefix=int(hidden_prefix),
    )


def page_for_agent(agent: Agent, public_id: str) -> Page:
    """The live page `public_id` with its live version, if the agent may read it; else the
    same `no_such_page` whether it exists or not."""
    scope = _unloaded_scope(agent)
    page = (
        Page.objects.filter(scope.q())
        .select_related("live_version")
        .annotate(root_path=scope.root_path(), hidden_prefix=scope.hidden_prefix())
        .filter(public_id=public_id)
        .first()
    )
    if page is None:
        raise no_such_page(public_id)
    return page


def sibling_titled_for_agent(agent: Agent, parent: Page | None, title: str) -> Page | None:
    """A live page the agent may read, under `parent` (None: the top level), already titled
    `title` in any case: one query. Pages outside its set do not count (nor show)."""
    scope = _unloaded_scope(agent)
    beside = Q(parent__isnull=True) if parent is None else Q(parent=parent)
    return (
        Page.objects.filter(scope.q(), beside, title__iexact=title.strip())
        .annotate(root_path=scope.root_path(), hidden_prefix=scope.hidden_prefix())
        .first()
    )


def agent_path(page: Page | ReadablePage) -> str:
    """The page's path as the agent that read it sees it: from its own entry down, and below
    the deepest page on it hidden from its owner."""
    return shown_path(page.path, page.root_path, page.hidden_prefix)  # type: ignore[union-attr]


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
    """A page the agent may propose changes to: live, or not live yet but written by it;
    with `root_path` as `page_for_agent` gives it and the parent, which `parent_in_set` says
    whether the agent may see."""
    scope = _unloaded_scope(agent)
    own_versions = Version.objects.filter(page=OuterRef("pk"), author_agent=agent)
    page = (
        Page.objects.select_related("live_version", "parent")
        .filter(scope.q(readable=False), public_id=public_id, archived=False)
        .annotate(
            has_own_version=Exists(own_versions),
            root_path=scope.root_path(),
            hidden_prefix=scope.hidden_prefix(),
        )
        .first()
    )
    if page is None:
        raise no_such_page(public_id)
    if page.live_version_id is None and not page.has_own_version:  # type: ignore[attr-defined]
        raise no_such_page(public_id)
    return page


def parent_in_set(page: Page) -> Page | None:
    """The parent of a page read for an agent, if the agent may see it: a page's parent is
    outside the set when the page is the outermost entry covering it, and hidden from the
    agent's owner when the page is granted back to them inside a hidden section; in both
    cases its path as the agent sees it starts with the page itself."""
    if page.parent is None or is_top_shown(agent_path(page)):
        return None
    return page.parent


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
    shown_path: str  # the path as the agent sees it: from its outermost entry down


def curated_entries(agent: Agent) -> list[PageSetEntry]:
    """The agent's entry rows in curated order, with their pages."""
    return list(
        PageSetEntry.objects.filter(agent=agent).select_related("page").order_by("position", "id")
    )


def set_entries(agent: Agent) -> list[PageSetEntry]:
    """The agent's entries in curated order, with their pages; an all-pages agent's one
    entry for every page comes last, so that its other entries keep their own pages."""
    entries = curated_entries(agent)
    if agent.all_pages:
        entries.append(every_page_entry(agent, position=len(entries)))
    return entries


def every_page_entry(agent: Agent, *, position: int = 0) -> PageSetEntry:
    """An all-pages agent's entry for every page (not a row: the agent's `all_pages` flag)."""
    entry = PageSetEntry(pk=0, agent=agent, use_when=[], always_include=False, position=position)
    entry.page = Page(pk=None, title="Every page", path=EVERY_PAGE)
    return entry


def page_set_rows(agent: Agent) -> list[SetRow]:
    """Every page the agent can read, in curated order, in two queries and no Page instances.

    Entries come in their position order, each followed by the live pages under it in tree
    order. A page belongs to the nearest entry above it (or its own entry) and carries that
    entry's use-when lines and always-include flag; every page is listed once.
    """
    entries = set_entries(agent)
    if not entries:
        return []
    by_path: dict[str, PageSetEntry] = {}
    for entry in entries:
        by_path.setdefault(entry.page.path, entry)
    scope = Scope.of(
        (Root(entry.page_id, entry.page.path) for entry in entries), reader=owner_reader(agent)
    )
    grouped: dict[int, list[SetRow]] = {entry.pk: [] for entry in entries}
    positions: dict[str, int] = {}
    rows = (
        scope_pages(scope)
        .annotate(hidden_prefix=scope.hidden_prefix())
        .values_list("pk", "public_id", "title", "path", "position", "hidden_prefix")
    )
    for pk, public_id, title, path, position, hidden_prefix in rows:
        positions[path] = position
        nearest = nearest_root(path, by_path)
        if nearest is not None:
            grouped[nearest.pk].append(
                SetRow(pk, public_id, title, path, nearest, scope.shown(path, hidden_prefix))
            )
    result: list[SetRow] = []
    for entry in entries:
        result.extend(sorted(grouped[entry.pk], key=lambda row: placed_key(row.path, positions)))
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
    # Only the top-level subtrees the entries lie in: a set of a few areas reads those.
    tops = {path.split("/", 1)[0] for path in by_path}
    scope = Scope.of(Root(None, top) for top in tops)
    for path in scope_pages(scope).values_list("path", flat=True):
        nearest = nearest_root(path, by_path)
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


def own_pending_proposal(agent: Agent, page: Page, *, with_review: bool = False) -> Version | None:
    """The agent's proposal waiting on `page`; `with_review`: with its workflow step,
    approvals and comments loaded (a fixed number of queries)."""
    pending = Version.objects.filter(
        page=page, author_agent=agent, status=VersionStatus.IN_REVIEW
    ).order_by("-number")
    if with_review:
        pending = pending.select_related("review", "base_version").prefetch_related(
            *approvals_prefetch("review__"), "review__comments__author", "review__comments__version"
        )
    return pending.first()


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


# --- the admin's agent screens --------------------------------------------------------------


def agent_with_owner(agent_id: int) -> Agent | None:
    return Agent.objects.select_related("owner").filter(pk=agent_id).first()


def agents_with_entry_counts() -> QuerySet[Agent]:
    return Agent.objects.select_related("owner").annotate(entry_count=Count("page_set"))


def set_entry(agent: Agent, public_id: str) -> PageSetEntry | None:
    """The agent's entry for the page `public_id`, if it has one."""
    return (
        PageSetEntry.objects.select_related("page", "agent")
        .filter(agent=agent, page__public_id=public_id)
        .first()
    )


def entry_paths(agent: Agent) -> list[tuple[int, str]]:
    """Every entry as (id, page path) in curated order: enough to count what each covers
    and to page through them."""
    return list(
        PageSetEntry.objects.filter(agent=agent)
        .order_by("position", "id")
        .values_list("pk", "page__path")
    )


def entries_by_id(entry_ids: Iterable[int]) -> list[PageSetEntry]:
    return list(PageSetEntry.objects.filter(pk__in=list(entry_ids)).select_related("page"))


def tool_calls(agent: Agent, *, limit: int) -> list[AuditEvent]:
    """The agent's latest audited calls, newest first."""
    return list(AuditEvent.objects.filter(actor_agent=agent).order_by("-at", "-id")[:limit])


def admin_changes(agent: Agent, *, limit: int) -> list[AuditEvent]:
    """What people and commands changed on the agent (its token, set, owner), newest first."""
    return list(
        AuditEvent.objects.filter(actor_agent__isnull=True, data__agentId=agent.pk)
        .select_related("actor_user")
        .order_by("-at", "-id")[:limit]
    )


def possible_owners(current_owner_id: int | None = None) -> QuerySet[User]:
    # The current owner stays on offer even when deactivated, so saving keeps it.
    return User.objects.filter(Q(is_active=True) | Q(pk=current_owner_id)).order_by("username")


def page_to_give(public_id: str) -> Page | None:
    """The page an admin may add to a page set: live and not archived."""
    return (
        Page.objects.readable()
        .filter(public_id=public_id)
        .only("public_id", "title", "path")
        .first()
    )
