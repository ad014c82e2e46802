"""The admin's screens for agents: create, tokens, page-set curation, preview and activity.

Every change goes through agents/services.py. The preview calls the MCP tools' own methods
with the agent as the caller, so it shows what the agent gets, not a re-implementation.
"""

from __future__ import annotations

import inspect
import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agents import selectors, services
from agents.forms import AgentForm, MoveForm, PageSetAddForm, PageSetEntryForm
from agents.mcp import (
    WRITE_TOOLS,
    PageTools,
    is_write_tool,
    tool_names_for,
)
from agents.models import Agent, PageSetEntry
from core.errors import QuireError
from core.models import AuditEvent
from wiki.forms import sentence

AUDIT_LIMIT = 50
# The set editor shows this many entries at a time; a set can hold thousands.
ENTRIES_PER_SCREEN = 100
ADMIN_CHANGES_LIMIT = 20
PAGE_IDS_SHOWN = 12


# --- reads this screen needs (scoped, a fixed number of queries) -----------------------------


def _admin(request: HttpRequest) -> User:
    user = request.user
    if not isinstance(user, User) or not services.can_manage_agents(user):
        raise PermissionDenied(
            "Only admins can manage agents. Ask an administrator if you need an agent."
        )
    return user


def _agent_or_404(agent_id: int) -> Agent:
    agent = selectors.agent_with_owner(agent_id)
    if agent is None:
        raise Http404("There is no such agent. It may have been deleted.")
    return agent


def _entry_or_404(agent: Agent, page_id: str) -> PageSetEntry:
    entry = selectors.set_entry(agent, page_id)
    if entry is None:
        raise Http404(f"Page {page_id} is not in {agent.name}'s page set. Reload the page set.")
    return entry


def _mcp_url() -> str:
    return settings.QUIRE_BASE_URL.rstrip("/") + "/mcp"


def _client_config(token: str) -> str:
    """A Streamable HTTP client entry, as most MCP clients take it in their JSON config."""
    config = {
        "mcpServers": {
            "quire": {
                "type": "http",
                "url": _mcp_url(),
                "headers": {"Authorization": f"Bearer {token}"},
            }
        }
    }
    return json.dumps(config, indent=2)


def _tools(agent: Agent) -> list[dict[str, Any]]:
    """The tools the agent's tools/list shows, with the description it reads; `write` as
    the tool's own annotations say (get_page_source, for editing agents only, reads)."""
    return [
        {
            "name": name,
            "write": is_write_tool(name),
            "editing": name in WRITE_TOOLS,
            "description": inspect.cleandoc(getattr(PageTools, name).__doc__ or ""),
        }
        for name in tool_names_for(agent)
    ]


def _tools_summary(agent: Agent) -> str:
    """One sentence on the agent's tools, counted from what its tools/list holds."""
    names = tool_names_for(agent)
    writes = sum(1 for name in names if is_write_tool(name))
    if not agent.can_edit_pages:
        return (
            f"{len(names)} read tools only. The tools for editing are not listed to it, and "
            "calling one fails as an unknown tool."
        )
    for_editing = [n for n in names if n in WRITE_TOOLS and not is_write_tool(n)]
    return (
        f"{len(names) - writes} read tools ({', '.join(for_editing)} among them, listed because "
        f"it may edit) and {writes} write tools. Everything it writes waits for a reviewer."
    )


# --- list and create -------------------------------------------------------------------------


@login_required
@require_GET
def agent_list(request: HttpRequest) -> HttpResponse:
    _admin(request)
    agents = selectors.agents_with_entry_counts().order_by("name")
    return render(request, "agents/list.html", {"agents": agents, "crumbs": [("Agents", "")]})


TOKEN_SESSION_KEY = "quire-agent-token"  # noqa: S105 (a session key, not a secret)
TOKEN_PAD_COOKIE = "quire-token-pad"  # noqa: S105 (a cookie name, not a secret)
TOKEN_PAD_SECONDS = 300


