"""The browser's doors into the life of a version: new page, edit and append forms.

Each calls one service of reviews/actions/; an editor's save publishes at once, anyone
else's waits in review. The URLs keep the wiki's names (`wiki:new`, `wiki:edit`...): see
config/urls.py.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.errors import Conflict, NotFound, QuireError
from reviews.actions.create import page_create
from reviews.actions.propose import check_can_append, version_propose
from reviews.merge import appended_body
from wiki import selectors
from wiki.forms import AppendForm, PageForm, add_service_error, sentence
from wiki.models import FormSubmission, Page, Version, VersionKind
from wiki.permissions import PROPOSE, PUBLISH, can, refusal
from wiki.roles import can_review
from wiki.services import AlreadySubmitted, submit_once
from wiki.views import page_or_404, page_url, raise_for, tree_context


def _tag_text(tags: list[str]) -> str:
    return ", ".join(tags)


@login_required
def page_new(request: HttpRequest, public_id: str | None = None) -> HttpResponse:
    parent: Page | None = None
    if public_id is not None:
        parent = page_or_404(request, public_id)
        if parent.archived or parent.live_version_id is None:
            messages.error(
                request,
                "New pages can only be added under a live page that is not archived.",
            )
            return redirect(page_url(parent))
    form = PageForm(request.POST) if request.method == "POST" else PageForm()
    picked_parent = _picked_parent(request) if parent is None else None
    if isinstance(picked_parent, str):
        form.is_valid()
        form.add_error(None, picked_parent)
    elif picked_parent is not None:
        parent = picked_parent
    # Where the page goes decides: a workflow there makes it a proposal (wiki.permissions).
    publish = can(request.user, PUBLISH, parent)
    twin: Page | None = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        saved = selectors.submitted_form(request.user, data["form_token"])
        if saved is not None:
            return _already_saved(request, AlreadySubmitted(saved.url))
        twin = None if data["same_title_ok"] else selectors.sibling_titled(parent, data["title"])
        if twin is not None:
            form.add_error("title", _twin_message(twin, parent))
    if request.method == "POST" and form.is_valid():
        created = _page_create(request, form, parent, publish)
        if created is not None:
            return created
    context = tree_context(request, parent)
    context.update(
        form=form,
        parent=parent,
        publish=publish,
        choose_parent=public_id is None,
        picked_parent=parent if public_id is None else None,
        twin=twin,
    )
    return render(request, "wiki/page_form.html", context)


def _page_create(
    request: HttpRequest, form: PageForm, parent: Page | None, publish: bool
) -> HttpResponse | None:
    """Save the new page once; None when the service refused it (the form says why)."""
    data = form.cleaned_data
    try:
        with submit_once(actor=request.user, token=data["form_token"]) as claim:  # type: ignore[arg-type]
            version = page_create(
                actor=request.user,  # type: ignore[arg-type]
                title=data["title"],
                body=data["body"],
                parent=parent,
                tags=data["tags"],
                instructions=data["instructions"],
                change_summary=data["change_summary"],
                publish=publish,
            )
            _saved_at(claim, page_url(version.page))
    except AlreadySubmitted as error:
        return _already_saved(request, error)
    except QuireError as error:
        raise_for(error)
        add_service_error(form, error)
        return None
    if publish:
        messages.success(request, f"Published “{version.title}”.")
    else:
        messages.success(
            request,
            f"Submitted “{version.title}” for review. It will appear in the wiki "
            "once a reviewer approves it.",
        )
    return redirect(page_url(version.page))


def _twin_message(twin: Page, parent: Page | None, *, renaming: bool = False) -> str:
    where = f"under “{parent.title}”" if parent is not None else "at the top level"
    then = (
        "Choose another title, or tick the box below and save again to use it anyway."
        if renaming
        else "Open it instead, change the title, or tick the box below and save again to "
        "create a second one."
    )
    return f"A page titled “{twin.title}” already exists {where} ({twin.path}). {then}"


def _saved_at(claim: FormSubmission | None, url: str) -> None:
    if claim is not None:
        claim.url = url


def _already_saved(request: HttpRequest, error: AlreadySubmitted) -> HttpResponse:
    """Back and save again: show what the first save made instead of making it twice."""
    messages.info(
        request,
        "This form was already saved, so nothing was saved a second time; here is what the "
        "first save made.",
    )
    return redirect(error.url or "wiki:home")


def _picked_parent(request: HttpRequest) -> Page | str | None:
    """The parent chosen in the new-page form's picker: a page, a sentence saying what is
    wrong with the choice, or None for a top-level page."""
    chosen = str(request.POST.get("parent") or request.GET.get("parent") or "").strip()
    if not chosen:
        return None
    try:
        page: Page | None = selectors.page_for_person(request.user, chosen, live_only=True)
    except NotFound:
        page = None
    if page is None or page.archived:
        return (
            f"{chosen} is not a live page; choose the parent again, or leave it empty for a "
            "top-level page."
        )
    return page


def _cannot_edit(request: HttpRequest, page: Page) -> HttpResponse | None:
    """Why `page` opens no editor: archived (back to the page, saying so), or the person may
    neither publish nor propose there (wiki.permissions: 403 saying who may), before they
    write anything."""
    if page.archived:
        messages.error(request, "This page is archived. Restore it before editing it.")
        return redirect(page_url(page))
    user = request.user
    refused = None if can(user, PUBLISH, page) else refusal(user, PROPOSE, page)
    if refused is not None:
        raise PermissionDenied(sentence(refused))
    return None


@login_required
def page_edit(request: HttpRequest, public_id: str) -> HttpResponse:
    page = page_or_404(request, public_id)
    user = request.user
    if (cannot := _cannot_edit(request, page)) is not None:
        return cannot
    own, own_append = _own_pending(page, user)
    live = page.live_version
    initial = _edit_initial(page, user, own, own_append)
    form = (
        PageForm(request.POST, initial=initial)
        if request.method == "POST"
        else PageForm(initial=initial)
    )
    publish = can(user, PUBLISH, page)
    conflict: dict[str, int] | None = None
    twin: Page | None = None
    if request.method == "POST" and form.is_valid():
        title = form.cleaned_data["title"]
        renamed = title.strip().casefold() != page.title.strip().casefold()
        if renamed and not form.cleaned_data["same_title_ok"]:
            twin = selectors.sibling_titled(page.parent, title, other_than=page)
        if twin is not None:
            form.add_error("title", _twin_message(twin, page.parent, renaming=True))
    if request.method == "POST" and form.is_valid():
        saved, conflict = _page_propose(request, page, form, publish)
        if saved is not None:
            return saved
    context = tree_context(request, page)
    context.update(
        form=form,
        page=page,
        own=own,
        own_append=own_append,
        live=live,
        publish=publish,
        conflict=conflict,
        twin=twin,
        others_pending=[v for v in selectors.pending_versions(page) if v.author_user_id != user.pk],
    )
    return render(request, "wiki/page_form.html", context)


def _own_pending(page: Page, user: Any) -> tuple[Version | None, Version | None]:
    """The person's own waiting proposal on the page: (a replacement, an addition)."""
    own = selectors.own_pending_version(page, user)
    if own is not None and own.kind == VersionKind.APPEND:
        return None, own
    return own, None


