"""Review screens: the queue, a proposal's review page with its decisions, history, compare."""

from __future__ import annotations

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
from django.views.decorators.http import require_http_methods

from core.errors import Forbidden, InvalidArgument, NotFound, QuireError
from reviews import asking, selectors, workflows
from reviews.actions.revert import page_revert
from reviews.actions.reviewers import reviewer_notifications_set
from reviews.batch import undoable_batch
from reviews.classify import CLASSES
from reviews.diff import (
    diff_text,
    diff_words,
    invisible_characters,
    tag_changes,
)
from reviews.forms import (
    CompareForm,
    RevertForm,
    WorkflowForm,
)
from reviews.models import NotificationPreference, Workflow
from reviews.queue_rows import queue_rows
from reviews.review_page import page_crumbs
from reviews.shown import queue_shown_record, queue_shown_values
from wiki import permissions
from wiki.forms import sentence
from wiki.models import Page, Version
from wiki.roles import REVIEWERS, can_publish, can_review
from wiki.scope import person_scope
from wiki.selectors import page_for_person, page_tree

QUEUE_PAGE_SIZE = 100


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


def _page_or_404(request: HttpRequest, page_id: str) -> Page:
    try:
        return page_for_person(request.user, page_id)
    except NotFound as error:
        raise Http404(error.message) from None


def _version_or_404(request: HttpRequest, page: Page, number: int) -> Version:
    try:
        return selectors.version_of(page, number, reader=request.user)
    except NotFound as error:
        raise Http404(error.message) from None


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    user = _user(request)
    try:
        selectors.check_can_see_queue(user)
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    status = 200
    try:
        filters = selectors.QueueFilters.from_params(request.GET)
    except InvalidArgument as error:
        messages.error(request, f"{sentence(error.message)} The filter was left out.")
        filters, status = selectors.QueueFilters(), 400
    paginator = Paginator(selectors.review_queue(filters, for_user=user), QUEUE_PAGE_SIZE)
    waiting_workflows = selectors.workflows_with_proposals()
    page_of_versions = paginator.get_page(request.GET.get("p"))
    rows = queue_rows(list(page_of_versions.object_list), user)
    query = request.GET.copy()
    query.pop("p", None)
    return render(
        request,
        "reviews/queue.html",
        {
            "crumbs": [("Reviews", "")],
            "rows": rows,
            "return_to": request.get_full_path(),
            "paginator": paginator,
            "page_obj": page_of_versions,
            "filters": filters,
            "filter_query": query.urlencode(),
            "agents": selectors.agents_with_proposals(),
            "workflows": waiting_workflows,
            "step_numbers": range(1, max((steps for _, steps in waiting_workflows), default=1) + 1),
            "recent_decisions": selectors.recent_decisions(user),
            "last_batch": undoable_batch(user),
            "change_classes": [(name, *about) for name, about in CLASSES.items()],
            "batchable": any(row.waits_on_you for row in rows),
            # The rows shown whole, for the "seen" POST the page sends and the batch form
            # (a batch may decide them): the GET itself writes nothing.
            "queue_shown": queue_shown_values(
                user, [row.version for row in rows if row.shows_whole]
            ),
            "notification_choices": NotificationPreference.choices,
            "notification_preference": selectors.notification_preference(user),
        },
        status=status,
    )


@login_required
@require_http_methods(["POST"])
def queue_seen(request: HttpRequest) -> HttpResponse:
    """Sent by the queue once its rows are shown (static/quire/reviews.js): the reviewer was
    shown whole each row the queue rendered a digest for (reviews.shown), so a batch may
    decide it; a digest that no longer names the proposal as it stands records nothing."""
    queue_shown_record(_user(request), request.POST.getlist("shown"), limit=QUEUE_PAGE_SIZE)
    return HttpResponse(status=204)


@login_required
@require_http_methods(["POST"])
def notification_settings(request: HttpRequest) -> HttpResponse:
    try:
        reviewer_notifications_set(
            actor=_user(request), preference=str(request.POST.get("notifications", ""))
        )
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, "Your review email preference is saved.")
    return redirect("reviews:queue")


