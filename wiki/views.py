"""Web UI for people: log in, the page tree, page view, create and edit, search, attachments.

Who sees what:
- every page is for logged-in staff only;
- a live page is visible to everyone logged in;
- a page with no live version yet (proposed by an agent or a reader) shows only "waiting
  for review", with links to the review for reviewers and to their proposal for its author;
- an archived page is visible, with a banner, to editors and reviewers (so it can be
  restored); for everyone else it does not exist (404).
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from wiki import login_throttle, selectors, services
from wiki.errors import Conflict, Forbidden, NotFound, QuireError
from wiki.forms import AppendForm, AttachmentForm, PageForm, SearchForm, add_service_error, sentence
from wiki.markdown import render_markdown, render_page_body
from wiki.models import Attachment, Page, Version, VersionKind
from wiki.roles import can_publish, can_review
from wiki.search import search_pages

SEARCH_LIMIT = 20


# --- log in ---------------------------------------------------------------------------------


class QuireLoginView(LoginView):
    """Django's login, refused for a while after too many failures for a username."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = str(request.POST.get("username", ""))
        if login_throttle.is_locked_out(username, login_throttle.client_address(request)):
            # Refused before the password is checked, so a locked account gives nothing away.
            context = self.get_context_data(form=self.form_class(request))
            context["lockout"] = login_throttle.lockout_message()
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        username = str(self.request.POST.get("username", ""))
        if username:
            login_throttle.record_failure(username, login_throttle.client_address(self.request))
        return super().form_invalid(form)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        login_throttle.clear_failures(
            form.get_user().get_username(), login_throttle.client_address(self.request)
        )
        return super().form_valid(form)


# --- helpers ----------------------------------------------------------------------------------


def _page_or_404(request: HttpRequest, public_id: str) -> Page:
    page = selectors.page_with_live_version(public_id)
    if page is None:
        raise Http404("There is no page with this id. It may have been mistyped.")
    if page.archived and not (can_publish(request.user) or can_review(request.user)):
        raise Http404("There is no page with this id. It may have been mistyped.")
    return page


def _attachment_or_404(page: Page, attachment_id: int) -> Attachment:
    attachment = Attachment.objects.filter(page=page, pk=attachment_id).first()
    if attachment is None:
        raise Http404("This page has no such file. It may have been removed.")
    attachment.page = page
    return attachment


def _raise_for(error: QuireError) -> None:
    """Service errors that are not about a form field become the matching error page."""
    if isinstance(error, Forbidden):
        raise PermissionDenied(sentence(error.message))
    if isinstance(error, NotFound):
        raise Http404(sentence(error.message))


def _require_publish(request: HttpRequest, what: str) -> None:
    if not can_publish(request.user):
        raise PermissionDenied(f"Only editors can {what}. Ask an editor if it needs doing.")


def _tree_context(current: Page | None = None, *, unfold_top_level: bool = False) -> dict[str, Any]:
    tree = selectors.page_tree(current, unfold_top_level=unfold_top_level)
    return {"tree": tree, "tree_roots": tree.roots}


def _positive_int(value: str | None) -> int:
    """A page number from the query string; anything unusable means the first page."""
    try:
        return min(max(1, int(value or 1)), 1_000_000)
    except ValueError:
        return 1


def _page_url(page: Page) -> str:
    return reverse("wiki:page", kwargs={"public_id": page.public_id})


# --- reading ----------------------------------------------------------------------------------


@login_required
def home(request: HttpRequest) -> HttpResponse:
    context = _tree_context(unfold_top_level=True)
    context["recent"] = list(selectors.recent_changes())
    # Archived pages are listed for editors, the only ones who can restore them.
    if can_publish(request.user):
        context["archived"], context["archived_total"] = selectors.archived_pages()
    return render(request, "wiki/home.html", context)


