"""The queue's batch door: decide the ticked proposals in one action, or take the action back."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from core.errors import NotFound, QuireError
from reviews import batch as batches
from reviews import selectors
from reviews.actions.rules import approval_undo_seconds
from reviews.models import BatchDecision, DecisionBatch
from reviews.shown import queue_shown_record
from reviews.views import QUEUE_PAGE_SIZE
from wiki.forms import sentence
from wiki.selectors import page_for_person


def _back(request: HttpRequest) -> HttpResponse:
    return_to = str(request.POST.get("return_to", ""))
    if return_to.startswith("/reviews/") and url_has_allowed_host_and_scheme(
        return_to, allowed_hosts={request.get_host()}
    ):
        return redirect(return_to)
    return redirect("reviews:queue")


def _items(user: User, ticked: list[str]) -> list[batches.BatchItem]:
    """Each ticked row ("<page id>:<number>:<step>") as the reviewer may read it."""
    items = []
    for value in ticked:
        page_id, _, rest = value.partition(":")
        number, _, step = rest.partition(":")
        if not number.isdigit() or (step and not step.isdigit()):
            raise NotFound("a ticked proposal is not one the queue showed; reload the queue.")
        page = page_for_person(user, page_id)
        version = selectors.version_of(page, int(number), reader=user)
        items.append(batches.BatchItem(version, int(step) if step else None))
    return items


def _refused_html(error: batches.BatchRefused, *, what: str = "decided") -> str:
    return format_html(
        "Nothing was {}: {} of the proposals could not be. <ul>{}</ul>"
        "Untick them, or open them and decide them on their own.",
        what,
        len(error.refused),
        format_html_join(
            "",
            "<li>{} v{}: {}</li>",
            ((r.version.page.title, r.version.number, sentence(r.reason)) for r in error.refused),
        ),
    )


@login_required
@require_http_methods(["POST"])
def queue_decide(request: HttpRequest) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)
    decision = str(request.POST.get("decision", ""))
    # The rows the queue showed whole travel with the form too: a batch sent before the
    # page's "seen" POST arrived (or without scripts) still counts them as shown.
    queue_shown_record(user, request.POST.getlist("shown"), limit=QUEUE_PAGE_SIZE)
    try:
        batch = batches.versions_decide_batch(
            actor=user,
            items=_items(user, request.POST.getlist("item")),
            decision=decision,
            comment=str(request.POST.get("comment", "")),
        )
    except batches.BatchRefused as error:
        messages.error(request, _refused_html(error))
        return _back(request)
    except QuireError as error:
        messages.error(request, f"Nothing was decided: {sentence(error.message)}")
        return _back(request)
    count = batch.items.count()
    if batch.decision == BatchDecision.APPROVE:
        messages.success(
            request,
            format_html(
                '{} proposal{} approved in one action. <a href="{}#batch-undo">Undo all</a> '
                "(for {} seconds)",
                count,
                "" if count == 1 else "s",
                reverse("reviews:queue") + "#batch-undo",
                approval_undo_seconds(),
            ),
        )
    else:
        messages.success(request, f"{count} proposal{'' if count == 1 else 's'} rejected.")
    return _back(request)


@login_required
@require_http_methods(["POST"])
def queue_decide_undo(request: HttpRequest, batch_id: int) -> HttpResponse:
    user = request.user
    assert isinstance(user, User)
    try:
        batch: DecisionBatch = batches.versions_decide_batch_undo(
            actor=user, batch=batches.batch_of(user, batch_id)
        )
    except batches.BatchRefused as error:
        messages.error(request, _refused_html(error, what="taken back"))
    except QuireError as error:
        messages.error(request, sentence(error.message))
    else:
        count = batch.items.count()
        messages.success(
            request,
            f"The batch is taken back: {count} proposal{'' if count == 1 else 's'} wait for "
            "review again, and their pages show what they showed before.",
        )
    return _back(request)
