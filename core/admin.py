"""Django admin: the audit trail, read-only."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from core.models import AuditEvent


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows to look at, not to add, change or delete: those go through the services."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = (
        "at",
        "action",
        "actor_user",
        "actor_agent",
        "actor_system",
        "page",
        "version_number",
        "outcome",
        "duration_ms",
    )
    list_filter = ("action", "outcome")
    search_fields = ("action", "comment", "page__public_id", "actor_agent__name")
    list_select_related = ("actor_user", "actor_agent", "page")
    date_hierarchy = "at"
