"""Web UI for people: log in, the page tree, page view, search, archive, attachments.

Creating and editing pages are proposals: their forms are in reviews/editing.py.

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
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
)
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST

from core.errors import Forbidden, NotFound, QuireError
from wiki import login_throttle, permissions, selectors, services
from wiki.forms import (
    AttachmentForm,
    GrantForm,
    MoveForm,
    ReorderForm,
    SearchForm,
    add_service_error,
    sentence,
)
from wiki.markdown import render_markdown, render_page_body
from wiki.models import Attachment, Page
from wiki.permissions import PUBLISH, can, crosses_workflow_border, holds
from wiki.roles import can_publish, can_review
from wiki.scope import EVERY_PAGE, person_scope, shown_path
from wiki.search import search_pages

SEARCH_LIMIT = 20


# --- log in ---------------------------------------------------------------------------------


class QuireLoginView(LoginView):
    """Django's login, refused for a while after too many failures for a username."""

    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        attempt = self._attempt()
        if login_throttle.is_locked_out(attempt):
            # Refused before the password is checked, so a locked account gives nothing away.
            context = self.get_context_data(form=self.form_class(request))
            context["lockout"] = login_throttle.lockout_message()
            return self.render_to_response(context, status=429)
        return super().post(request, *args, **kwargs)

    def _attempt(self) -> login_throttle.LoginAttempt:
        username = str(self.request.POST.get("username", ""))
        return login_throttle.LoginAttempt.from_request(self.request, username)

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        if self.request.POST.get("username"):
            login_throttle.record_failure(self._attempt())
        return super().form_invalid(form)

    def form_valid(self, form: AuthenticationForm) -> HttpResponse:
        username = form.get_user().get_username()
        login_throttle.clear_failures(
            login_throttle.LoginAttempt.from_request(self.request, username)
        )
        response = super().form_valid(form)
        login_throttle.remember_device(response, self.request, username)
        return response


class AdminLoginView(QuireLoginView):
    """The admin's login: the same throttled form, and no redirect loop for non-staff.

    A logged-in person without admin access is told so and may log in as someone else,
    instead of being sent back to /admin/, which sends them here again.
    """

    redirect_authenticated_user = False

    def get_default_redirect_url(self) -> str:
        return reverse("admin:index")

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and request.user.is_staff:
            return HttpResponseRedirect(self.get_success_url())
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        user = self.request.user
        if user.is_authenticated and not user.is_staff:
            context["not_staff"] = (
                f"You are logged in as {user.get_username()}, which has no access to the admin. "
                "Log in with an admin account, or go back to the wiki."
            )
        return context


# --- helpers ----------------------------------------------------------------------------------


def page_or_404(request: HttpRequest, public_id: str) -> Page:
    try:
        return selectors.page_for_person(request.user, public_id)
    except NotFound:
        raise Http404("There is no page with this id. It may have been mistyped.") from None


def _attachment_or_404(page: Page, attachment_id: int) -> Attachment:
    attachment = selectors.page_attachment(page, attachment_id)
    if attachment is None:
        raise Http404("This page has no such file. It may have been removed.")
    return attachment


def raise_for(error: QuireError) -> None:
    """Service errors that are not about a form field become the matching error page."""
    if isinstance(error, Forbidden):
        raise PermissionDenied(sentence(error.message))
    if isinstance(error, NotFound):
        raise Http404(sentence(error.message))


def _require_publish(request: HttpRequest, what: str, page: Page) -> None:
    # The section's publishers (wiki.permissions.holds): a workflow aside, as these changes
    # have no proposal to go through; a move across a workflow's border is refused later.
    refusal = permissions.refusal(request.user, PUBLISH, page, grants_only=True)
    if refusal is not None:
        raise PermissionDenied(f"You cannot {what} here: {refusal}")


def tree_context(
    request: HttpRequest, current: Page | None = None, *, unfold_top_level: bool = False
) -> dict[str, Any]:
    tree = selectors.page_tree(
        current, reader=person_scope(request.user), unfold_top_level=unfold_top_level
    )
    return {"tree": tree, "tree_roots": tree.roots}


def _positive_int(value: str | None) -> int:
    """A page number from the query string; anything unusable means the first page."""
    try:
        return min(max(1, int(value or 1)), 1_000_000)
    except ValueError:
        return 1


def page_url(page: Page) -> str:
    return reverse("wiki:page", kwargs={"public_id": page.public_id})


# --- reading ----------------------------------------------------------------------------------


@login_required
def home(request: HttpRequest) -> HttpResponse:
    context = tree_context(request, unfold_top_level=True)
    context["recent"] = list(selectors.recent_changes(reader=person_scope(request.user)))
    # Archived pages are listed for those who may restore them (wiki.permissions: publish).
    context["archived"], context["archived_total"] = selectors.archived_pages(request.user)
    return render(request, "wiki/home.html", context)


