"""Django admin for the wiki: a read-only window on pages, versions and files.

Every change goes through wiki.services (the web UI, API and commands); the admin only
archives and restores pages, through the same services, so nothing bypasses the audit log.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin import ReadOnlyAdmin
from core.errors import QuireError
from wiki import services
from wiki.models import Attachment, Page, Version


class VersionInline(admin.TabularInline):
    model = Version
    fk_name = "page"
    fields = ("number", "status", "kind", "author_user", "author_agent", "change_summary")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True
    ordering = ("-number",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Page)
class PageAdmin(ReadOnlyAdmin):
    list_display = ("title", "public_id", "path", "live_version", "archived", "updated_at")
    list_filter = ("archived",)
    search_fields = ("title", "public_id", "path")
    list_select_related = ("live_version",)
    readonly_fields = (
        "public_id",
        "title",
        "path",
        "parent",
        "tags",
        "instructions",
        "live_version",
        "archived",
        "source_path",
        "created_at",
        "updated_at",
    )
    fields = readonly_fields
    inlines = (VersionInline,)
    actions = ("archive_pages", "restore_pages")

    @admin.action(description="Archive the selected pages")
    def archive_pages(self, request: HttpRequest, queryset: QuerySet[Page]) -> None:
        self._each(request, queryset, services.page_archive, "archived")

    @admin.action(description="Restore the selected pages")
    def restore_pages(self, request: HttpRequest, queryset: QuerySet[Page]) -> None:
        self._each(request, queryset, services.page_restore, "restored")

    def _each(self, request: HttpRequest, queryset: QuerySet[Page], action: Any, done: str) -> None:
        count = 0
        for page in queryset:
            try:
                action(actor=request.user, page=page)
                count += 1
            except QuireError as error:
                messages.error(request, f"{page.title}: {error.message}")
        if count:
            messages.success(request, f"{count} page(s) {done}.")


@admin.register(Version)
class VersionAdmin(ReadOnlyAdmin):
    list_display = ("page", "number", "status", "kind", "author_name", "created_at", "decided_by")
    list_filter = ("status", "kind", "merged", "edited_by_reviewer")
    search_fields = ("page__title", "page__public_id", "change_summary", "author_user__username")
    list_select_related = ("page", "author_user", "author_agent", "decided_by")
    date_hierarchy = "created_at"


@admin.register(Attachment)
class AttachmentAdmin(ReadOnlyAdmin):
    list_display = ("name", "page", "content_type", "size", "uploaded_by", "created_at")
    search_fields = ("name", "page__title", "page__public_id", "sha256")
    list_select_related = ("page", "uploaded_by")
    exclude = ("extracted_text",)
