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
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from core.errors import Forbidden, InvalidArgument, NotFound, QuireError
from reviews import asking, selectors, workflows
from reviews.actions.comments import review_comment_add, review_visit
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.revert import page_revert
from reviews.actions.reviewers import reviewer_notifications_set
from reviews.actions.rules import (
    approval_undo_refusal,
    approval_undo_seconds,
    decision_refusal,
    may_comment,
)
from reviews.actions.undo import version_approve_undo
from reviews.batch import undoable_batch
from reviews.checks import proposal_checks
from reviews.classify import CLASSES
from reviews.diff import (
    diff_text,
    diff_words,
    invisible_characters,
    tag_changes,
)
from reviews.forms import (
    ApproveForm,
    CommentForm,
    CompareForm,
    EditApproveForm,
    RejectForm,
    RequestChangesForm,
    RevertForm,
    WorkflowForm,
)
from reviews.merge import appended_body
from reviews.models import NotificationPreference, ReviewStatus, Workflow
from reviews.partial import version_hunks
from reviews.proposal_context import proposal_context
from reviews.queue_rows import queue_rows
from reviews.shown import diffs_shown_record
from wiki import permissions
from wiki.forms import sentence
from wiki.models import Page, Version, VersionKind, VersionStatus
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


def _posted_step(request: HttpRequest, version: Version) -> int | None:
    """The step a decision is given for: the one the review page showed (its form carries
    it), else the one the proposal was at when the request read it."""
    posted = str(request.POST.get("step") or "")
    if posted.isdigit() and 0 < int(posted) < 100:
        return int(posted)
    review = selectors.review_of(version)
    return review.step + 1 if review is not None else None


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
    # A row whose whole change fits in it was shown to the reviewer: a batch may decide it.
    diffs_shown_record(
        viewer=user, versions=[row.version for row in rows if row.shows_whole], where="queue"
    )
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
            "notification_choices": NotificationPreference.choices,
            "notification_preference": selectors.notification_preference(user),
        },
        status=status,
    )


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


def _edit_initial(version: Version, context: dict[str, Any]) -> dict[str, Any]:
    live = context["live"]
    proposed = context["proposed"]
    initial = {
        "title": proposed["title"],
        "tags": ", ".join(proposed["tags"]),
        "body": version.proposed_body if version.kind == VersionKind.APPEND else proposed["body"],
        "expected_live_number": live.number if live else 0,
    }
    merge = context.get("merge")
    if merge is not None:
        fields = merge["fields"]
        initial["body"] = merge["text_with_markers"]
        initial["title"] = fields["title"]
        initial["tags"] = ", ".join(fields["tags"])
    return initial