@login_required
def page_view(request: HttpRequest, public_id: str) -> HttpResponse:
    page = page_or_404(request, public_id)
    user = request.user
    pending = selectors.pending_versions(page)
    mine = next((v for v in pending if v.author_user_id == user.pk), None)
    context = tree_context(request, page)
    tree = context["tree"]
    context.update(
        page=page,
        pending=pending,
        my_pending=mine,
        breadcrumbs=[
            (node, node.visible or (node.in_reach and (can_publish(user) or can_review(user))))
            for node in tree.ancestors
        ],
    )
    if page.live_version is None:
        return render(request, "wiki/page_waiting.html", context)
    arranges = holds(user, PUBLISH, page)
    context.update(
        live=page.live_version,
        body_html=mark_safe(
            render_page_body(page.live_version.body, page.title, reader=person_scope(user))
        ),
        instructions_html=mark_safe(render_markdown(page.instructions, reader=person_scope(user))),
        **_children_context(request, page, tree),
        attachments=selectors.page_attachments(page),
        attachment_form=AttachmentForm() if arranges else None,
        # This page's own answers (wiki.permissions): under a review workflow an editor's
        # Edit is a proposal; Move and Archive follow the section's publishers.
        can_publish=can(user, PUBLISH, page),
        may_arrange=arranges,
        single_review=pending[0] if len(pending) == 1 and can_review(user) else None,
    )
    return render(request, "wiki/page.html", context)


def _children_context(request: HttpRequest, page: Page, tree: selectors.PageTree) -> dict[str, Any]:
    """The "Pages under" list, CHILDREN_PER_PAGE at a time (?children=N picks the page)."""
    number = _positive_int(request.GET.get("children"))
    children, total = selectors.page_children(page, tree, number, reader=person_scope(request.user))
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
                scope = person_scope(request.user)
                found = search_pages(query, scope=scope, limit=SEARCH_LIMIT, fold_copies=True)
            except QuireError as error:
                add_service_error(form, error)
            else:
                hits = [
                    {
                        "hit": hit,
                        "excerpt": highlight(hit.excerpt),
                        "path": scope.shown(hit.path, hit.hidden_prefix),
                        "copies": [
                            (copy.public_id, scope.shown(copy.path, copy.hidden_prefix))
                            for copy in hit.copies
                        ],
                    }
                    for hit in found
                ]
    context = tree_context(request)
    context.update(
        form=form,
        query=query,
        hits=hits,
        crumbs=[("Pages", reverse("wiki:home")), ("Search", "")],
    )
    return render(request, "wiki/search.html", context)


# --- writing ----------------------------------------------------------------------------------


@login_required
@require_POST
def page_archive(request: HttpRequest, public_id: str) -> HttpResponse:
    page = page_or_404(request, public_id)
    _require_publish(request, "archive pages", page)
    try:
        services.page_archive(actor=request.user, page=page)  # type: ignore[arg-type]
    except QuireError as error:
        raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(
            request,
            f"Archived “{page.title}”. It is hidden from the tree, search and agents; "
            "editors can still restore it from this page.",
        )
    return redirect(page_url(page))


@login_required
@require_POST
def page_restore(request: HttpRequest, public_id: str) -> HttpResponse:
    page = page_or_404(request, public_id)
    _require_publish(request, "restore pages", page)
    try:
        services.page_restore(actor=request.user, page=page)  # type: ignore[arg-type]
    except QuireError as error:
        raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Restored “{page.title}”.")
    return redirect(page_url(page))


@login_required
def page_move(request: HttpRequest, public_id: str) -> HttpResponse:
    """Move a page, with everything under it, under another parent or to the top level.

    Beside a page of the same title it asks first, as a new page does."""
    page = page_or_404(request, public_id)
    _require_publish(request, "move pages", page)
    form = MoveForm(request.POST or None)
    twin: Page | None = None
    if request.method == "POST" and form.is_valid():
        chosen = form.cleaned_data["parent"].strip()
        try:
            parent = (
                selectors.page_for_person(request.user, chosen, live_only=True) if chosen else None
            )
            if not form.cleaned_data["same_title_ok"]:
                twin = selectors.sibling_titled(parent, page.title, other_than=page)
            if twin is None:
                services.page_move(actor=request.user, page=page, parent=parent)  # type: ignore[arg-type]
        except QuireError as error:
            # A move across a review workflow's border is proposed instead: the screen says
            # so and offers the proposal (reviews.editing.page_move_propose).
            crossing = isinstance(error, Forbidden) and crosses_workflow_border(page, parent)
            if not (isinstance(error, NotFound) or crossing):
                raise_for(error)
            form.add_error(None, sentence(error.message))
            if crossing:
                return _move_screen(request, page, form=form, propose_under=chosen or "top")
        else:
            where = f"under “{parent.title}”" if parent is not None else "at the top level"
            if twin is not None:
                form.add_error(
                    None,
                    f"A page titled “{twin.title}” already exists {where} "
                    f"({selectors.path_shown_to(request.user, twin)}). Rename "
                    "one of them, or tick the box below and move it anyway.",
                )
                return _move_screen(request, page, form=form, twin=twin)
            page.refresh_from_db()
            messages.success(
                request,
                f"Moved “{page.title}” {where}; its address is now "
                f"{selectors.path_shown_to(request.user, page)}. Links to it "
                "and agents' page sets follow it.",
            )
            return redirect(page_url(page))
    return _move_screen(request, page, form=form)