@login_required
def page_view(request: HttpRequest, public_id: str) -> HttpResponse:
    page = _page_or_404(request, public_id)
    user = request.user
    pending = selectors.pending_versions(page)
    mine = next((v for v in pending if v.author_user_id == user.pk), None)
    context = _tree_context(page)
    tree = context["tree"]
    context.update(
        page=page,
        pending=pending,
        my_pending=mine,
        breadcrumbs=[
            (node, node.visible or can_publish(user) or can_review(user)) for node in tree.ancestors
        ],
    )
    if page.live_version is None:
        return render(request, "wiki/page_waiting.html", context)
    context.update(
        live=page.live_version,
        body_html=mark_safe(render_page_body(page.live_version.body, page.title)),
        instructions_html=mark_safe(render_markdown(page.instructions)),
        **_children_context(request, page, tree),
        attachments=selectors.page_attachments(page),
        attachment_form=AttachmentForm() if can_publish(user) else None,
        single_review=pending[0] if len(pending) == 1 and can_review(user) else None,
    )
    return render(request, "wiki/page.html", context)


def _children_context(request: HttpRequest, page: Page, tree: selectors.PageTree) -> dict[str, Any]:
    """The "Pages under" list, CHILDREN_PER_PAGE at a time (?children=N picks the page)."""
    number = _positive_int(request.GET.get("children"))
    children, total = selectors.page_children(page, tree, number)
    last = max(1, -(-total // selectors.CHILDREN_PER_PAGE))
    first = (number - 1) * selectors.CHILDREN_PER_PAGE + 1
    return {
        "children_first": first,
        "children_last": first + len(children) - 1,
        "children": children,
        "children_total": total,
        "children_number": number,
        "children_previous": number - 1 if number > 1 else None,
        "children_next": number + 1 if number < last else None,
        "children_beyond": number > 1 and not children,
    }


_MARK_RE = re.compile(r"\[\[\[(.*?)\]\]\]", re.DOTALL)


def highlight(excerpt: str) -> SafeString:
    """Escape a search excerpt and turn its [[[term]]] markers into <mark> elements."""
    parts: list[str] = []
    position = 0
    for match in _MARK_RE.finditer(excerpt):
        parts.append(escape(excerpt[position : match.start()]))
        parts.append(format_html("<mark>{}</mark>", match.group(1)))
        position = match.end()
    parts.append(escape(excerpt[position:]))
    return mark_safe("".join(parts))  # every part is escaped above


@login_required
def search(request: HttpRequest) -> HttpResponse:
    form = SearchForm(request.GET or None)
    hits: list[dict[str, Any]] = []
    query = ""
    if form.is_bound and form.is_valid():
        query = form.cleaned_data["q"]
        if query:
            try:
                found = search_pages(query, limit=SEARCH_LIMIT)
            except QuireError as error:
                add_service_error(form, error)
            else:
                hits = [{"hit": hit, "excerpt": highlight(hit.excerpt)} for hit in found]
    context = _tree_context()
    context.update(
        form=form,
        query=query,
        hits=hits,
        crumbs=[("Pages", reverse("wiki:home")), ("Search", "")],
    )
    return render(request, "wiki/search.html", context)


# --- writing ----------------------------------------------------------------------------------


def _tag_text(tags: list[str]) -> str:
    return ", ".join(tags)


@login_required
def page_new(request: HttpRequest, public_id: str | None = None) -> HttpResponse:
    parent: Page | None = None
    if public_id is not None:
        parent = _page_or_404(request, public_id)
        if parent.archived or parent.live_version_id is None:
            messages.error(
                request,
                "New pages can only be added under a live page that is not archived.",
            )
            return redirect(_page_url(parent))
    publish = can_publish(request.user)
    form = PageForm(request.POST) if request.method == "POST" else PageForm()
    picked_parent = _picked_parent(request) if parent is None else None
    if picked_parent is not None and isinstance(picked_parent, str):
        form.is_valid()
        form.add_error(None, picked_parent)
    elif picked_parent is not None:
        parent = picked_parent
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            version = services.page_create(
                actor=request.user,  # type: ignore[arg-type]
                title=data["title"],
                body=data["body"],
                parent=parent,
                tags=data["tags"],
                instructions=data["instructions"],
                change_summary=data["change_summary"],
                publish=publish,
            )
        except QuireError as error:
            _raise_for(error)
            add_service_error(form, error)
        else:
            if publish:
                messages.success(request, f"Published “{version.title}”.")
            else:
                messages.success(
                    request,
                    f"Submitted “{version.title}” for review. It will appear in the wiki "
                    "once a reviewer approves it.",
                )
            return redirect(_page_url(version.page))
    context = _tree_context(parent)
    context.update(
        form=form,
        parent=parent,
        publish=publish,
        choose_parent=public_id is None,
        picked_parent=parent if public_id is None else None,
    )
    return render(request, "wiki/page_form.html", context)


def _picked_parent(request: HttpRequest) -> Page | str | None:
    """The parent chosen in the new-page form's picker: a page, a sentence saying what is
    wrong with the choice, or None for a top-level page."""
    chosen = str(request.POST.get("parent") or request.GET.get("parent") or "").strip()
    if not chosen:
        return None
    page = selectors.page_with_live_version(chosen)
    if page is None or page.archived or page.live_version_id is None:
        return (
            f"{chosen} is not a live page; choose the parent again, or leave it empty for a "
            "top-level page."
        )
    return page


@login_required
def page_edit(request: HttpRequest, public_id: str) -> HttpResponse:
    page = _page_or_404(request, public_id)
    user = request.user
    if page.archived:
        messages.error(request, "This page is archived. Restore it before editing it.")
        return redirect(_page_url(page))
    own = selectors.own_pending_version(page, user)
    if own is not None and own.kind != VersionKind.REPLACE:
        own = None
    live = page.live_version
    source: Version | None = own or live
    if source is None:
        if not can_review(user):
            raise PermissionDenied(
                "This page is waiting for review. You can edit it once a reviewer approves it."
            )
        source = page.versions.order_by("-number").first()
        if source is None:
            raise Http404("This page has no content yet.")
    base_number: int | None = live.number if live else None
    if own is not None and own.base_version is not None:
        base_number = own.base_version.number
    publish = can_publish(user)
    initial = {
        "title": source.title,
        "body": source.body,
        "tags": _tag_text(source.tags),
        "instructions": source.instructions,
        "base_number": base_number,
    }
    form = (
        PageForm(request.POST, initial=initial)
        if request.method == "POST"
        else PageForm(initial=initial)
    )
    conflict: dict[str, int] | None = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            version = services.version_propose(
                actor=user,  # type: ignore[arg-type]
                page=page,
                kind=VersionKind.REPLACE,
                body=data["body"],
                title=data["title"],
                tags=data["tags"],
                instructions=data["instructions"],
                change_summary=data["change_summary"],
                publish=publish,
                base_number=data["base_number"],
            )
        except QuireError as error:
            _raise_for(error)
            add_service_error(form, error)
            if isinstance(error, Conflict) and "liveVersion" in error.detail:
                conflict = {"a": data["base_number"], "b": error.detail["liveVersion"]}
                # Saving again now is a deliberate choice made after seeing the message.
                data_again = request.POST.copy()
                data_again["base_number"] = str(error.detail["liveVersion"])
                form.data = data_again
        else:
            if publish:
                messages.success(request, f"Published v{version.number} of “{version.title}”.")
            else:
                messages.success(
                    request,
                    f"Your change was submitted for review as v{version.number}. The page "
                    "shows the live version until a reviewer approves it.",
                )
            return redirect(_page_url(page))
    context = _tree_context(page)
    context.update(
        form=form,
        page=page,
        own=own,
        live=live,
        publish=publish,
        conflict=conflict,
        others_pending=[v for v in selectors.pending_versions(page) if v.author_user_id != user.pk],
    )
    return render(request, "wiki/page_form.html", context)


@login_required
def page_append(request: HttpRequest, public_id: str) -> HttpResponse:
    """Add blocks at the end of a live page; an append never conflicts with other edits."""
    page = _page_or_404(request, public_id)
    if page.archived or page.live_version_id is None:
        messages.error(request, "Only a live page that is not archived can be added to.")
        return redirect(_page_url(page))
    publish = can_publish(request.user)
    form = AppendForm(request.POST) if request.method == "POST" else AppendForm()
    if request.method == "POST" and form.is_valid():
        try:
            version = services.version_propose(
                actor=request.user,  # type: ignore[arg-type]
                page=page,
                kind=VersionKind.APPEND,
                body=form.cleaned_data["body"],
                change_summary=form.cleaned_data["change_summary"],
                publish=publish,
            )
        except QuireError as error:
            _raise_for(error)
            add_service_error(form, error)
        else:
            if publish:
                messages.success(request, f"Added to “{page.title}” as v{version.number}.")
            else:
                messages.success(
                    request,
                    f"Your addition was submitted for review as v{version.number}. It will "
                    "appear at the end of the page once a reviewer approves it.",
                )
            return redirect(_page_url(page))
    context = _tree_context(page)
    context.update(form=form, page=page, publish=publish)
    return render(request, "wiki/append_form.html", context)


@login_required
@require_POST
def page_archive(request: HttpRequest, public_id: str) -> HttpResponse:
    page = _page_or_404(request, public_id)
    _require_publish(request, "archive pages")
    try:
        services.page_archive(actor=request.user, page=page)  # type: ignore[arg-type]
    except QuireError as error:
        _raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(
            request,
            f"Archived “{page.title}”. It is hidden from the tree, search and agents; "
            "editors can still restore it from this page.",
        )
    return redirect(_page_url(page))


@login_required
@require_POST
def page_restore(request: HttpRequest, public_id: str) -> HttpResponse:
    page = _page_or_404(request, public_id)
    _require_publish(request, "restore pages")
    try:
        services.page_restore(actor=request.user, page=page)  # type: ignore[arg-type]
    except QuireError as error:
        _raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Restored “{page.title}”.")
    return redirect(_page_url(page))


# --- attachments ----------------------------------------------------------------------------


@login_required
def attachment_upload(request: HttpRequest, public_id: str) -> HttpResponse:
    page = _page_or_404(request, public_id)
    _require_publish(request, "attach files")
    if page.archived or page.live_version_id is None:
        messages.error(request, "Files can only be attached to a live page that is not archived.")
        return redirect(_page_url(page))
    form = (
        AttachmentForm(request.POST, request.FILES)
        if request.method == "POST"
        else AttachmentForm()
    )
    if request.method == "POST" and form.is_valid():
        try:
            attachment = services.attachment_add(
                actor=request.user,  # type: ignore[arg-type]
                page=page,
                upload=form.cleaned_data["file"],
            )
        except QuireError as error:
            _raise_for(error)
            add_service_error(form, error)
        else:
            messages.success(request, f"Attached {attachment.name}.")
            return redirect(_page_url(page))
    context = _tree_context(page)
    context.update(page=page, form=form)
    return render(request, "wiki/attachment_form.html", context)


@login_required
def attachment_download(
    request: HttpRequest, public_id: str, attachment_id: int
) -> HttpResponseBase:
    page = _page_or_404(request, public_id)
    if page.live_version_id is None and not can_review(request.user):
        raise Http404("This page is waiting for review; its files are not available yet.")
    attachment = _attachment_or_404(page, attachment_id)
    try:
        handle = attachment.file.open("rb")
    except (FileNotFoundError, OSError):
        raise Http404(
            "The file is missing from storage. Ask an administrator to check the media folder."
        ) from None
    # Always a download, never rendered inline: an uploaded HTML or SVG file must not run
    # in Quire's origin.
    response = FileResponse(
        handle,
        as_attachment=True,
        filename=attachment.name,
        content_type=attachment.content_type or "application/octet-stream",
    )
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["X-Content-Type-Options"] = "nosniff"
    return response


@login_required
@require_POST
def attachment_remove(request: HttpRequest, public_id: str, attachment_id: int) -> HttpResponse:
    page = _page_or_404(request, public_id)
    _require_publish(request, "remove attachments")
    attachment = _attachment_or_404(page, attachment_id)
    try:
        services.attachment_remove(actor=request.user, attachment=attachment)  # type: ignore[arg-type]
    except QuireError as error:
        _raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Removed {attachment.name}.")
    return redirect(_page_url(page))
