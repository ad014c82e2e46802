"""The review page: the GET that shows a proposal (it reads only), one short POST per
decision (approve, edit then approve, request changes, reject), the conversation's comment,
the undo of an approval, and the "seen" POST the page sends once it is shown (presence, "what
changed since you last looked", and what a batch counts as shown: reviews.shown)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from core.errors import Forbidden, NotFound, QuireError
from reviews import asking, selectors
from reviews.actions.comments import review_comment_add, review_visit
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.rules import (
    approval_undo_refusal,
    approval_undo_seconds,
    decision_refusal,
    may_comment,
)
from reviews.actions.undo import version_approve_undo
from reviews.checks import proposal_checks
from reviews.diff import diff_text
from reviews.forms import ApproveForm, CommentForm, EditApproveForm, RejectForm, RequestChangesForm
from reviews.models import ReviewStatus
from reviews.partial import version_hunks
from reviews.proposal_context import proposal_context
from reviews.review_page import (
    approved_verb,
    as_seen,
    edit_initial,
    page_crumbs,
)
from reviews.shown import page_shown_record, shown_confirm, shown_token
from wiki.forms import sentence
from wiki.models import Version, VersionStatus
from wiki.roles import can_review
from wiki.scope import person_scope
from wiki.selectors import page_for_person, page_tree

# A decision: its form's name on the page, the form, and what deciding does with it
# (returns the version decided and the verb the message says).
Decide = Callable[[User, Version, Any, int | None], tuple[Version, str]]


def _user(request: HttpRequest) -> User:
    user = request.user
    assert isinstance(user, User)
    return user


def _version(request: HttpRequest, page_id: str, number: int) -> Version:
    try:
        page = page_for_person(request.user, page_id)
        return selectors.version_of(page, number, reader=request.user)
    except NotFound as error:
        raise Http404(error.message) from None


def _review_url(version: Version) -> str:
    return reverse("reviews:review", args=[version.page.public_id, version.number])


def _posted_step(request: HttpRequest, version: Version) -> int | None:
    """The step a decision is given for: the one the review page showed (its form carries
    it), else the one the proposal was at when the request read it."""
    posted = str(request.POST.get("step") or "")
    if posted.isdigit() and 0 < int(posted) < 100:
        return int(posted)
    review = selectors.review_of(version)
    return review.step + 1 if review is not None else None


def _looks(user: User, version: Version) -> bool:
    """Whether `user` looks at this proposal as a reviewer (presence, "since", next)."""
    return can_review(user) or decision_refusal(user, version) is None


# --- the page (GET, and the same page again after a refused POST) -----------------------------


@login_required
@require_http_methods(["GET", "POST"])
def review(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    """GET: the proposal and its decisions; it writes nothing. POST: the form target the page
    had before each decision had its own URL, passed on to that decision's view."""
    version = _version(request, page_id, number)
    if request.method == "POST":
        view = POSTED.get(str(request.POST.get("action", "")))
        if view is None:
            error = "Choose approve, edit then approve, request changes, or reject."
            return _screen(request, version, error=error, status=400)
        return view(request, page_id, number)
    return _screen(request, version)


def _screen(
    request: HttpRequest,
    version: Version,
    *,
    bound: Mapping[str, forms.Form] | None = None,
    error: str = "",
    status: int = 200,
    opened: str = "",
) -> HttpResponse:
    """The review page: `bound` forms keep what was posted, `opened` names the decision whose
    form opens, `error` says why a POST was refused."""
    user = _user(request)
    context = proposal_context(version, person_scope(user))
    context.update(_forms(version, context, bound or {}))
    context.update(_deciding(user, version, context))
    context.update(
        {
            "error": error,
            "open_changes": opened == "request_changes",
            "open_editor": opened == "edit",
            "open_reject": opened == "reject",
            "crumbs": [
                *page_crumbs(version.page, ("Reviews", reverse("reviews:queue"))),
                (f"v{version.number}", ""),
            ],
            "tree": page_tree(version.page, reader=person_scope(user)),
        }
    )
    return render(request, "reviews/review.html", context, status=status)