def _move_screen(
    request: HttpRequest,
    page: Page,
    *,
    form: MoveForm | None = None,
    reorder_form: ReorderForm | None = None,
    twin: Page | None = None,
    propose_under: str = "",
) -> HttpResponse:
    siblings = selectors.siblings_in_order(page, reader=person_scope(request.user))
    before = None
    for sibling in siblings:
        if sibling.pk == page.pk:
            break
        before = sibling
    context = tree_context(request, page)
    context.update(
        page=page,
        form=form or MoveForm(),
        reorder_form=reorder_form or ReorderForm(),
        siblings=[sibling for sibling in siblings if sibling.pk != page.pk],
        placed_after=before.public_id if before is not None else "first",
        twin=twin,
        propose_under=propose_under,
        # Where it is, as they are shown it: a parent hidden from them is not named.
        page_path=shown_path(page.path, EVERY_PAGE, page.hidden_prefix),  # type: ignore[attr-defined]
    )
    return render(request, "wiki/page_move.html", context, status=403 if propose_under else 200)


@login_required
@require_POST
def page_reorder(request: HttpRequest, public_id: str) -> HttpResponse:
    """Place a page first among its siblings or right after one of them."""
    page = page_or_404(request, public_id)
    _require_publish(request, "reorder pages", page)
    form = ReorderForm(request.POST)
    if form.is_valid():
        chosen = form.cleaned_data["after"].strip()
        try:
            after = (
                None
                if chosen == "first"
                else selectors.page_for_person(request.user, chosen, live_only=True)
            )
            services.page_reorder(actor=request.user, page=page, after=after)  # type: ignore[arg-type]
        except QuireError as error:
            if not isinstance(error, NotFound):
                raise_for(error)
            form.add_error(None, sentence(error.message))
        else:
            where = "first" if after is None else f"after “{after.title}”"
            messages.success(request, f"“{page.title}” now comes {where} among its siblings.")
            return redirect(page_url(page))
    return _move_screen(request, page, reorder_form=form)


# --- attachments ----------------------------------------------------------------------------


@login_required
def attachment_upload(request: HttpRequest, public_id: str) -> HttpResponse:
    page = page_or_404(request, public_id)
    _require_publish(request, "attach files", page)
    if page.archived or page.live_version_id is None:
        messages.error(request, "Files can only be attached to a live page that is not archived.")
        return redirect(page_url(page))
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
            raise_for(error)
            add_service_error(form, error)
        else:
            messages.success(request, f"Attached {attachment.name}.")
            return redirect(page_url(page))
    context = tree_context(request, page)
    context.update(page=page, form=form)
    return render(request, "wiki/attachment_form.html", context)


@login_required
def attachment_download(
    request: HttpRequest, public_id: str, attachment_id: int
) -> HttpResponseBase:
    page = page_or_404(request, public_id)
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
    page = page_or_404(request, public_id)
    _require_publish(request, "remove attachments", page)
    attachment = _attachment_or_404(page, attachment_id)
    try:
        services.attachment_remove(actor=request.user, attachment=attachment)  # type: ignore[arg-type]
    except QuireError as error:
        raise_for(error)
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Removed {attachment.name}.")
    return redirect(page_url(page))


# --- who may do what on a page (admins) -----------------------------------------------------


@login_required
def page_access(request: HttpRequest, public_id: str) -> HttpResponse:
    """Who may read, propose, publish and decide on a page and from where each right comes,
    and the grants on the page: an admin adds a group's rights here or takes them off."""
    page = page_or_404(request, public_id)
    if not permissions.is_admin(request.user):
        raise PermissionDenied("Only admins can see and change who may do what on a page.")
    form = GrantForm(request.POST or None, groups=permissions.group_names_all())
    status = 200
    if request.method == "POST":
        try:
            if "remove" in request.POST:
                permissions.grant_delete(
                    actor=request.user, page=page, grant_id=request.POST.get("remove")
                )
                messages.success(request, "Grant removed.")
                return redirect(reverse("wiki:access", kwargs={"public_id": page.public_id}))
            if form.is_valid():
                grant = permissions.grant_set(
                    actor=request.user,
                    page=page,
                    group=permissions.group_named(form.cleaned_data["group"]),
                    rights=form.cleaned_data["rights"],
                )
                messages.success(
                    request,
                    f"{grant.group.name} may now {', '.join(grant.rights)} on “{page.title}” "
                    "and everything under it.",
                )
                return redirect(reverse("wiki:access", kwargs={"public_id": page.public_id}))
            status = 400
        except QuireError as error:
            raise_for(error)
            form.add_error(None, sentence(error.message))
            status = 400
    context = tree_context(request, page)
    context.update(
        page=page,
        form=form,
        holders=permissions.holders_at(page),
        grants=permissions.grants_on(page),
        inherited=[g for g in permissions.grants_applying(page) if g.page_id != page.pk],
    )
    return render(request, "wiki/page_access.html", context, status=status)
