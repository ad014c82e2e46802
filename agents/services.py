"""Every state change of agents and their page sets: one transactional function each.

Tokens are random, shown once and stored only as a SHA-256 hash; a rotated or revoked
token stops working at once because the lookup is by hash.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Max
from django.utils import timezone

from agents import selectors
from agents.models import Agent, PageRead, PageSetEntry
from agents.signals import agent_access_replaced
from core.actors import Operator, SystemActor
from core.audit import Along, audit_record
from core.errors import Conflict, Forbidden, InvalidArgument, NotFound
from core.tokens import token_hash
from core.unset import UNSET, Unset
from reviews.actions.create import page_create
from wiki.credentials import refuse_credentials
from wiki.models import Page, Version
from wiki.permissions import reads
from wiki.scope import EVERYTHING
from wiki.validators import check_one_line, check_text

TOKEN_PREFIX = "qa_"  # noqa: S105 (a label, not a secret)
# How much of the token the UI shows, so an admin can tell tokens apart.
TOKEN_DISPLAY_CHARS = 10
NAME_MAX = 100
USE_WHEN_MAX_LINES = 20
USE_WHEN_LINE_MAX = 300
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _new_token() -> tuple[str, str, str]:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token[:TOKEN_DISPLAY_CHARS], token_hash(token)


def can_manage_agents(actor: Operator | None) -> bool:
    """Admins manage agents; so does the system (a management command run by the operator)."""
    if isinstance(actor, SystemActor):
        return True
    if actor is None or not actor.is_authenticated or not actor.is_active:
        return False
    return bool(getattr(actor, "is_superuser", False)) or actor.has_perm("agents.change_agent")


def _check_can_manage(actor: Operator) -> None:
    if not can_manage_agents(actor):
        raise Forbidden("only admins can manage agents and their page sets.")


# --- validation -------------------------------------------------------------------------


def validate_agent_name(name: Any) -> str:
    if isinstance(name, str):
        name = check_one_line(name, field="name")
    if not isinstance(name, str) or not 1 <= len(name) <= NAME_MAX:
        raise InvalidArgument(f"an agent needs a name of 1 to {NAME_MAX} characters.", field="name")
    refuse_credentials(name, field="name")
    return name


def validate_description(description: Any) -> str:
    if description is None:
        return ""
    if not isinstance(description, str):
        raise InvalidArgument("the description must be text.", field="description")
    description = check_text(description, field="description").strip()
    refuse_credentials(description, field="description")
    return description


def validate_use_when(lines: Any) -> list[str]:
    """A list of short instructions; a string is split into one instruction per line."""
    if lines is None:
        return []
    if isinstance(lines, str):
        lines = lines.splitlines()
    elif isinstance(lines, Iterable):
        lines = list(lines)
    if not isinstance(lines, list) or not all(isinstance(line, str) for line in lines):
        raise InvalidArgument("use-when must be a list of short sentences.", field="use_when")
    cleaned = []
    for number, line in enumerate(lines, start=1):
        name = f"use-when line {number}"
        line = " ".join(check_text(line, field="use_when", name=name).split())
        refuse_credentials(line, field="use_when", name=name)
        if line:
            cleaned.append(line)
    if len(cleaned) > USE_WHEN_MAX_LINES:
        raise InvalidArgument(
            f"give at most {USE_WHEN_MAX_LINES} use-when lines; there are {len(cleaned)}.",
            field="use_when",
        )
    for line in cleaned:
        if len(line) > USE_WHEN_LINE_MAX:
            raise InvalidArgument(
                f"each use-when line can be at most {USE_WHEN_LINE_MAX} characters; "
                f"{line[:30]!r}... has {len(line)}.",
                field="use_when",
            )
    return cleaned


# --- agents -------------------------------------------------------------------------------


def _lock_agent(agent: Agent) -> Agent:
    try:
        return Agent.objects.select_for_update().get(pk=agent.pk)
    except Agent.DoesNotExist:
        raise NotFound(f"agent {agent.name} does not exist.") from None


@transaction.atomic
def agent_create(
    *,
    actor: Operator,
    name: str,
    description: str = "",
    owner: User | None = None,
    can_edit_pages: bool = False,
    connector_tools: bool = False,
    pages: Iterable[Page] = (),
    all_pages: bool = False,
) -> tuple[Agent, str]:
    """Create an agent, its first token and its page set (`pages`, in order; with
    `all_pages`, the one entry that covers every page, now and later).

    The token is returned once and never stored.
    """
    _check_can_manage(actor)
    agent, token = _agent_insert(
        actor=actor,
        name=name,
        description=description,
        owner=owner,
        can_edit_pages=can_edit_pages,
        connector_tools=connector_tools,
        all_pages=all_pages,
    )
    for page in pages:
        page_set_add(actor=actor, agent=agent, page=page)
    return agent, token


def _agent_insert(
    *,
    actor: Operator,
    name: str,
    description: str,
    owner: User | None,
    can_edit_pages: bool,
    all_pages: bool,
    connector_tools: bool = False,
) -> tuple[Agent, str]:
    """The agent's row, its first token and its audit row (its page set is the caller's)."""
    name = validate_agent_name(name)
    if Agent.objects.filter(name=name).exists():
        raise Conflict(f"an agent named {name!r} already exists; choose another name.")
    token, prefix, digest = _new_token()
    try:
        with transaction.atomic():
            agent = Agent.objects.create(
                name=name,
                description=validate_description(description),
                owner=owner,
                can_edit_pages=can_edit_pages,
                connector_tools=connector_tools,
                all_pages=all_pages,
                token_prefix=prefix,
                token_hash=digest,
            )
    except IntegrityError:
        raise Conflict(f"an agent named {name!r} already exists; choose another name.") from None
    audit_record(
        action="agent.create",
        actor=actor,
        data={
            "agent": agent.name,
            "agentId": agent.pk,
            "canEditPages": can_edit_pages,
            "connectorTools": connector_tools,
            "allPages": all_pages,
            **({"ownAgent": True} if owner is not None and actor == owner else {}),
        },
    )
    return agent, token


def can_make_own_agent(person: Operator | None) -> bool:
    """Whether `person` may make an agent of their own (on the consent screen): any active
    person, where admins allow it (QUIRE_PEOPLE_MAKE_AGENTS, on by default)."""
    if not isinstance(person, User) or not person.is_active:
        return False
    return bool(settings.QUIRE_PEOPLE_MAKE_AGENTS) or can_manage_agents(person)


@transaction.atomic
def agent_create_own(
    *,
    actor: User,
    name: str,
    pages: Sequence[Page] = (),
    all_pages: bool = False,
    can_edit_pages: bool = False,
) -> Agent:
    """A person's own agent, made by them without an admin (issue 49): owned by them, so it
    reads at most what they may read (every page, now and later, with `all_pages`, else the
    `pages` they picked, each one they may read) and its proposals are decided by others,
    never by them (reviews.deciders). Its static token is never shown: a client connects it
    by OAuth; an admin may rotate it to give it one."""
    if not can_make_own_agent(actor):
        raise Forbidden(
            "making your own agent is switched off here (QUIRE_PEOPLE_MAKE_AGENTS); ask an "
            "admin to make one for you."
        )
    if not all_pages and not pages:
        raise InvalidArgument(
            "pick the pages your agent may read, or let it read every page you may read.",
            field="pages",
        )
    agent, _token = _agent_insert(
        actor=actor,
        name=name,
        description="",
        owner=actor,
        can_edit_pages=can_edit_pages,
        all_pages=all_pages,
    )
    for page in [] if all_pages else pages:
        _check_owner_reads(agent, page)
        _page_set_insert(actor=actor, agent=agent, page=page)
    return agent


def _check_can_change(actor: Operator, agent: Agent) -> None:
    """Admins change any agent; a person renames and revokes the agents they own."""
    owns = isinstance(actor, User) and actor.is_active and agent.owner_id == actor.pk
    if not owns:
        _check_can_manage(actor)


@transaction.atomic
def agent_update(
    *,
    actor: Operator,
    agent: Agent,
    name: str | Unset = UNSET,
    description: str | Unset = UNSET,
    owner: User | Unset | None = UNSET,
    can_edit_pages: bool | Unset = UNSET,
    connector_tools: bool | Unset = UNSET,
) -> Agent:
    _check_can_change(actor, agent)
    if not can_manage_agents(actor) and not (
        isinstance(description, Unset)
        and isinstance(owner, Unset)
        and isinstance(can_edit_pages, Unset)
    ):
        raise Forbidden("you may rename your agent or revoke it; ask an admin for the rest.")
    agent = _lock_agent(agent)
    changed: dict[str, Any] = {}
    if not isinstance(name, Unset):
        name = validate_agent_name(name)
        if name != agent.name and Agent.objects.filter(name=name).exists():
            raise Conflict(f"an agent named {name!r} already exists; choose another name.")
        agent.name, changed["name"] = name, name
    if not isinstance(description, Unset):
        agent.description = changed["description"] = validate_description(description)
    if not isinstance(owner, Unset):
        agent.owner = owner
        changed["owner"] = owner.get_username() if owner is not None else None
    if not isinstance(can_edit_pages, Unset):
        agent.can_edit_pages = changed["canEditPages"] = bool(can_edit_pages)
    if not isinstance(connector_tools, Unset):
        agent.connector_tools = changed["connectorTools"] = bool(connector_tools)
    agent.save()
    audit_record(
        action="agent.update",
        actor=actor,
        data={"agent": agent.name, "agentId": agent.pk, **changed},
    )
    return agent


@transaction.atomic
def agent_token_rotate(*, actor: Operator, agent: Agent) -> str:
    """Issue a new token; the old one fails from this commit on. A revoked agent is re-enabled."""
    _check_can_manage(actor)
    agent = _lock_agent(agent)
    was_active = agent.is_active
    token, agent.token_prefix, agent.token_hash = _new_token()
    agent.is_active = True
    agent.save(update_fields=["token_prefix", "token_hash", "is_active"])
    audit_record(
        action="agent.token_rotate",
        actor=actor,
        data={"agent": agent.name, "agentId": agent.pk, "reactivated": not was_active},
    )
    agent_access_replaced.send(Agent, agent=agent, actor=actor, reason="token rotated")
    return token


@transaction.atomic
def agent_revoke(*, actor: Operator, agent: Agent) -> Agent:
    """Switch the agent off: its token is forgotten, so no request can authenticate as it.
    Admins revoke any agent, a person the agents they own."""
    _check_can_change(actor, agent)
    agent = _lock_agent(agent)
    if not agent.is_active and agent.token_hash is None:
        raise Conflict(f"agent {agent.name} is already revoked.")
    agent.is_active = False
    agent.token_hash = None
    agent.save(update_fields=["is_active", "token_hash"])
    audit_record(
        action="agent.revoke", actor=actor, data={"agent": agent.name, "agentId": agent.pk}
    )
    agent_access_replaced.send(Agent, agent=agent, actor=actor, reason="agent revoked")
    return agent


def agent_mark_used(agent: Agent) -> None:
    """Record that the agent made a call; written at most once a minute to spare the database."""
    now = timezone.now()
    if agent.last_used_at is not None and now - agent.last_used_at < LAST_USED_RESOLUTION:
        return
    Agent.objects.filter(pk=agent.pk).update(last_used_at=now)
    agent.last_used_at = now


def agent_page_read(*, agent: Agent, page_id: int, version_number: int) -> None:
    """Record that an editing agent read live version `version_number` of `page`: the base
    of its next replace proposal. One upsert; agents that cannot propose keep no record."""
    statement = page_read_statement(agent=agent, page_id=page_id, version_number=version_number)
    if statement is not None:
        with connection.cursor() as cursor:
            cursor.execute(*statement)


_PAGE_READ_SQL = (
    f"INSERT INTO {PageRead._meta.db_table} (agent_id, page_id, version_number, read_at) "  # noqa: S608
    "VALUES (%s, %s, %s, %s) ON CONFLICT (agent_id, page_id) DO UPDATE "
    "SET version_number = excluded.version_number, read_at = excluded.read_at"
)


def page_read_statement(*, agent: Agent, page_id: int, version_number: int) -> Along | None:
    """`agent_page_read` as a statement, for a read tool to write with its audit row (one
    commit: `core.audit.audit_record(along=...)`); None for an agent that keeps no record."""
    if not agent.can_edit_pages:
        return None
    read_at = PageRead._meta.get_field("read_at").get_db_prep_save(timezone.now(), connection)
    return _PAGE_READ_SQL, [agent.pk, page_id, version_number, read_at]


# --- page sets ------------------------------------------------------------------------------


def _check_can_add(actor: Operator | Agent, agent: Agent, page: Page) -> None:
    if isinstance(actor, Agent):
        # An agent may add only the top-level page it has just created to its own set.
        own_creation = Version.objects.filter(page=page, number=1, author_agent=actor).exists()
        if actor.pk != agent.pk or not own_creation:
            raise Forbidden("an agent cannot change page sets; ask an admin.")
        return
    _check_can_manage(actor)
    _check_owner_reads(agent, page)


def _check_owner_reads(agent: Agent, page: Page) -> None:
    # An agent never reads more than its owner may (its Scope hides the rest anyway): an
    # entry its owner may not read would be a promise the set cannot keep.
    if not reads(selectors.owner_reader(agent), page.pk):
        owner = agent.owner.get_username() if agent.owner is not None else "nobody"
        raise Forbidden(
            f"{agent.name}'s owner ({owner}) may not read “{page.title}”, and an agent never "
            "reads more than its owner may; choose a page they may read, or grant one of "
            "their groups read on this section first."
        )


def _entry_data(entry: PageSetEntry) -> dict[str, Any]:
    return {
        "agent": entry.agent.name,
        "agentId": entry.agent_id,
        "useWhen": entry.use_when,
        "alwaysInclude": entry.always_include,
        "position": entry.position,
    }


@transaction.atomic
def page_set_add(
    *,
    actor: Operator | Agent,
    agent: Agent,
    page: Page,
    use_when: Iterable[str] | str | None = None,
    always_include: bool = False,
    position: int | None = None,
) -> PageSetEntry:
    """Give `page` (and so every page under it) to `agent`, at `position` or at the end."""
    _check_can_add(actor, agent, page)
    return _page_set_insert(
        actor=actor,
        agent=agent,
        page=page,
        use_when=use_when,
        always_include=always_include,
        position=position,
    )


def _page_set_insert(
    *,
    actor: Operator | Agent,
    agent: Agent,
    page: Page,
    use_when: Iterable[str] | str | None = None,
    always_include: bool = False,
    position: int | None = None,
) -> PageSetEntry:
    lines = validate_use_when(use_when)
    agent = _lock_agent(agent)
    archived = Page.objects.filter(pk=page.pk).values_list("archived", flat=True).first()
    if archived is None:
        raise NotFound(f"page {page.public_id} does not exist.")
    if archived:
        raise InvalidArgument(
            f"page {page.public_id} is archived; restore it before giving it to an agent.",
            field="page",
        )
    entries = PageSetEntry.objects.filter(agent=agent)
    if entries.filter(page=page).exists():
        raise Conflict(f"page {page.public_id} is already in {agent.name}'s page set.")
    top = entries.aggregate(top=Max("position"))["top"]
    end = 0 if top is None else top + 1
    if position is None or position >= end:
        position = end
    else:
        if position < 0:
            raise InvalidArgument("position must be 0 or more.", field="position")
        entries.filter(position__gte=position).update(position=F("position") + 1)
    entry = PageSetEntry.objects.create(
        agent=agent, page=page, use_when=lines, always_include=always_include, position=position
    )
    audit_record(action="page_set.add", actor=actor, page=page, data=_entry_data(entry))
    return entry


@transaction.atomic
def page_set_all_pages(*, actor: Operator, agent: Agent, all_pages: bool) -> Agent:
    """Give `agent` the one entry that covers every page, now and later, or take it away.

    It is a flag on the agent, not a snapshot of today's pages: a page published later is in
    the set at once. The agent's other entries stay, to give their pages use-when lines.
    """
    _check_can_manage(actor)
    agent = _lock_agent(agent)
    if agent.all_pages == all_pages:
        state = "already has" if all_pages else "does not have"
        raise Conflict(f"{agent.name} {state} every page in its set; reload the page set.")
    agent.all_pages = all_pages
    agent.save(update_fields=["all_pages"])
    audit_record(
        action="page_set.all_pages",
        actor=actor,
        data={"agent": agent.name, "agentId": agent.pk, "allPages": all_pages},
    )
    return agent


@transaction.atomic
def page_set_add_tagged(
    *,
    actor: Operator,
    agent: Agent,
    tag: str,
    use_when: Iterable[str] | str | None = None,
    always_include: bool = False,
) -> list[PageSetEntry]:
    """Give `agent` every live page tagged `tag` that is not in its set yet, in one action.

    Each page becomes its own entry (in path order, at the end of the set) with the same
    use-when lines; pages already in the set keep their entries.
    """
    _check_can_manage(actor)
    lines = validate_use_when(use_when)
    tag = (tag or "").strip()
    if not tag:
        raise InvalidArgument("give the tag whose pages to add.", field="tag")
    agent = _lock_agent(agent)
    present = set(PageSetEntry.objects.filter(agent=agent).values_list("page_id", flat=True))
    # Tags are a JSON list; matching them in Python keeps one query on SQLite and PostgreSQL.
    tagged = [
        pk
        for pk, tags in Page.objects.filter(EVERYTHING.read_by(selectors.owner_reader(agent)).q())
        .order_by("path")
        .values_list("pk", "tags")
        if tag in (tags or []) and pk not in present
    ]
    if not tagged:
        raise InvalidArgument(
            f"no live page tagged {tag!r} is missing from {agent.name}'s page set; check the "
            "tag's spelling.",
            field="tag",
        )
    top = PageSetEntry.objects.filter(agent=agent).aggregate(top=Max("position"))["top"]
    start = 0 if top is None else top + 1
    entries = PageSetEntry.objects.bulk_create(
        PageSetEntry(
            agent=agent,
            page_id=pk,
            use_when=lines,
            always_include=always_include,
            position=start + offset,
        )
        for offset, pk in enumerate(tagged)
    )
    selectors.agents_changed()  # bulk_create sends no signal
    audit_record(
        action="page_set.add_tagged",
        actor=actor,
        data={"agent": agent.name, "agentId": agent.pk, "tag": tag, "added": len(entries)},
    )
    return entries


@transaction.atomic
def page_set_update(
    *,
    actor: Operator,
    entry: PageSetEntry,
    use_when: Iterable[str] | str | Unset | None = UNSET,
    always_include: bool | Unset = UNSET,
) -> PageSetEntry:
    _check_can_manage(actor)
    _lock_agent(entry.agent)
    try:
        entry = PageSetEntry.objects.select_related("agent", "page").get(pk=entry.pk)
    except PageSetEntry.DoesNotExist:
        raise NotFound("that page is no longer in the set; reload the page set.") from None
    if not isinstance(use_when, Unset):
        entry.use_when = validate_use_when(use_when)
    if not isinstance(always_include, Unset):
        entry.always_include = bool(always_include)
    entry.save(update_fields=["use_when", "always_include"])
    audit_record(action="page_set.update", actor=actor, page=entry.page, data=_entry_data(entry))
    return entry


@transaction.atomic
def page_set_remove(*, actor: Operator, agent: Agent, page: Page) -> None:
    """Take `page` out of the set; pages under it stay only if another entry covers them."""
    _check_can_manage(actor)
    agent = _lock_agent(agent)
    entry = PageSetEntry.objects.filter(agent=agent, page=page).first()
    if entry is None:
        raise NotFound(f"page {page.public_id} is not in {agent.name}'s page set.")
    entry.delete()
    PageSetEntry.objects.filter(agent=agent, position__gt=entry.position).update(
        position=F("position") - 1
    )
    audit_record(
        action="page_set.remove",
        actor=actor,
        page=page,
        data={"agent": agent.name, "agentId": agent.pk},
    )


@transaction.atomic
def page_set_reorder(
    *, actor: Operator, agent: Agent, page_ids: Sequence[str]
) -> list[PageSetEntry]:
    """Put the listed pages (public ids) first, in that order; the others follow as they were."""
    _check_can_manage(actor)
    agent = _lock_agent(agent)
    entries = list(PageSetEntry.objects.filter(agent=agent).select_related("page"))
    by_id = {entry.page.public_id: entry for entry in entries}
    unknown = [page_id for page_id in page_ids if page_id not in by_id]
    if unknown:
        raise InvalidArgument(
            f"these pages are not in {agent.name}'s page set: {', '.join(unknown)}. "
            "Reload the page set and try again.",
            field="page_ids",
        )
    if len(set(page_ids)) != len(page_ids):
        raise InvalidArgument("each page can be listed only once.", field="page_ids")
    listed = [by_id[page_id] for page_id in page_ids]
    ordered = listed + [entry for entry in entries if entry.page.public_id not in set(page_ids)]
    for position, entry in enumerate(ordered):
        entry.position = position
    PageSetEntry.objects.bulk_update(ordered, ["position"])
    selectors.agents_changed()  # bulk_update sends no signal
    audit_record(
        action="page_set.reorder",
        actor=actor,
        data={
            "agent": agent.name,
            "agentId": agent.pk,
            "pageIds": [entry.page.public_id for entry in ordered],
        },
    )
    return ordered


@transaction.atomic
def agent_page_create(
    *,
    agent: Agent,
    title: str,
    markdown: str,
    parent: Page | None = None,
    tags: Iterable[str] | None = None,
    change_summary: str = "",
) -> Version:
    """An agent proposes a new page; a top-level one also joins its own set, so it can follow
    the proposal (and use the page once approved). Under `parent` the set already covers it."""
    version = page_create(
        actor=agent,
        title=title,
        body=markdown,
        parent=parent,
        tags=tags,
        change_summary=change_summary,
    )
    # An all-pages agent's set covers it already (once it is live).
    if parent is None and not agent.all_pages:
        page_set_add(actor=agent, agent=agent, page=version.page)
    return version