def _forms(version: Version, context: dict[str, Any], bound: Mapping[str, Any]) -> dict[str, Any]:
    live = context["live"]
    return {
        "approve_form": ApproveForm(initial={"expected_live_number": live.number if live else 0}),
        "edit_form": EditApproveForm(initial=edit_initial(version, context), auto_id="edit_%s"),
        "reject_form": RejectForm(),
        "changes_form": RequestChangesForm(),
        "comment_form": CommentForm(),
        **bound,
    }


def _deciding(user: User, version: Version, context: dict[str, Any]) -> dict[str, Any]:
    """Who may do what on the page, the review's path and conversation, reads only."""
    in_review = context["in_review"]
    refusal = decision_refusal(user, version)
    path = selectors.review_path(version, viewer=user)
    looks = can_review(user) or refusal is None
    since = selectors.last_seen(version, user) if looks else None
    review = path.review if path is not None else None
    return {
        "path": path,
        "changes_requested": in_review
        and review is not None
        and review.status == ReviewStatus.CHANGES_REQUESTED,
        "may_comment": in_review and may_comment(user, version),
        "since": since,
        "since_diff": diff_text(as_seen(since), context["proposed"]["body"]) if since else None,
        "can_decide": in_review and refusal is None,
        "hunks": version_hunks(version) if in_review and refusal is None else [],
        "refused": {},
        "refused_hunks": selectors.refused_hunks(version),
        "checks": proposal_checks(version, reader=lambda: person_scope(user)) if in_review else [],
        "decision_step": review.step + 1 if in_review and review is not None else None,
        "can_undo": version.status == VersionStatus.APPROVED
        and approval_undo_refusal(user, version) is None,
        "undo_seconds": approval_undo_seconds(),
        "decision_refusal": sentence(refusal) if refusal else "",
        "asks": list(review.asks.select_related("person", "asked_by"))
        if review is not None
        else [],
        "askable": asking.askable(user, review, version)
        if in_review and review is not None
        else [],
        "next_version": selectors.next_waiting(user, besides=version) if looks else None,
        # What this page shows, for its decision forms and its "seen" POST (reviews.shown).
        "looks": looks,
        "shown_token": shown_token(user, version, context["live"]) if looks else "",
    }


# --- one POST per decision ---------------------------------------------------------------


def _decision(
    request: HttpRequest, page_id: str, number: int, name: str, form: forms.Form, decide: Decide
) -> HttpResponse:
    """What every decision does: refuse one this person may not take before reading its form,
    check that the page showed the proposal as it stands, decide, then go on; a refusal shows
    the page again as it is now, with the form as posted."""
    user = _user(request)
    version = _version(request, page_id, number)
    review_now = selectors.review_of(version)
    step = _posted_step(request, version)
    if version.status == VersionStatus.IN_REVIEW and (
        review_now is None or step == review_now.step + 1
    ):
        # Refused before any form is read; a decision for a step the proposal has left is
        # the service's to answer (409, saying it moved on).
        refusal = decision_refusal(user, version)
        if refusal is not None:
            raise PermissionDenied(sentence(refusal))
    if not form.is_valid():
        return _screen(request, version, bound={_FORM_NAMES[name]: form}, status=400, opened=name)
    # A refused approval shows a fresh approve form, against the live version as it is now.
    bound = {} if name == "approve" else {_FORM_NAMES[name]: form}
    try:
        posted = request.POST.get("shown")
        if version.status == VersionStatus.IN_REVIEW:  # else the service says what it became
            shown_confirm(user, version, str(posted) if posted is not None else None)
        decided, verb = decide(user, version, form.cleaned_data, step)
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    except QuireError as error:
        # Show the page as it is now: the decision or the live version may have moved.
        now = _version(request, page_id, number)
        error_text, status = sentence(error.message), error.http_status
        return _screen(request, now, bound=bound, error=error_text, status=status, opened=name)
    return _decided(request, decided, verb)