def _show_token_once(
    request: HttpRequest, agent: Agent, token: str, *, rotated: bool
) -> HttpResponse:
    """Keep the new token for exactly one showing, then redirect to the page that shows it,
    so reloading that page never posts the form again (and never makes another token).

    The session store (the database, Redis) must never hold the token: the session keeps it
    sealed with a one-time pad that only this browser gets, in a cookie for the token page
    alone that lives five minutes. Neither half shows anything without the other, and the
    token page throws both away."""
    pad = secrets.token_bytes(len(token))
    request.session[TOKEN_SESSION_KEY] = {
        "agent": agent.pk,
        "sealed": _xor(token.encode(), pad).hex(),
        "rotated": rotated,
    }
    response = redirect("agents:token", agent_id=agent.pk)
    response.set_cookie(
        TOKEN_PAD_COOKIE,
        pad.hex(),
        max_age=TOKEN_PAD_SECONDS,
        path=reverse("agents:token", args=[agent.pk]),
        secure=request.is_secure(),
        httponly=True,
        samesite="Strict",
    )
    return response


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def _unseal(kept: dict[str, Any], pad: str) -> str:
    """The token from the session's sealed half and the cookie's pad; "" if either is wrong."""
    try:
        sealed, key = bytes.fromhex(str(kept.get("sealed", ""))), bytes.fromhex(pad)
        return _xor(sealed, key).decode("ascii") if sealed else ""
    except (ValueError, UnicodeDecodeError):
        return ""


@login_required
@require_GET
def agent_token(request: HttpRequest, agent_id: int) -> HttpResponse:
    _admin(request)
    agent = _agent_or_404(agent_id)
    kept = request.session.get(TOKEN_SESSION_KEY)
    token, rotated = "", False
    if isinstance(kept, dict) and kept.get("agent") == agent.pk:
        del request.session[TOKEN_SESSION_KEY]
        token = _unseal(kept, request.COOKIES.get(TOKEN_PAD_COOKIE, ""))
        rotated = bool(kept.get("rotated"))
    response = render(
        request,
        "agents/token.html",
        {
            "agent": agent,
            "token": token,
            "rotated": rotated,
            "mcp_url": _mcp_url(),
            "client_config": _client_config(token) if token else "",
            "crumbs": _agent_crumbs(agent, ("Token", "")),
        },
    )
    # The token exists only in this response: no cache may keep it.
    add_never_cache_headers(response)
    response.delete_cookie(TOKEN_PAD_COOKIE, path=request.path, samesite="Strict")
    return response


def _agent_crumbs(agent: Agent | None, *more: tuple[str, str]) -> list[tuple[str, str]]:
    crumbs = [("Agents", reverse("agents:list"))]
    if agent is not None:
        crumbs.append((agent.name, reverse("agents:detail", args=[agent.pk])))
    crumbs.extend(more)
    return crumbs


@login_required
@require_http_methods(["GET", "POST"])
def agent_new(request: HttpRequest) -> HttpResponse:
    user = _admin(request)
    # The admin creating the agent is its owner unless they choose someone else.
    form = AgentForm(request.POST or None, initial={"owner": user.pk})
    made = form.save_with(partial(services.agent_create, actor=user)) if form.is_bound else None
    if made is not None:
        agent, token = made
        return _show_token_once(request, agent, token, rotated=False)
    status = 400 if form.is_bound else 200
    return render(
        request,
        "agents/new.html",
        {"form": form, "crumbs": _agent_crumbs(None, ("New agent", ""))},
        status=status,
    )


# --- one agent -------------------------------------------------------------------------------


@dataclass
class EntryRow:
    entry: PageSetEntry
    form: PageSetEntryForm
    covers: int
    first: bool
    last: bool

    @property
    def hidden_reason(self) -> str:
        page = self.entry.page
        if page.archived:
            return "Archived: the agent does not see it (nor the pages under it) until restored."
        if page.live_version_id is None:
            return "Not live yet: the agent sees it once a reviewer approves it."
        return ""


@dataclass
class ToolCallRow:
    """One audit event of the agent, cut short for a table: a browse can list every page."""

    event: AuditEvent
    page_ids: list[str]
    more_pages: int
    arguments: str

    @classmethod
    def of(cls, event: AuditEvent) -> ToolCallRow:
        data = event.data if isinstance(event.data, dict) else {}
        page_ids = [str(page_id) for page_id in data.get("pageIds") or []]
        listed = len(page_ids)
        if not page_ids and isinstance(data.get("returned"), int):
            # A browse records only its first and last page and how many it returned.
            page_ids = [str(p) for p in (data.get("first"), data.get("last")) if p][:1]
            listed = data["returned"]
        arguments = data.get("arguments") or {}
        shown = json.dumps(arguments, ensure_ascii=False) if arguments else ""
        return cls(
            event=event,
            page_ids=page_ids[:PAGE_IDS_SHOWN],
            more_pages=max(0, listed - min(len(page_ids), PAGE_IDS_SHOWN)),
            arguments=shown if len(shown) <= 160 else shown[:157] + "...",
        )


