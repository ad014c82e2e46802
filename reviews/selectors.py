"""Reads for the review screens and the REST API; each decides its own joins."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.expressions import RawSQL

from agents.models import Agent
from core.errors import Forbidden, NotFound
from reviews.merge import appended_body
from wiki.models import Page, Version, VersionKind, VersionStatus
from wiki.roles import can_review
from wiki.validators import check_text

AUTHOR_KINDS = ("agent", "human")
KINDS = (VersionKind.REPLACE.value, VersionKind.APPEND.value)


@dataclass(frozen=True)
class QueueFilters:
    agent: str = ""  # agent name
    page: str = ""  # public page id
    author_kind: str = ""  # "agent", "human" or ""
    title: str = ""  # part of the page title
    path: str = ""  # path prefix, e.g. "tools" for tools/slack and everything under it
    author: str = ""  # an agent's name or a person's username
    kind: str = ""  # "replace", "append" or ""

    @classmethod
    def from_params(cls, params: Any) -> QueueFilters:
        """The filters a query string asks for; InvalidArgument for text no name or id holds."""

        def text(name: str) -> str:
            return check_text(str(params.get(name) or ""), field=name).strip()[:200]

        kind = text("kind")
        author_kind = text("author_kind")
        return cls(
            agent=text("agent"),
            page=text("page"),
            author_kind=author_kind if author_kind in AUTHOR_KINDS else "",
            title=text("title"),
            path=text("path").strip("/"),
            author=text("author"),
            kind=kind if kind in KINDS else "",
        )

    @property
    def active(self) -> bool:
        return any(
            (self.agent, self.page, self.author_kind, self.title, self.path, self.author, self.kind)
        )


def _with_people(versions: QuerySet[Version]) -> QuerySet[Version]:
    return versions.select_related(
        "page", "page__live_version", "author_user", "author_agent", "decided_by", "base_version"
    )


def check_can_see_queue(user: Any) -> None:
    """The queue of proposals is for reviewers: its pages may be drafts nobody approved."""
    if not can_review(user):
        raise Forbidden(
            "only reviewers can see the proposals waiting for review; ask an admin to add you "
            "to the Reviewers group."
        )


def review_queue(filters: QueueFilters | None = None) -> QuerySet[Version]:
    """Versions waiting for a decision, oldest first."""
    versions = _with_people(Version.objects.filter(status=VersionStatus.IN_REVIEW))
    filters = filters or QueueFilters()
    if filters.agent:
        versions = versions.filter(author_agent__name=filters.agent)
    if filters.page:
        versions = versions.filter(page__public_id=filters.page)
    if filters.author_kind == "agent":
        versions = versions.filter(author_agent__isnull=False)
    elif filters.author_kind == "human":
        versions = versions.filter(author_agent__isnull=True)
    if filters.title:
        # Titles only: short, one per row. Bodies are never searched this way.
        versions = versions.filter(page__title__icontains=filters.title)
    if filters.path:
        versions = versions.filter(
            Q(page__path=filters.path) | Q(page__path__startswith=filters.path + "/")
        )
    if filters.author:
        versions = versions.filter(
            Q(author_agent__name=filters.author) | Q(author_user__username=filters.author)
        )
    if filters.kind:
        versions = versions.filter(kind=filters.kind)
    return versions.order_by("created_at", "id")


def next_waiting(user: User, *, besides: Version) -> Version | None:
    """The oldest proposal `user` could decide next: not `besides`, not their own, not one of
    their agents' (see services.decision_refusal)."""
    return (
        review_queue()
        .exclude(pk=besides.pk)
        .exclude(author_user=user)
        .exclude(author_agent__owner=user)
        .first()
    )


def waiting_count() -> int:
    return Version.objects.filter(status=VersionStatus.IN_REVIEW).count()


def agents_with_proposals() -> list[str]:
    """Names of the agents that have proposals waiting, for the queue's filter."""
    waiting = Version.objects.filter(author_agent=OuterRef("pk"), status=VersionStatus.IN_REVIEW)
    return list(
        Agent.objects.filter(Exists(waiting)).order_by("name").values_list("name", flat=True)
    )


def recent_decisions(user: User, *, limit: int = 10) -> list[Version]:
    """The reviewer's own latest approvals and rejections (not pages they published)."""
    return list(
        _with_people(
            Version.objects.filter(
                decided_by=user, status__in=[VersionStatus.APPROVED, VersionStatus.REJECTED]
            )
            .exclude(author_user=user)
            .order_by("-decided_at", "-id")
        )[:limit]
    )


def version_of(page: Page, number: int) -> Version:
    try:
        version = _with_people(page.versions.all()).get(number=number)
    except Version.DoesNotExist:
        raise NotFound(
            f"page {page.public_id} has no version {number}; its versions go up to "
            f"v{page.last_version_number}."
        ) from None
    version.page = page  # share the page row (and its live version) already loaded
    return version


def page_versions(page: Page) -> list[Version]:
    """Every version of a page, newest first."""
    versions = list(
        Version.objects.filter(page=page)
        .select_related(
            "author_user",
            "author_agent",
            "decided_by",
            "reverted_from",
            "base_version",
            "merged_into",
        )
        .order_by("-number")
    )
    for version in versions:
        version.page = page
    return versions


def live_pages(*, tag: str = "", parent: str = "") -> QuerySet[Page]:
    pages: QuerySet[Page] = Page.objects.readable().select_related("live_version", "parent")
    if parent:
        pages = pages.filter(parent__public_id=parent)
    if tag:
        pages = _with_tag(pages, tag)
    return pages.order_by("path")


def _with_tag(pages: QuerySet[Page], tag: str) -> QuerySet[Page]:
    # SQLite has no JSON containment operator; json_each gives the same answer there.
    if connection.vendor == "postgresql":
        return pages.filter(tags__contains=[tag])
    table = Page._meta.db_table
    has_tag = RawSQL(  # noqa: S611 - the table name is ours, the tag is a parameter
        f'EXISTS (SELECT 1 FROM json_each("{table}"."tags") WHERE json_each.value = %s)',  # noqa: S608
        (tag,),
    )
    return pages.annotate(has_tag=has_tag).filter(has_tag=True)


def proposed_content(version: Version) -> dict[str, Any]:
    """What the page would hold if `version` were approved as written (appends applied)."""
    live = version.page.live_version
    if version.kind == VersionKind.APPEND and version.status == VersionStatus.IN_REVIEW:
        body = appended_body(live.body if live else "", version.proposed_body)
        source = live or version
        return {
            "body": body,
            "title": source.title,
            "tags": source.tags,
            "parent": source.parent,
        }
    return {
        "body": version.body,
        "title": version.title,
        "tags": version.tags,
        "parent": version.parent,
    }


def search_live_pages(query: str, *, tag: str = "", parent: str = "") -> list[Page]:
    from wiki.search import search_pages

    hits = search_pages(query, limit=50)
    order = {hit.page_id: i for i, hit in enumerate(hits)}
    pages = list(live_pages(tag=tag, parent=parent).filter(pk__in=list(order)))
    return sorted(pages, key=lambda page: order[page.pk])
