"""The inbox screen: what waits on me, what was decided about mine, requested changes; and
how each kind reaches me. Opening an item is a POST: it marks the item read."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from core.errors import NotFound, QuireError
from inbox import selectors, services
from inbox.models import Channel, Kind


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "inbox/inbox.html",
        {
            "items": selectors.items(request.user),
            "channels": selectors.channel_choices(request.user),
            "channel_labels": Channel.choices,
        },
    )


@login_required
@require_POST
def item_open(request: HttpRequest, item_id: int) -> HttpResponse:
    try:
        item = services.item_open(actor=request.user, item_id=item_id)
    except NotFound:
        raise Http404("No such item in your inbox.") from None
    version = item.version
    return redirect(
        reverse(
            "reviews:review",
            kwargs={"page_id": version.page.public_id, "number": version.number},
        )
    )


@login_required
@require_POST
def read_all(request: HttpRequest) -> HttpResponse:
    count = services.items_read_all(actor=request.user)
    messages.success(request, f"Marked {count} item{'s' if count != 1 else ''} read.")
    return redirect("inbox:inbox")


@login_required
@require_POST
def channels(request: HttpRequest) -> HttpResponse:
    try:
        for kind in Kind.values:
            chosen = request.POST.get(f"channel-{kind}")
            if chosen is not None:
                services.channel_set(actor=request.user, kind=kind, channel=str(chosen))
    except QuireError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, "Saved how news reaches you.")
    return redirect("inbox:inbox")