def _agent_page(
    request: HttpRequest,
    agent: Agent,
    *,
    edit_form: AgentForm | None = None,
    add_form: PageSetAddForm | None = None,
    failed_entry: tuple[str, PageSetEntryForm] | None = None,
    status: int = 200,
) -> HttpResponse:
    # Every entry as (id, path): enough to count what each covers and to page through them;
    # full rows only for the entries on this screen.
    order = selectors.entry_paths(agent)
    every_page = selectors.every_page_entry(agent) if agent.all_pages else None
    covers = selectors.page_set_coverage(
        order + ([(every_page.pk, every_page.page.path)] if every_page is not None else [])
    )
    paginator = Paginator(order, ENTRIES_PER_SCREEN)
    screen = paginator.get_page(request.GET.get("entries"))
    offset = screen.start_index() - 1 if order else 0
    shown = {pk: i for i, (pk, _) in enumerate(screen.object_list)}
    entries = sorted(selectors.entries_by_id(shown), key=lambda entry: shown[entry.pk])
    rows = []
    for index, entry in enumerate(entries, start=offset):
        if failed_entry is not None and failed_entry[0] == entry.page.public_id:
            form = failed_entry[1]
        else:
            form = PageSetEntryForm(
                initial={
                    "use_when": "\n".join(entry.use_when),
                    "always_include": entry.always_include,
                },
                prefix=entry.page.public_id,
            )
        rows.append(
            EntryRow(
                entry=entry,
                form=form,
                covers=covers[entry.pk],
                first=index == 0,
                last=index == len(order) - 1,
            )
        )
    edit_form = AgentForm.of(agent) if edit_form is None else edit_form
    events = [ToolCallRow.of(event) for event in selectors.tool_calls(agent, limit=AUDIT_LIMIT)]
    admin_changes = selectors.admin_changes(agent, limit=ADMIN_CHANGES_LIMIT)
    return render(
        request,
        "agents/detail.html",
        {
            "agent": agent,
            "edit_form": edit_form,
            "add_form": add_form or PageSetAddForm(),
            "rows": rows,
            "entry_count": len(order),
            "every_page": every_page,
            "every_page_covers": covers[every_page.pk] if every_page is not None else 0,
            "entries_screen": screen,
            "visible_count": sum(covers.values()),
            "crumbs": [*_agent_crumbs(agent)[:-1], (agent.name, "")],
            "tools": _tools(agent),
            "mcp_url": _mcp_url(),
            "events": events,
            "admin_changes": admin_changes,
        },
        status=status,
    )


def _back(agent: Agent, anchor: str = "") -> HttpResponse:
    url = reverse("agents:detail", args=[agent.pk])
    return redirect(url + (f"#{anchor}" if anchor else ""))


@login_required
@require_GET
def agent_detail(request: HttpRequest, agent_id: int) -> HttpResponse:
    _admin(request)
    return _agent_page(request, _agent_or_404(agent_id))


@login_required
@require_POST
def agent_edit(request: HttpRequest, agent_id: int) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    form = AgentForm(request.POST, current_owner_id=agent.owner_id)
    saved = form.save_with(partial(services.agent_update, actor=user, agent=agent))
    if saved is not None:
        messages.success(request, f"Saved {saved.name}.")
        return _back(saved)
    messages.error(request, "The agent was not saved. Correct the errors in the form below.")
    return _agent_page(request, agent, edit_form=form, status=400)


@login_required
@require_POST
def agent_rotate(request: HttpRequest, agent_id: int) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    try:
        token = services.agent_token_rotate(actor=user, agent=agent)
    except QuireError as error:
        messages.error(request, sentence(error.message))
        return _back(agent)
    agent.refresh_from_db()
    return _show_token_once(request, agent, token, rotated=True)


@login_required
@require_POST
def agent_revoke(request: HttpRequest, agent_id: int) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    try:
        services.agent_revoke(actor=user, agent=agent)
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(
            request,
            f"Revoked {agent.name}: its token no longer works. Issue a new token to switch it "
            "back on.",
        )
    return _back(agent)


# --- page set --------------------------------------------------------------------------------