_FORM_NAMES = {
    "approve": "approve_form",
    "edit": "edit_form",
    "reject": "reject_form",
    "request_changes": "changes_form",
}


@login_required
@require_POST
def review_approve(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    def decide(user: User, version: Version, data: Any, step: int | None) -> tuple[Version, str]:
        decided = version_approve(
            actor=user,
            version=version,
            step=step,
            comment=data["comment"],
            expected_live_number=data["expected_live_number"],
        )
        return decided, approved_verb(decided)

    return _decision(request, page_id, number, "approve", ApproveForm(request.POST), decide)


@login_required
@require_POST
def review_edit_approve(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    form = EditApproveForm(request.POST, auto_id="edit_%s")

    def decide(user: User, version: Version, data: Any, step: int | None) -> tuple[Version, str]:
        decided = version_approve(
            actor=user,
            version=version,
            step=step,
            comment=data["comment"],
            edited_body=data["body"],
            edited_title=data["title"],
            edited_tags=form.tag_list(),
            expected_live_number=data["expected_live_number"],
        )
        return decided, f"edited and {approved_verb(decided)}"

    return _decision(request, page_id, number, "edit", form, decide)


@login_required
@require_POST
def review_request_changes(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    def decide(user: User, version: Version, data: Any, step: int | None) -> tuple[Version, str]:
        version_request_changes(actor=user, version=version, step=step, comment=data["comment"])
        return version, "sent back to its author for changes"

    form = RequestChangesForm(request.POST)
    return _decision(request, page_id, number, "request_changes", form, decide)


@login_required
@require_POST
def review_reject(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    def decide(user: User, version: Version, data: Any, step: int | None) -> tuple[Version, str]:
        version_reject(actor=user, version=version, step=step, comment=data["comment"])
        return version, "rejected"

    return _decision(request, page_id, number, "reject", RejectForm(request.POST), decide)


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
        messages.success(
            request,
            format_html(
                'v{} of “{}” {}.{} <a href="{}#undo">Undo</a> (for {} seconds)',
                version.number,
                version.page.title,
                verb,
                went_live,
                _review_url(version),
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


# --- the conversation, the undo, the page's "seen" -------------------------------------------


@login_required
@require_POST
def review_comment(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    user = _user(request)
    version = _version(request, page_id, number)
    form = CommentForm(request.POST)
    if not form.is_valid():
        return _screen(request, version, bound={"comment_form": form}, status=400)
    try:
        review_comment_add(
            actor=user,
            version=version,
            comment=form.cleaned_data["comment"],
            line=form.cleaned_data["line"],
        )
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    except QuireError as error:
        bound = {"comment_form": form}
        return _screen(
            request, version, bound=bound, error=sentence(error.message), status=error.http_status
        )
    messages.success(request, "Your comment is added to the conversation.")
    return redirect(_review_url(version) + "#conversation")


@login_required
@require_POST
def review_undo(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    version = _version(request, page_id, number)
    try:
        version = version_approve_undo(actor=_user(request), version=version)
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
    return redirect(_review_url(version))


@login_required
@require_POST
def review_seen(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    """Sent by the review page once it is shown (static/quire/reviews.js): this reviewer is
    looking at this revision now (presence, "what changed since you last looked"), and, when
    the page's digest is still current, was shown its whole change (reviews.shown)."""
    user = _user(request)
    version = _version(request, page_id, number)
    if _looks(user, version):
        review_visit(actor=user, version=version)
        if version.status == VersionStatus.IN_REVIEW:
            page_shown_record(user, version, str(request.POST.get("shown", "")))
    return HttpResponse(status=204)


# The review page's own URL still takes the decisions its forms posted there, by `action`.
POSTED: dict[str, Callable[[HttpRequest, str, int], HttpResponse]] = {
    "approve": review_approve,
    "edit": review_edit_approve,
    "request_changes": review_request_changes,
    "reject": review_reject,
    "comment": review_comment,
    "undo": review_undo,
}
