"""Django admin for reviewers' email preferences and the notification outbox."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import QuireError
from reviews import outbox, services
from reviews.models import ApiToken, GroupWebhook, Notification, ReviewerSettings


@admin.register(ReviewerSettings)
class ReviewerSettingsAdmin(admin.ModelAdmin):
    """A reviewer's email preference, changed through the same service as the queue page."""

    list_display = ("user", "notifications")
    list_filter = ("notifications",)
    search_fields = ("user__username", "user__email")
    autocomplete_fields = ("user",)

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        return ("user",) if obj is not None else ()

    def save_model(
        self, request: HttpRequest, obj: ReviewerSettings, form: Any, change: bool
    ) -> None:
        try:
            services.reviewer_notifications_set(
                actor=request.user,  # type: ignore[arg-type]
                reviewer=obj.user,
                preference=obj.notifications,
            )
        except QuireError as error:
            messages.error(request, error.message)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    """The outbox: what was sent, what is still owed, and why a failed email failed."""

    list_display = (
        "created_at",
        "kind",
        "delivery",
        "recipient",
        "version",
        "status",
        "attempts",
        "sent_at",
        "last_error",
    )
    list_filter = ("status", "kind", "delivery")
    search_fields = ("recipient__username", "recipient__email", "version__page__public_id")
    list_select_related = ("recipient", "version__page")
    readonly_fields = [field.name for field in Notification._meta.fields]
    actions = ("send_again",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.action(description="Send the selected pending or failed notifications again")
    def send_again(self, request: HttpRequest, queryset: QuerySet[Notification]) -> None:
        count = outbox.requeue(list(queryset.values_list("pk", flat=True)))
        messages.success(request, f"{count} notification(s) queued again.")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """REST API keys: only a prefix and the hash are stored; deleting one revokes it at once."""

    list_display = ("prefix", "user", "created_at", "last_used_at")
    search_fields = ("user__username", "prefix")
    list_select_related = ("user",)
    readonly_fields = ("user", "prefix", "key_hash", "created_at", "last_used_at")

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # A key is shown once, so it is made by `manage.py create_api_token USERNAME`.
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(GroupWebhook)
class GroupWebhookAdmin(admin.ModelAdmin):
    """A group's chat webhook for review requests (set on the group's screen in Quire)."""

    list_display = ("group", "created_at")
    search_fields = ("group__name",)
