"""Read queries for the web UI: the page tree, a page with its surroundings, recent changes.

Each selector costs a fixed number of SQL queries whatever the size of the wiki.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from wiki.models import Attachment, Page, Version, VersionStatus


@dataclass
class TreeNode:
    id: int
    public_id: str
    title: str
    path: str
    parent_id: int | None
    archived: bool
    live: bool
    children: list[TreeNode] = field(default_factory=list)
    # Set per request: the branch holding the current page is shown unfolded.
    open: bool = False
    current: bool = False

    @property
    def visible(self) -> bool:
        return self.live and not self.archived


@dataclass
class PageTree:
    """Every page, from one query; `roots` holds only what readers see (live, not archived)."""

    nodes: dict[int, TreeNode]
    roots: list[TreeNode]

    def ancestors(self, node_id: int) -> list[TreeNode]:
        chain: list[TreeNode] = []
        node = self.nodes.get(node_id)
        while node is not None and node.parent_id is not None:
            node = self.nodes.get(node.parent_id)
            if node is not None:
                chain.append(node)
        return list(reversed(chain))

    def visible_children(self, node_id: int) -> list[TreeNode]:
        return [n for n in self.nodes.values() if n.parent_id == node_id and n.visible]

    def mark_current(self, node_id: int) -> None:
        node = self.nodes.get(node_id)
        if node is None:
            return
        node.current = True
        node.open = True
        for ancestor in self.ancestors(node_id):
            ancestor.open = True


def page_tree() -> PageTree:
    """The whole tree from one query, nested in Python.

    Pages with no live version and archived pages are left out; their visible descendants
    move up to the nearest visible ancestor, so archiving a page never hides the pages
    under it.
    """
    rows = Page.objects.order_by("path").values_list(
        "id", "public_id", "title", "path", "parent_id", "archived", "live_version_id"
    )
    nodes = {
        row[0]: TreeNode(
            id=row[0],
            public_id=row[1],
            title=row[2],
            path=row[3],
            parent_id=row[4],
            archived=row[5],
            live=row[6] is not None,
        )
        for row in rows
    }
    roots: list[TreeNode] = []
    for node in nodes.values():
        if not node.visible:
            continue
        holder = nodes.get(node.parent_id) if node.parent_id is not None else None
        seen: set[int] = set()
        while holder is not None and not holder.visible and holder.id not in seen:
            seen.add(holder.id)
            holder = nodes.get(holder.parent_id) if holder.parent_id is not None else None
        if holder is None or not holder.visible:
            roots.append(node)
        else:
            holder.children.append(node)
    return PageTree(nodes=nodes, roots=roots)


def page_with_live_version(public_id: str) -> Page | None:
    return Page.objects.select_related("live_version").filter(public_id=public_id).first()


def pending_versions(page: Page) -> list[Version]:
    """The proposals waiting for review on `page`, oldest first, in one query."""
    return list(
        Version.objects.filter(page=page, status=VersionStatus.IN_REVIEW)
        .select_related("author_user", "author_agent")
        .only(
            "id",
            "page_id",
            "number",
            "kind",
            "title",
            "change_summary",
            "created_at",
            "base_version_id",
            "author_user__username",
            "author_agent__name",
        )
        .order_by("number")
    )


def own_pending_version(page: Page, user: Any) -> Version | None:
    return (
        Version.objects.filter(page=page, status=VersionStatus.IN_REVIEW, author_user=user)
        .select_related("base_version")
        .first()
    )


def page_attachments(page: Page) -> list[Attachment]:
    return list(
        Attachment.objects.filter(page=page).only(
            "id", "page_id", "name", "content_type", "size", "created_at"
        )
    )


def recent_changes(limit: int = 15) -> QuerySet[Version]:
    """The newest versions that went live, on pages still visible."""
    return (
        Version.objects.filter(
            status=VersionStatus.APPROVED, page__archived=False, decided_at__isnull=False
        )
        .select_related("page", "author_user", "author_agent")
        .order_by("-decided_at", "-id")[:limit]
    )


def archived_pages() -> QuerySet[Page]:
    return Page.objects.filter(archived=True).only("id", "public_id", "title", "path")
