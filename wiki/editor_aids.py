"""Small JSON/HTML endpoints behind the editing screens: the live preview and the page picker.

The preview renders with the page view's own function, so what an editor sees beside the
markdown is what readers will see. The picker's pages come from wiki.selectors.pickable_pages.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_POST

from wiki import selectors
from wiki.markdown import render_page_body
from wiki.models import MARKDOWN_MAX
from wiki.scope import person_scope


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
    html = render_page_body(body, title, reader=person_scope(request.user))
    return HttpResponse(html or '<p class="muted">Nothing to preview yet.</p>')


@login_required
@require_GET
def pick(request: HttpRequest) -> JsonResponse:
    pages = selectors.pickable_pages(
        str(request.GET.get("q", ""))[:200], person_scope(request.user)
    )
    return JsonResponse(
        {
            "pages": [
                {"pageId": p.public_id, "title": p.title, "path": p.shown_path}  # type: ignore[attr-defined]
                for p in pages
            ]
        }
    )
