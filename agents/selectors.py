"""Every read an agent makes, scoped to its page set in one place.

An entry covers its page and every descendant (a page whose path starts with the entry
page's path and a slash). Agents see live, non-archived pages only. Each selector costs a
fixed number of queries whatever the size of the set.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import (
    Exists,
    ExpressionWrapper,
    OuterRef,
    Q,
    QuerySet,
    TextField,
    Value,
)
from django.db.models.functions import Concat

from agents.models import Agent, PageSetEntry
from agents.services import token_hash
from wiki.errors import NotFound, NotInSet
from wiki.models import Page, Version, VersionStatus


@dataclass(frozen=True)
class SetPage:
    """A page as the agent's set offers it, with the use-when lines of the entry covering it."""

    page: Page
    entry: PageSetEntry
    use_when: list[str]
    always_include: bool


def agent_by_token(token: str) -> Agent | None:
    if not token:
        return None
    return Agent.objects.filter(token_hash=token_hash(token), is_active=True).first()


def _covered(agent: Agent) -> Exists:
    """True for a page (the outer row) that one of the agent's entries covers."""
    entries = (
        PageSetEntry.objects.filter(agent=agent)
        .annotate(candidate_path=ExpressionWrapper(OuterRef("path"), output_field=TextField()))
        .filter(
            Q(page_id=OuterRef("pk"))
            | Q(candidate_path__startswith=Concat("page__path", Value("/")))
        )
    )
    return Exists(entries)


def visible_pages(agent: Agent) -> QuerySet[Page]:
    """Live, non-archived pages in the agent's set."""
    return Page.objects.filter(live_version__isnull=False, archived=False).filter(_covered(agent))


def visible_page_pks(agent: Agent) -> list[int]:
    return list(visible_pages(agent).values_list("pk", flat=True))


def _no_such_page(public_id: str) -> NotFound:
    return NotFound(
        f"there is no page {public_id} that you can read. "
        "Call browse to list the pages you can use."
    )


def _not_in_set(public_id: str) -> NotInSet:
    return NotInSet(
        f"page {public_id} is not in your page set. Call browse to list the pages you can "
        "use, or ask an admin to add this one."
    )


def page_for_agent(agent: Agent, public_id: str) -> Page:
    """The live page `public_id` with its live version, if the agent's set covers it."""
    page = (
        Page.objects.select_related("live_version")
        .annotate(in_set=_covered(agent))
        .filter(public_id=public_id)
        .first()
    )
    if page is None or page.live_version_id is None or page.archived:
        raise _no_such_page(public_id)
    if not page.in_set:  # type: ignore[attr-defined]
        raise _not_in_set(public_id)
    return page


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
        raise _no_such_page(public_id)
    if page.live_version_id is None and not page.has_own_version:  # type: ignore[attr-defined]
        raise _no_such_page(public_id)
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


def _tree_order(page: Page) -> list[str]:
    return page.path.split("/")


def agent_page_set(agent: Agent) -> list[SetPage]:
    """Every page the agent can read, in curated order.

    Entries come in their position order, each followed by the live pages under it in tree
    order. A page belongs to the nearest entry above it (or its own entry) and carries that
    entry's use-when lines and always-include flag; every page is listed once.
    """
    entries = list(
        PageSetEntry.objects.filter(agent=agent).select_related("page").order_by("position", "id")
    )
    entry_by_path: dict[str, PageSetEntry] = {}
    for entry in entries:
        entry_by_path.setdefault(entry.page.path, entry)
    grouped: dict[int, list[Page]] = {entry.pk: [] for entry in entries}
    for page in visible_pages(agent).only("public_id", "title", "path"):
        segments = page.path.split("/")
        for depth in range(len(segments), 0, -1):
            nearest = entry_by_path.get("/".join(segments[:depth]))
            if nearest is not None:
                grouped[nearest.pk].append(page)
                break
    result: list[SetPage] = []
    for entry in entries:
        for page in sorted(grouped[entry.pk], key=_tree_order):
            result.append(
                SetPage(
                    page=page,
                    entry=entry,
                    use_when=list(entry.use_when),
                    always_include=entry.always_include,
                )
            )
    return result


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
