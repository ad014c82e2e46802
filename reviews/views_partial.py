"""The review page's "Approve part of it": choose the changes to refuse, see the result
rendered, then confirm (reviews.partial)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe

from core.errors import Conflict, Forbidden, NotFound, QuireError
from reviews import selectors
from reviews.actions.rules import decision_refusal
from reviews.diff import diff_text, show_html
from reviews.partial import partial_plan, version_approve_partial
from reviews.shown import shown_confirm
from wiki.forms import sentence
from wiki.markdown import render_page_body
from wiki.models import Version
from wiki.scope import person_scope
from wiki.selectors import page_for_person


def _refused(request: HttpRequest) -> dict[int, str]:
    """The ticked changes and their reasons, as posted."""
    numbers = {int(n) for n in request.POST.getlist("refuse") if n.isdigit() and len(n) < 5}
    return {n: str(request.POST.get(f"reason_{n}", "")).strip() for n in sorted(numbers)}


def _step(request: HttpRequest) -> int | None:
    posted = str(request.POST.get("step") or "")
    return int(posted) if posted.isdigit() and 0 < int(posted) < 100 else None


def _version(request: HttpRequest, page_id: str, number: int) -> Version:
    try:
        page = page_for_person(request.user, page_id)
        return selectors.version_of(page, number, reader=request.user)
    except NotFound as error:
        raise Http404(error.message) from None


def _approved_without(decided: Version, refused: dict[int, str]) -> str:
    return (
        f"v{decided.number} of “{decided.page.title}” approved without "
        f"{len(refused)} refused change{'' if len(refused) == 1 else 's'}; its author "
        "is told which and why."
    )


@login_required
def partial_approve(request: HttpRequest, page_id: str, number: int) -> HttpResponse:
    """POST: without `confirm`, the preview of what keeping the unticked changes makes;
    with it, the approval of exactly that."""
    if request.method != "POST":
        return redirect("reviews:review", page_id=page_id, number=number)
    user = request.user
    assert isinstance(user, User)
    version = _version(request, page_id, number)
    refusal = decision_refusal(user, version)
    if refusal is not None:
        raise PermissionDenied(sentence(refusal))
    refused = _refused(request)
    expected = str(request.POST.get("expected_live_number") or "")
    live = version.page.live_version
    comment = str(request.POST.get("comment", ""))
    shown = request.POST.get("shown")
    try:
        if not expected.isdigit() or live is None or int(expected) != live.number:
            raise Conflict(
                "the live version changed while you chose; open the proposal again and "
                "choose the changes to refuse against what is live now."
            )
        shown_confirm(user, version, str(shown) if shown is not None else None)
        plan = partial_plan(version, refused)
        if request.POST.get("confirm"):
            decided = version_approve_partial(
                actor=user,
                version=version,
                refused=refused,
                expected_live_number=int(expected),
                comment=comment,
                step=_step(request),
            )
            messages.success(request, _approved_without(decided, refused))
            return redirect("reviews:review", page_id=page_id, number=number)
    except Forbidden as error:
        raise PermissionDenied(sentence(error.message)) from None
    except QuireError as error:
        messages.error(request, sentence(error.message))
        return redirect("reviews:review", page_id=page_id, number=number)
    rendered = render_page_body(plan.kept, version.title, reader=person_scope(user))
    return render(
        request,
        "reviews/partial.html",
        {
            "crumbs": [("Reviews", "/reviews/"), (f"v{version.number}", "")],
            "page": version.page,
            "version": version,
            "plan": plan,
            "hunks": plan.hunks,
            "refused": plan.refused,
            "diff": diff_text(plan.before, plan.kept),
            "rendered": mark_safe(show_html(rendered)),
            "expected_live_number": expected,
            "decision_step": _step(request),
            "comment": comment,
            "shown": shown or "",
        },
    )