@login_required
@require_http_methods(["GET", "POST"])
def history(request: HttpRequest, page_id: str) -> HttpResponse:
    user = _user(request)
    page = _page_or_404(request, page_id)
    status = 200
    error = ""
    if request.method == "POST":
        form = RevertForm(request.POST)
        if form.is_valid():
            try:
                target = selectors.version_of(page, form.cleaned_data["to_number"], reader=user)
                reverted = page_revert(
                    actor=user, page=page, to_version=target, comment=form.cleaned_data["comment"]
                )
            except QuireError as failure:
                error = sentence(failure.message)
                status = failure.http_status
            else:
                messages.success(
                    request,
                    f"Reverted to v{target.number}; it is live again as v{reverted.number}.",
                )
                return redirect("reviews:history", page_id=page.public_id)
        else:
            comment_errors = form.errors.get("comment")
            error = (
                f"Comment: {comment_errors[0]}"
                if comment_errors
                else "Choose the version to revert to."
            )
            status = 400
        page = _page_or_404(request, page_id)
    versions = selectors.page_versions(page, reader=user)
    return render(
        request,
        "reviews/history.html",
        {
            "crumbs": [*page_crumbs(page)[:-1], ("History", "")],
            "tree": page_tree(page, reader=person_scope(request.user)),
            "page": page,
            "versions": versions,
            "can_revert": can_publish(user) or can_review(user),
            "error": error,
            "default_a": versions[1].number if len(versions) > 1 else 1,
            "default_b": versions[0].number if versions else 1,
        },
        status=status,
    )


@login_required
def compare(request: HttpRequest, page_id: str) -> HttpResponse:
    page = _page_or_404(request, page_id)
    form = CompareForm(request.GET)
    if not form.is_valid():
        messages.error(request, "Choose two versions to compare.")
        return redirect("reviews:history", page_id=page.public_id)
    number_a, number_b = form.numbers()
    version_a = _version_or_404(request, page, number_a)
    version_b = _version_or_404(request, page, number_b)
    old, new = selectors.proposed_content(version_a), selectors.proposed_content(version_b)
    removed, added, kept = tag_changes(old["tags"], new["tags"])
    return render(
        request,
        "reviews/compare.html",
        {
            "crumbs": [*page_crumbs(page), (f"v{number_a} and v{number_b}", "")],
            "tree": page_tree(page, reader=person_scope(request.user)),
            "page": page,
            "a": version_a,
            "b": version_b,
            "versions": selectors.page_versions(page, reader=request.user),
            "diff": diff_text(old["body"], new["body"]),
            "title_changed": old["title"] != new["title"],
            "title_diff": diff_words(old["title"], new["title"]),
            "tags_removed": removed,
            "tags_added": added,
            "tags_kept": kept,
            "invisible": invisible_characters(new["body"], new["title"], *new["tags"]),
            "history_url": reverse("reviews:history", kwargs={"page_id": page.public_id}),
            "label_a": f"v{version_a.number}",
            "label_b": f"v{version_b.number}",
        },
    )


# --- review workflows (admins) --------------------------------------------------------------


def _admin(request: HttpRequest) -> User:
    user = _user(request)
    if not permissions.is_admin(user):
        raise PermissionDenied("Only admins define and assign review workflows.")
    return user


def _workflow_or_404(workflow_id: int) -> Workflow:
    try:
        return workflows.workflow_by_id(workflow_id)
    except NotFound as error:
        raise Http404(error.message) from None


