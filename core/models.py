"""The audit trail: an append-only record of every decision, state change and MCP tool call."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class AuditEvent(models.Model):
    """One thing that happened, who did it (a person, an agent or the system) and its outcome."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    action = models.CharField(max_length=60, db_index=True)
    actor_user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor_agent = models.ForeignKey(
        "agents.Agent", null=True, blank=True, on_delete=models.SET_NULL
    )
    # Set when the system acted (a management command, a migration): its name.
    actor_system = models.CharField(max_length=100, blank=True, default="")
    page = models.ForeignKey("wiki.Page", null=True, blank=True, on_delete=models.SET_NULL)
    version_number = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=40, default="ok")
    comment = models.TextField(blank=True, default="")
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # Free-form detail: page ids and versions returned by a tool call, arguments, etc.
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        # The table kept its name when the model moved here from the wiki app.
        db_table = "wiki_auditevent"
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.action} {self.outcome}"