@login_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    user = _user(request)
    page = _page_or_404(request, page_id)
    version = _version_or_404(request, page, number)
    context = proposal_context(version, person_scope(request.user))
    live = context["live"]
    expected = {"expected_live_number": live.number if live else 0}
    approve_form = ApproveForm(initial=expected)
    edit_form = EditApproveForm(initial=_edit_initial(version, context), auto_id="edit_%s")
    reject_form = RejectForm()
    changes_form = RequestChangesForm()
    comment_form = CommentForm()
    status = 200
    action = request.POST.get("action", "") if request.method == "POST" else ""
    review_now = selectors.review_of(version)
    deciding = action in {"approve", "edit", "reject", "request_changes"} and (
        review_now is None or _posted_step(request, version) == review_now.step + 1
    )
    refusal = decision_refusal(user, version) if deciding else None
    if action == "comment":
        comment_form = CommentForm(request.POST)
        if comment_form.is_valid():
            try:
                review_comment_add(
                    actor=user,
                    version=version,
                    comment=comment_form.cleaned_data["comment"],
                    line=comment_form.cleaned_data["line"],
                )
            except Forbidden as error:
                raise PermissionDenied(sentence(error.message)) from None
            except QuireError as error:
                context["error"] = sentence(error.message)
                status = error.http_status
            else:
                messages.success(request, "Your comment is added to the conversation.")
                return redirect(f"{request.path}#conversation")
        else:
            status = 400
    elif action == "undo" and request.method == "POST":
        try:
            version = version_approve_undo(actor=user, version=version)
        except QuireError as error:
            messages.error(request, sentence(error.message))
        else:
            live_now = version.page.live_version  # the page as the undo left it
            messages.success(
                request,
                f"The approval of v{version.number} of “{version.page.title}” is taken back: it "
                "waits for review again, and readers and agents see "
                f"v{live_now.number if live_now else 0} as before.",
            )
        return redirect(request.path)
    elif refusal is not None and context["in_review"]:
        # Refused before any form is read; a decision for a step the proposal has left is
        # the service's to answer (409, saying it moved on).
        raise PermissionDenied(sentence(refusal))
    elif request.method == "POST":
        try:
            if action == "request_changes":
                changes_form = RequestChangesForm(request.POST)
                if changes_form.is_valid():
                    version_request_changes(
                        actor=user,
                        version=version,
                        step=_posted_step(request, version),
                        comment=changes_form.cleaned_data["comment"],
                    )
                    return _decided(request, version, "sent back to its author for changes")
            elif action == "approve":
                approve_form = ApproveForm(request.POST)
                if approve_form.is_valid():
                    data = approve_form.cleaned_data
                    decided = version_approve(
                        actor=user,
                        version=version,
                        step=_posted_step(request, version),
                        comment=data["comment"],
                        expected_live_number=data["expected_live_number"],
                    )
                    return _decided(request, decided, _approved_verb(decided))
            elif action == "edit":
                edit_form = EditApproveForm(request.POST, auto_id="edit_%s")
                if edit_form.is_valid():
                    data = edit_form.cleaned_data
                    decided = version_approve(
                        actor=user,
                        version=version,
                        step=_posted_step(request, version),
                        comment=data["comment"],
                        edited_body=data["body"],
                        edited_title=data["title"],
                        edited_tags=edit_form.tag_list(),
                        expected_live_number=data["expected_live_number"],
                    )
                    return _decided(request, decided, f"edited and {_approved_verb(decided)}")
            elif action == "reject":
                reject_form = RejectForm(request.POST)
                if reject_form.is_valid():
                    version_reject(
                        actor=user,
                        version=version,
                        step=_posted_step(request, version),
                        comment=reject_form.cleaned_data["comment"],
                    )
                    return _decided(request, version, "rejected")
            else:
                context["error"] = "Choose approve, edit then approve, request changes, or reject."
            status = 400
        except Forbidden as error:
            raise PermissionDenied(sentence(error.message)) from None
        except QuireError as error:
            context["error"] = sentence(error.message)
            status = error.http_status
            # Show the page as it is now: the decision or the live version may have moved.
            version = _version_or_404(request, _page_or_404(request, page_id), number)
            context.update(proposal_context(version, person_scope(request.user)))
            live = context["live"]
            approve_form = ApproveForm(initial={"expected_live_number": live.number if live else 0})
    refusal = decision_refusal(user, version)  # the version may have been reloaded
    path = selectors.review_path(version, viewer=user)
    looks = can_review(user) or refusal is None
    since = review_visit(actor=user, version=version) if looks else None
    if looks and context["in_review"]:
        diffs_shown_record(viewer=user, versions=[version], where="page")
    context.update(
        {
            "path": path,
            "changes_requested": path is not None
            and context["in_review"]
            and path.review.status == ReviewStatus.CHANGES_REQUESTED,
            "may_comment": context["in_review"] and may_comment(user, version),
            "since": since,
            "since_diff": diff_text(_as_seen(since), context["proposed"]["body"])
            if since is not None
            else None,
            "changes_form": changes_form,
            "comment_form": comment_form,
            "open_changes": action == "request_changes",
            "can_decide": context["in_review"] and refusal is None,
            "hunks": version_hunks(version) if context["in_review"] and refusal is None else [],
            "refused": {},
            "refused_hunks": selectors.refused_hunks(version),
            "checks": proposal_checks(version, reader=lambda: person_scope(user))
            if context["in_review"]
            else [],
            "decision_step": path.review.step + 1
            if path is not None and context["in_review"]
            else None,
            "can_undo": version.status == VersionStatus.APPROVED
            and approval_undo_refusal(user, version) is None,
            "undo_seconds": approval_undo_seconds(),
            "decision_refusal": sentence(refusal) if refusal else "",
            "asks": list(path.review.asks.select_related("person", "asked_by"))
            if path is not None
            else [],
            "askable": asking.askable(user, path.review, version)
            if path is not None and context["in_review"]
            else [],
            "next_version": (selectors.next_waiting(user, besides=version) if looks else None),
            "crumbs": [
                *_page_crumbs(page, ("Reviews", reverse("reviews:queue"))),
                (f"v{version.number}", ""),
            ],
            "tree": page_tree(page, reader=person_scope(request.user)),
            "approve_form": approve_form,
            "edit_form": edit_form,
            "reject_form": reject_form,
            "open_editor": request.method == "POST" and request.POST.get("action") == "edit",
            "open_reject": request.method == "POST" and request.POST.get("action") == "reject",
        }
    )
    return render(request, "reviews/review.html", context, status=status)


