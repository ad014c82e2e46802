"""Small JSON/HTML endpoints behind the editing screens: the live preview and the page picker.

The preview renders with the page view's own function, so what an editor sees beside the
markdown is what readers will see. The picker searches with the wiki's search service.
"""

from __future__ import annotations

import re

from django.contrib.auth.decorators import login_required
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from core.errors import QuireError
from wiki.markdown import render_page_body
from wiki.models import MARKDOWN_MAX, Page
from wiki.scope import Scope, person_scope
from wiki.search import search_pages

PICK_LIMIT = 12
# At most this many typed words narrow the part-of-a-word match, over this many candidates.
PICK_WORDS = 5
PICK_SCAN = 200
_WORD = re.compile(r"\w+")


@login_required
@require_POST
def preview(request: HttpRequest) -> HttpResponse:
    body = str(request.POST.get("body", ""))
    if len(body) > MARKDOWN_MAX:
        return HttpResponse(
            f"<p>The content is longer than {MARKDOWN_MAX:,} characters; shorten it to see the "
            "preview.</p>",
            status=400,
        )
    title = str(request.POST.get("title", ""))[:200]
    html = render_page_body(body, title)
    return HttpResponse(html or '<p class="muted">Nothing to preview yet.</p>')


def pickable_pages(query: str, scope: Scope, *, limit: int = PICK_LIMIT) -> list[Page]:
    """Pages for a picker within the reader's `scope`, so the picker shows nobody a page they
    could not open: those whose title or path holds every typed word as part of one of its
    words ("revi" finds "Code reviews"), title and path prefixes first, then the wiki's search
    hits for what is left.
    """
    live = Page.objects.filter(scope.q()).only("public_id", "title", "path")
    query = query.strip()
    if not query:
        return list(live.filter(parent__isnull=True).order_by("title")[:limit])
    prefix = query.strip("/").lower()
    found = list(
        live.filter(Q(title__istartswith=query) | Q(path__startswith=prefix)).order_by("path")[
            :limit
        ]
    )
    if len(found) < limit:
        found.extend(
            _part_matches(live, query, exclude={page.pk for page in found})[: limit - len(found)]
        )
    if len(found) < limit:
        try:
            hits = search_pages(query, scope=scope, limit=limit, semantic=False)
        except QuireError:
            hits = []
        seen = {page.pk for page in found}
        wanted = [hit.page_id for hit in hits if hit.page_id not in seen]
        by_id = live.in_bulk(wanted)
        found.extend(by_id[pk] for pk in wanted if pk in by_id)
    return found[:limit]


def _part_matches(live: QuerySet[Page], query: str, *, exclude: set[int]) -> list[Page]:
    """Pages whose title or path holds each word of `query` somewhere, those where a word of
    the title starts with it first. Titles and paths only, never bodies: the search does those."""
    words = query.lower().split()[:PICK_WORDS]
    where = Q()
    for word in words:
        where &= Q(title__icontains=word) | Q(path__icontains=word)
    candidates = list(live.filter(where).exclude(pk__in=exclude).order_by("path")[:PICK_SCAN])

    def rank(page: Page) -> tuple[int, str]:
        title_words = _WORD.findall(page.title.lower())
        starts = all(any(w.startswith(word) for w in title_words) for word in words)
        return (0 if starts else 1, page.path)

    return sorted(candidates, key=rank)


@login_required
@require_GET
def pick(request: HttpRequest) -> JsonResponse:
    pages = pickable_pages(str(request.GET.get("q", ""))[:200], person_scope(request.user))
    return JsonResponse(
        {"pages": [{"pageId": p.public_id, "title": p.title, "path": p.path} for p in pages]}
    )
