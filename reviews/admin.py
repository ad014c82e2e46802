"""Django admin for reviewers' email preferences and the deliveries (emails and chat posts)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from core.errors import QuireError
from reviews import delivery, webhook_address
from reviews.actions.reviewers import reviewer_notifications_set
from reviews.models import (
    ApiToken,
    Delivery,
    DeliveryChannel,
    GroupWebhook,
    Notification,
    ReviewerSettings,
    WebhookPost,
)


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
            reviewer_notifications_set(
                actor=request.user,  # type: ignore[arg-type]
                reviewer=obj.user,
                preference=obj.notifications,
            )
        except QuireError as error:
            messages.error(request, error.message)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


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


class GroupWebhookForm(forms.ModelForm):
    class Meta:
        model = GroupWebhook
        fields = ("group", "url")

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        refused = webhook_address.refusal(url)
        if refused is not None:
            raise forms.ValidationError(refused)
        return url


@admin.register(GroupWebhook)
class GroupWebhookAdmin(admin.ModelAdmin):
    """A group's chat webhook for review requests (set on the group's screen in Quire); the
    address is checked here as there (reviews.webhook_address)."""

    form = GroupWebhookForm
    list_display = ("group", "created_at")
    search_fields = ("group__name",)


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    """Everything owed outside, every channel in one list: what was sent, what is still owed,
    and why an email failed, or a chat post failed (the chat was down past the attempts) or
    was refused (a wrong address). Rows are written by the services only, and kept as the
    record."""

    list_display = (
        "created_at",
        "channel",
        "kind",
        "to",
        "page",
        "status",
        "attempts",
        "sent_at",
        "last_error",
    )
    list_filter = ["channel", "status", "kind", "delivery"]
    search_fields = (
        "recipient__username",
        "recipient__email",
        "webhook__group__name",
        "version__page__public_id",
        "version__page__title",
    )
    list_select_related = ("recipient", "webhook__group", "version__page")
    readonly_fields = [field.name for field in Delivery._meta.fields]
    actions = ("send_again",)

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="to")
    def to(self, row: Delivery) -> str:
        if row.channel == DeliveryChannel.EMAIL:
            return str(row.recipient)
        return str(row.webhook.group.name) if row.webhook else "(webhook taken off)"

    @admin.display(description="page")
    def page(self, row: Delivery) -> str:
        return f"{row.version.page.title} (v{row.version.number})"

    @admin.action(description="Send the selected pending, failed or refused rows again")
    def send_again(self, request: HttpRequest, queryset: QuerySet[Delivery]) -> None:
        count = delivery.requeue(list(queryset.values_list("pk", flat=True)))
        messages.success(request, f"{count} notification(s) and chat post(s) queued again.")


class OneChannelAdmin(DeliveryAdmin):
    """The list of one channel's rows, at the address it had before every channel was one
    table (kept for a release: bookmarks, docs/team.md); the admin's index lists only the
    one list of deliveries, whose channel filter shows the same."""

    list_filter = ["status", "kind", "delivery"]

    def has_module_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Notification)
class NotificationAdmin(OneChannelAdmin):
    """The emails."""


@admin.register(WebhookPost)
class WebhookPostAdmin(OneChannelAdmin):
    """The chat posts."""
