"""Agents, their hashed tokens, and the curated page sets they may read."""

from __future__ import annotations

from typing import ClassVar

from django.conf import settings
from django.db import models

from core.actors import ActorKind


class Agent(models.Model):
    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="agents",
    )
    is_active = models.BooleanField(default=True)
    can_edit_pages = models.BooleanField(default=False)
    # Also lists `search` and `fetch`, the two tools ChatGPT's deep research and company
    # knowledge connectors call (agents.mcp.CONNECTOR_TOOLS).
    connector_tools = models.BooleanField(default=False)
    # One entry that covers every page, now and later (`create_agent --all-pages`, "every
    # page" in the set editor): its set is the whole wiki, its other entries only add use-when
    # lines to their pages.
    all_pages = models.BooleanField(default=False)
    # The token is shown once; only its SHA-256 is stored, and a short prefix for display.
    token_prefix = models.CharField(max_length=16, blank=True, default="")
    token_hash = models.CharField(max_length=64, unique=True, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    # Not stored: set on the agent of a request that came with an OAuth access token, the
    # name of the client it was issued to, so that the call's audit row names it.
    oauth_client: str | None = None
    # The person whose OAuth connection the agent acts through in this request (set by the
    # MCP door): they may not decide what it proposes, as its owner may not.
    oauth_allowed_by_id: int | None = None
    # How core.actors (and the apps below this one) tell an agent from a person.
    actor_kind: ClassVar[ActorKind] = ActorKind.AGENT

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class PageSetEntry(models.Model):
    """One page given to an agent; it covers the page and every descendant."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="page_set")
    page = models.ForeignKey("wiki.Page", on_delete=models.CASCADE, related_name="set_entries")
    use_when = models.JSONField(default=list, blank=True)
    always_include = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name_plural = "page set entries"
        ordering = ["agent_id", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "page"], name="pageset_unique_page")
        ]

    def __str__(self) -> str:
        return f"{self.agent} → {self.page_id}"


class PageRead(models.Model):
    """The newest live version of a page an agent read (get_page, get_page_source): the base
    its next replace proposal starts from. Kept as its own row, not looked up in the audit
    trail, so pruning audit events cannot make a stale proposal look fresh."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="page_reads")
    page = models.ForeignKey("wiki.Page", on_delete=models.CASCADE, related_name="agent_reads")
    version_number = models.PositiveIntegerField()
    read_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["agent", "page"], name="pageread_unique_page")
        ]

    def __str__(self) -> str:
        return f"{self.agent} read {self.page_id} v{self.version_number}"
