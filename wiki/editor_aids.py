"""Small JSON/HTML endpoints behind the editing screens: the live preview and the page picker.

The preview renders with the page view's own function, so what an editor sees beside the
markdown is what readers will see. The picker searches with the wiki's search service.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from core.errors import QuireError
from wiki.markdown import render_page_body
from wiki.models import MARKDOWN_MAX, READABLE, Page
from wiki.search import search_pages

PICK_LIMIT = 12


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


def pickable_pages(query: str, *, limit: int = PICK_LIMIT) -> list[Page]:
    """Live pages for a picker: title or path starting with `query` first, then search hits.

    Every logged-in person may read these (READABLE is the rule for people too), so the
    picker shows nobody a page they could not open.
    """
    live = Page.objects.filter(READABLE).only("public_id", "title", "path")
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
        try:
            hits = search_pages(query, limit=limit, semantic=False)
        except QuireError:
            hits = []
        seen = {page.pk for page in found}
        wanted = [hit.page_id for hit in hits if hit.page_id not in seen]
        by_id = live.in_bulk(wanted)
        found.extend(by_id[pk] for pk in wanted if pk in by_id)
    return found[:limit]


@login_required
@require_GET
def pick(request: HttpRequest) -> JsonResponse:
    pages = pickable_pages(str(request.GET.get("q", ""))[:200])
    return JsonResponse(
        {"pages": [{"pageId": p.public_id, "title": p.title, "path": p.path} for p in pages]}
    )
