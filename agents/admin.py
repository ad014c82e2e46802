"""Django admin for agents and their page sets; every change goes through agents.services."""

from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.forms import BaseInlineFormSet, ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.utils.cache import add_never_cache_headers

from agents import services
from agents.models import Agent, PageSetEntry
from core.errors import QuireError


def _show_token(request: HttpRequest, agent: Agent, token: str) -> None:
    messages.warning(
        request,
        f"The token for {agent.name} is {token} — copy it now: it is shown only this once. "
        "Agents send it as 'Authorization: Bearer <token>'.",
    )


class _ServiceAdmin(admin.ModelAdmin):
    """A refused change (a service's QuireError) comes back as a message, not a 500."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except QuireError as error:
            messages.error(request, error.message)
            return HttpResponseRedirect(request.get_full_path())


class PageSetEntryInline(admin.TabularInline):
    model = PageSetEntry
    fields = ("page", "use_when", "always_include", "position")
    raw_id_fields = ("page",)
    extra = 0
    ordering = ("position", "id")


@admin.register(Agent)
class AgentAdmin(_ServiceAdmin):
    list_display = (
        "name",
        "owner",
        "can_edit_pages",
        "is_active",
        "token_prefix",
        "last_used_at",
        "created_at",
    )
    list_filter = ("is_active", "can_edit_pages")
    search_fields = ("name", "description")
    fields = (
        "name",
        "description",
        "owner",
        "can_edit_pages",
        "connector_tools",
        "is_active",
        "token_prefix",
        "created_at",
        "last_used_at",
    )
    readonly_fields = ("is_active", "token_prefix", "created_at", "last_used_at")
    raw_id_fields = ("owner",)
    inlines = [PageSetEntryInline]
    actions = ["rotate_tokens", "revoke_agents"]

    def save_model(self, request: HttpRequest, obj: Agent, form: ModelForm, change: bool) -> None:
        user: Any = request.user
        if not change:
            agent, token = services.agent_create(
                actor=user,
                name=obj.name,
                description=obj.description,
                owner=obj.owner,
                can_edit_pages=obj.can_edit_pages,
                connector_tools=obj.connector_tools,
            )
            obj.pk, obj.token_prefix = agent.pk, agent.token_prefix
            obj.created_at = agent.created_at
            _show_token(request, agent, token)
            return
        services.agent_update(
            actor=user,
            agent=obj,
            name=obj.name,
            description=obj.description,
            owner=obj.owner,
            can_edit_pages=obj.can_edit_pages,
            connector_tools=obj.connector_tools,
        )

    def save_formset(
        self, request: HttpRequest, form: ModelForm, formset: BaseInlineFormSet, change: bool
    ) -> None:
        user: Any = request.user
        agent: Agent = form.instance
        kept: list[tuple[int, PageSetEntry]] = []
        moved = False
        # The admin's change message reads these, as a formset's own save() would set them.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []
        for entry_form in formset.forms:
            data = entry_form.cleaned_data
            if not data or (entry_form.instance.pk is None and not entry_form.has_changed()):
                continue
            entry: PageSetEntry = entry_form.instance
            if data.get("DELETE"):
                if entry.pk is not None:
                    services.page_set_remove(actor=user, agent=agent, page=entry.page)
                    formset.deleted_objects.append(entry)
                continue
            if entry.pk is None:
                entry = services.page_set_add(
                    actor=user,
                    agent=agent,
                    page=data["page"],
                    use_when=data.get("use_when") or [],
                    always_include=bool(data.get("always_include")),
                )
                formset.new_objects.append(entry)
            elif entry_form.has_changed():
                services.page_set_update(
                    actor=user,
                    entry=entry,
                    use_when=data.get("use_when") or [],
                    always_include=bool(data.get("always_include")),
                )
                formset.changed_objects.append((entry, entry_form.changed_data))
            moved = moved or "position" in entry_form.changed_data
            kept.append((data.get("position") or 0, entry))
        if moved:
            order = sorted(kept, key=lambda item: item[0])
            services.page_set_reorder(
                actor=user, agent=agent, page_ids=[entry.page.public_id for _, entry in order]
            )

    def has_delete_permission(self, request: HttpRequest, obj: Agent | None = None) -> bool:
        return False

    @admin.action(description="Rotate token (the old one stops working at once)")
    def rotate_tokens(
        self, request: HttpRequest, queryset: QuerySet[Agent]
    ) -> TemplateResponse | None:
        """The new tokens are shown in this response itself: as messages, more than a few
        overflow the message cookie into the session store (the database, Redis)."""
        tokens = []
        for agent in queryset:
            try:
                token = services.agent_token_rotate(actor=request.user, agent=agent)  # type: ignore[arg-type]
            except QuireError as error:
                messages.error(request, f"{agent.name}: {error.message}")
                continue
            tokens.append((agent, token))
        if not tokens:
            return None
        response = TemplateResponse(
            request,
            "admin/agents/new_tokens.html",
            {**self.admin_site.each_context(request), "tokens": tokens},
        )
        add_never_cache_headers(response)
        return response

    @admin.action(description="Revoke (the token stops working at once)")
    def revoke_agents(self, request: HttpRequest, queryset: QuerySet[Agent]) -> None:
        for agent in queryset:
            try:
                services.agent_revoke(actor=request.user, agent=agent)  # type: ignore[arg-type]
            except QuireError as error:
                messages.error(request, f"{agent.name}: {error.message}")
                continue
            messages.success(request, f"{agent.name} is revoked; its token no longer works.")


@admin.register(PageSetEntry)
class PageSetEntryAdmin(_ServiceAdmin):
    list_display = ("agent", "page", "position", "always_include")
    list_filter = ("agent", "always_include")
    list_select_related = ("agent", "page")
    ordering = ("agent__name", "position", "id")
    fields = ("agent", "page", "use_when", "always_include", "position")
    raw_id_fields = ("page",)

    def get_readonly_fields(
        self, request: HttpRequest, obj: PageSetEntry | None = None
    ) -> tuple[str, ...]:
        return ("agent", "page", "position") if obj is not None else ()

    def save_model(
        self, request: HttpRequest, obj: PageSetEntry, form: ModelForm, change: bool
    ) -> None:
        user: Any = request.user
        if change:
            services.page_set_update(
                actor=user, entry=obj, use_when=obj.use_when, always_include=obj.always_include
            )
            return
        entry = services.page_set_add(
            actor=user,
            agent=obj.agent,
            page=obj.page,
            use_when=obj.use_when,
            always_include=obj.always_include,
            position=obj.position,
        )
        obj.pk = entry.pk

    def delete_model(self, request: HttpRequest, obj: PageSetEntry) -> None:
        services.page_set_remove(actor=request.user, agent=obj.agent, page=obj.page)  # type: ignore[arg-type]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[PageSetEntry]) -> None:
        for entry in queryset.select_related("agent", "page"):
            self.delete_model(request, entry)