def _as_seen(version: Version) -> str:
    """The text a reviewer read on an earlier revision (an addition: on today's live page)."""
    if version.kind == VersionKind.APPEND and version.status != VersionStatus.APPROVED:
        live = version.page.live_version
        return appended_body(live.body if live else "", version.proposed_body)
    return version.body


def _approved_verb(version: Version) -> str:
    """ "approved", or where an approval that does not publish yet left the proposal."""
    if version.status == VersionStatus.APPROVED:
        return "approved"
    review = selectors.review_of(version)
    if review is None:
        return "approved"
    step = review.current_step
    return (
        f"approved; it waits on step {review.step + 1} of {len(review.steps)} "
        f"({step['name']}, {step['group']})"
    )


def _page_crumbs(page: Page, *first: tuple[str, str]) -> list[tuple[str, str]]:
    """The same trail as the page view's: the page (when it can be opened) and its history."""
    crumbs = [("Pages", reverse("wiki:home")), *first]
    if page.live_version_id is not None and not page.archived:
        crumbs.append((page.title, reverse("wiki:page", kwargs={"public_id": page.public_id})))
    else:
        crumbs.append((page.title, ""))
    crumbs.append(("History", reverse("reviews:history", kwargs={"page_id": page.public_id})))
    return crumbs


def _decided(request: HttpRequest, version: Version, verb: str) -> HttpResponse:
    """After a decision the reviewer goes on: back to the queue they decided from, else to the
    next proposal waiting, else to the queue."""
    published = version.merged_into
    went_live = (
        f" It went live as v{published.number}, together with the changes published since it "
        "was written."
        if published is not None
        else ""
    )
    if verb == "approved" and version.status == VersionStatus.APPROVED:
        # A short undo: the approved version's page holds the button while it is allowed.
        undo = reverse("reviews:review", args=[version.page.public_id, version.number])
        messages.success(
            request,
            format_html(
                'v{} of “{}” {}.{} <a href="{}#undo">Undo</a> (for {} seconds)',
                version.number,
                version.page.title,
                verb,
                went_live,
                undo,
                approval_undo_seconds(),
            ),
        )
    else:
        messages.success(request, f"v{version.number} of “{version.page.title}” {verb}.{went_live}")
    return_to = str(request.POST.get("return_to", ""))
    if return_to.startswith("/reviews/") and url_has_allowed_host_and_scheme(
        return_to, allowed_hosts={request.get_host()}
    ):
        return redirect(return_to)
    following = selectors.next_waiting(_user(request), besides=version)
    if following is None:
        messages.info(request, "Nothing else is waiting for you.")
        return redirect("reviews:queue")
    return redirect("reviews:review", page_id=following.page.public_id, number=following.number)


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
            "crumbs": [*_page_crumbs(page)[:-1], ("History", "")],
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
            "crumbs": [*_page_crumbs(page), (f"v{number_a} and v{number_b}", "")],
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