def _edit_initial(
    page: Page, user: Any, own: Version | None, own_append: Version | None
) -> dict[str, Any]:
    """The edit form as it opens: one's own waiting proposal, else the live version (a
    reviewer may edit a page that waits for its first review)."""
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
    return {
        "title": source.title,
        # A waiting addition of one's own is part of the text one edits: saving keeps it.
        "body": appended_body(source.body, own_append.proposed_body)
        if own_append is not None
        else source.body,
        "tags": _tag_text(source.tags),
        "instructions": source.instructions,
        "base_number": base_number,
    }


def _page_propose(
    request: HttpRequest, page: Page, form: PageForm, publish: bool
) -> tuple[HttpResponse | None, dict[str, int] | None]:
    """Save the edit once: (the redirect, None), or (None, the versions a conflict is
    between) when the service refused it (the form says why, holding the merge to resolve)."""
    data = form.cleaned_data
    try:
        with submit_once(actor=request.user, token=data["form_token"]) as claim:  # type: ignore[arg-type]
            version = version_propose(
                actor=request.user,  # type: ignore[arg-type]
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
            _saved_at(claim, page_url(page))
    except AlreadySubmitted as error:
        return _already_saved(request, error), None
    except QuireError as error:
        raise_for(error)
        add_service_error(form, error)
        if not (isinstance(error, Conflict) and "liveVersion" in error.detail):
            return None, None
        # The form now holds the merge to resolve, against what is live now.
        data_again = request.POST.copy()
        data_again["base_number"] = str(error.detail["liveVersion"])
        if "mergedText" in error.detail:
            data_again["body"] = error.detail["mergedText"]
            data_again["resolving"] = "1"
        form.data = data_again
        return None, {"a": data["base_number"], "b": error.detail["liveVersion"]}
    messages.success(request, _proposed_message(version, publish))
    return redirect(page_url(page)), None


def _proposed_message(version: Version, publish: bool) -> str:
    if not publish:
        return (
            f"Your change was submitted for review as v{version.number}. The page "
            "shows the live version until a reviewer approves it."
        )
    merged = (
        " Someone published a newer version while you were editing; your changes "
        "were merged with theirs, and both are kept."
        if version.merged
        else ""
    )
    return f"Published v{version.number} of “{version.title}”.{merged}"


@login_required
def page_append(request: HttpRequest, public_id: str) -> HttpResponse:
    """Add blocks at the end of a live page; an append never conflicts with other edits."""
    page = page_or_404(request, public_id)
    try:
        check_can_append(page)
    except Conflict as error:
        messages.error(request, sentence(error.message))
        return redirect(page_url(page))
    publish = can(request.user, PUBLISH, page)
    form = AppendForm(request.POST) if request.method == "POST" else AppendForm()
    if request.method == "POST" and form.is_valid():
        earlier = selectors.own_pending_version(page, request.user)
        token = form.cleaned_data["form_token"]
        try:
            with submit_once(actor=request.user, token=token) as claim:  # type: ignore[arg-type]
                version = version_propose(
                    actor=request.user,  # type: ignore[arg-type]
                    page=page,
                    kind=VersionKind.APPEND,
                    body=form.cleaned_data["body"],
                    change_summary=form.cleaned_data["change_summary"],
                    publish=publish,
                )
                _saved_at(claim, page_url(page))
        except AlreadySubmitted as error:
            return _already_saved(request, error)
        except QuireError as error:
            raise_for(error)
            add_service_error(form, error)
        else:
            if publish:
                messages.success(request, f"Added to “{page.title}” as v{version.number}.")
            elif earlier is not None:
                what = "addition" if earlier.kind == VersionKind.APPEND else "edit"
                messages.success(
                    request,
                    f"Your addition was submitted for review as v{version.number}, together "
                    f"with your earlier {what} v{earlier.number} that was still waiting; a "
                    "reviewer decides both at once.",
                )
            else:
                messages.success(
                    request,
                    f"Your addition was submitted for review as v{version.number}. It will "
                    "appear at the end of the page once a reviewer approves it.",
                )
            return redirect(page_url(page))
    context = tree_context(request, page)
    context.update(form=form, page=page, publish=publish)
    return render(request, "wiki/append_form.html", context)


@login_required
@require_POST
def page_move_propose(request: HttpRequest, public_id: str) -> HttpResponse:
    """Propose moving a page under another parent (empty: the top level): the move screen
    offers it where a direct move would cross a review workflow's border, which the stricter
    of the two workflows then reviews (reviews.workflows.review_workflows)."""
    page = page_or_404(request, public_id)
    chosen = str(request.POST.get("parent", "")).strip()
    try:
        parent = selectors.page_for_person(request.user, chosen, live_only=True) if chosen else None
        version = version_propose(
            actor=request.user,  # type: ignore[arg-type]
            page=page,
            parent=parent,
            change_summary=(
                f"Move under “{parent.title}”." if parent is not None else "Move to the top level."
            ),
        )
    except QuireError as error:
        raise_for(error)
        messages.error(request, sentence(error.message))
        return redirect(reverse("wiki:move", kwargs={"public_id": page.public_id}))
    review = getattr(version, "review", None)
    workflow = f" The “{review.workflow_name}” workflow reviews it." if review is not None else ""
    messages.success(request, f"Proposed moving “{page.title}”.{workflow}")
    return redirect(page_url(page))