@login_required
@require_POST
def page_set_add(request: HttpRequest, agent_id: int) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    form = PageSetAddForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            if data["page"] is not None:
                services.page_set_add(
                    actor=user,
                    agent=agent,
                    page=data["page"],
                    use_when=data["use_when"],
                    always_include=data["always_include"],
                )
                done = f"Added “{data['page'].title}” and the pages under it"
            else:
                added = services.page_set_add_tagged(
                    actor=user,
                    agent=agent,
                    tag=data["tag"],
                    use_when=data["use_when"],
                    always_include=data["always_include"],
                )
                plural = "s" if len(added) != 1 else ""
                done = f"Added {len(added)} page{plural} tagged “{data['tag']}”"
        except QuireError as error:
            form.add_service_error(error)
        else:
            messages.success(request, f"{done} to {agent.name}'s page set.")
            return _back(agent, "page-set")
    messages.error(request, "Nothing was added. Correct the errors in the form below.")
    return _agent_page(request, agent, add_form=form, status=400)


@login_required
@require_POST
def page_set_all_pages(request: HttpRequest, agent_id: int) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    give = request.POST.get("all_pages") == "1"
    try:
        services.page_set_all_pages(actor=user, agent=agent, all_pages=give)
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        done = (
            "now sees every page, those published later included"
            if give
            else ("no longer sees every page: only its entries")
        )
        messages.success(request, f"{agent.name} {done}.")
    return _back(agent, "page-set")


@login_required
@require_POST
def page_set_update(request: HttpRequest, agent_id: int, page_id: str) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    entry = _entry_or_404(agent, page_id)
    form = PageSetEntryForm(request.POST, prefix=page_id)
    if form.is_valid():
        try:
            services.page_set_update(
                actor=user,
                entry=entry,
                use_when=form.cleaned_data["use_when"],
                always_include=form.cleaned_data["always_include"],
            )
        except QuireError as error:
            form.add_service_error(error)
        else:
            messages.success(request, f"Saved the entry for “{entry.page.title}”.")
            return _back(agent, f"entry-{page_id}")
    messages.error(request, f"The entry for “{entry.page.title}” was not saved. Correct it below.")
    return _agent_page(request, agent, failed_entry=(page_id, form), status=400)


@login_required
@require_POST
def page_set_remove(request: HttpRequest, agent_id: int, page_id: str) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    entry = _entry_or_404(agent, page_id)
    try:
        services.page_set_remove(actor=user, agent=agent, page=entry.page)
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Removed “{entry.page.title}” from {agent.name}'s page set.")
    return _back(agent, "page-set")


@login_required
@require_POST
def page_set_move(request: HttpRequest, agent_id: int, page_id: str) -> HttpResponse:
    user = _admin(request)
    agent = _agent_or_404(agent_id)
    form = MoveForm(request.POST)
    order = [entry.page.public_id for entry in selectors.curated_entries(agent)]
    if not form.is_valid() or page_id not in order:
        messages.error(request, "That move is not possible. Reload the page set and try again.")
        return _back(agent, "page-set")
    index = order.index(page_id)
    other = index - 1 if form.cleaned_data["direction"] == "up" else index + 1
    if 0 <= other < len(order):
        order[index], order[other] = order[other], order[index]
        try:
            services.page_set_reorder(actor=user, agent=agent, page_ids=order)
        except QuireError as error:
            messages.error(request, sentence(error.message))
    return _back(agent, f"entry-{page_id}")


# --- what the agent sees ---------------------------------------------------------------------


@dataclass
class ToolRun:
    """One tool call made for the preview: its result as the agent receives it, or its error."""

    result: dict[str, Any] | None = None
    text: str = ""
    error: str = ""


def _run(call: Callable[[], Any]) -> ToolRun:
    try:
        result = dict(call())
    except QuireError as error:
        # The same `code: message` text the MCP server sends back as a tool error.
        return ToolRun(error=f"{error.code}: {error.message}")
    return ToolRun(result=result, text=json.dumps(result, indent=2, ensure_ascii=False))


@login_required
@require_GET
def agent_preview(request: HttpRequest, agent_id: int) -> HttpResponse:
    _admin(request)
    agent = _agent_or_404(agent_id)
    # The tools read the caller from the request, as the MCP view leaves it.
    tools = PageTools(request=SimpleNamespace(quire_agent=agent, quire_preview=True))
    browse = _run(tools.browse)
    query = request.GET.get("q")
    page_id = (request.GET.get("page") or "").strip()
    search = _run(lambda: tools.search_pages(query or "")) if query is not None else None
    packed = _run(lambda: tools.get_page(page_id)) if page_id else None
    return render(
        request,
        "agents/preview.html",
        {
            "crumbs": _agent_crumbs(agent, ("What it sees", "")),
            "agent": agent,
            "tools": _tools(agent),
            "tools_summary": _tools_summary(agent),
            "browse": browse,
            "search_query": query or "",
            "search": search,
            "page_id": page_id,
            "packed": packed,
        },
    )