def _workflow_screen(
    request: HttpRequest,
    *,
    workflow: Workflow | None,
    form: WorkflowForm,
    error: str = "",
    status: int = 200,
    replacing: dict[str, Any] | None = None,
) -> HttpResponse:
    steps = workflows.steps_of(workflow) if workflow is not None else []
    if request.method == "POST" and replacing is None:
        steps = form.steps()
    rows = [*steps, *[{"name": "", "group": "", "approvals": 1}] * 2][: workflows.STEPS_MAX]
    if not steps:
        rows = [{"name": "Review", "group": REVIEWERS, "approvals": 1}, *rows][:3]
    return render(
        request,
        "reviews/workflows.html",
        {
            "crumbs": [("Reviews", reverse("reviews:queue")), ("Workflows", "")],
            "workflows": workflows.workflows(),
            "workflow": workflow,
            "form": form,
            "rows": rows,
            "groups": selectors.group_names(),
            "default_due_hours": settings.QUIRE_REVIEW_DUE_HOURS,
            "error": error or " ".join(str(message) for message in form.non_field_errors()),
            "replacing": replacing,
            "change_classes": [(name, *about) for name, about in CLASSES.items()],
            "never_in_batch": request.POST.getlist("never_in_batch")
            if request.method == "POST"
            else (workflow.never_in_batch if workflow is not None else []),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def workflow_list(request: HttpRequest) -> HttpResponse:
    """Every workflow with its steps and pages, and the form that defines a new one."""
    user = _admin(request)
    form = WorkflowForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            created = workflows.workflow_create(
                actor=user,
                name=form.cleaned_data["name"],
                steps=form.steps(),
                never_in_batch=request.POST.getlist("never_in_batch"),
            )
        except QuireError as error:
            return _workflow_screen(
                request,
                workflow=None,
                form=form,
                error=sentence(error.message),
                status=error.http_status,
            )
        messages.success(request, f"Workflow “{created.name}” saved. Assign it to a page below.")
        return redirect("reviews:workflow", workflow_id=created.pk)
    return _workflow_screen(
        request, workflow=None, form=form, status=400 if request.method == "POST" else 200
    )


@login_required
@require_http_methods(["GET", "POST"])
def workflow_detail(request: HttpRequest, workflow_id: int) -> HttpResponse:
    """One workflow: its steps to change, the pages it applies to, assign and unassign."""
    user = _admin(request)
    workflow = _workflow_or_404(workflow_id)
    form = WorkflowForm(request.POST or None, initial={"name": workflow.name})
    if request.method == "POST" and form.is_valid():
        try:
            workflows.workflow_update(
                actor=user,
                workflow=workflow,
                name=form.cleaned_data["name"],
                steps=form.steps(),
                never_in_batch=request.POST.getlist("never_in_batch"),
            )
        except QuireError as error:
            return _workflow_screen(
                request,
                workflow=workflow,
                form=form,
                error=sentence(error.message),
                status=error.http_status,
            )
        messages.success(
            request,
            "Workflow saved. Proposals already in review keep the steps they started with.",
        )
        return redirect("reviews:workflow", workflow_id=workflow.pk)
    return _workflow_screen(
        request, workflow=workflow, form=form, status=400 if request.method == "POST" else 200
    )


@login_required
@require_http_methods(["POST"])
def workflow_pages(request: HttpRequest, workflow_id: int) -> HttpResponse:
    """Assign (`page`) or unassign (`remove`) the workflow on a page and its subtree."""
    user = _admin(request)
    workflow = _workflow_or_404(workflow_id)
    removing = str(request.POST.get("remove", ""))
    public_id = removing or str(request.POST.get("page", ""))
    try:
        if not public_id:
            raise InvalidArgument(
                "choose a page: type part of its title or path and pick it from the list."
            )
        page = page_for_person(user, public_id)
        if removing:
            workflows.workflow_unassign(actor=user, workflow=workflow, page=page)
            messages.success(request, f"“{workflow.name}” no longer applies to {page.path}.")
        else:
            replace = request.POST.get("replace") == "1"
            workflows.workflow_assign(actor=user, workflow=workflow, page=page, replace=replace)
            messages.success(
                request, f"“{workflow.name}” now applies to {page.path} and every page under it."
            )
    except workflows.ReplaceUnconfirmed as error:
        # Ask first, naming the workflow it would replace; the admin confirms or not.
        return _workflow_screen(
            request,
            workflow=workflow,
            form=WorkflowForm(rows=3),
            replacing={"page": page, "sentence": sentence(error.message)},
            status=409,
        )
    except QuireError as error:
        messages.error(request, sentence(error.message))
    return redirect("reviews:workflow", workflow_id=workflow.pk)


@login_required
@require_http_methods(["POST"])
def workflow_remove(request: HttpRequest, workflow_id: int) -> HttpResponse:
    user = _admin(request)
    workflow = _workflow_or_404(workflow_id)
    workflows.workflow_delete(actor=user, workflow=workflow)
    messages.success(
        request,
        f"Workflow “{workflow.name}” deleted. Its pages fall back to the workflow above them; "
        "proposals in review keep their steps.",
    )
    return redirect("reviews:workflows")


@login_required
@require_http_methods(["POST"])
def review_ask(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    """Ask one person by name to review this proposal (reviews.asking)."""
    user = _user(request)
    page = _page_or_404(request, page_id)
    version = _version_or_404(request, page, number)
    person = selectors.active_person(str(request.POST.get("person", "")))
    try:
        if person is None:
            raise InvalidArgument("choose a person who decides this step.", field="person")
        asking.review_ask(actor=user, version=version, person=person)
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        messages.success(request, f"Asked {person.get_username()} to review it.")
    return redirect(reverse("reviews:review", args=[page.public_id, version.number]) + "#asked")
