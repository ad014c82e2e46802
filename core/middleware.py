"""Request checks that belong to no single view."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from django.core.handlers.wsgi import get_bytes_from_wsgi
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

FORM = "application/x-www-form-urlencoded"


def is_utf8_form_data(raw: bytes) -> bool:
    """Whether a query string or form body decodes, percent-escapes included, as UTF-8."""
    try:
        parse_qsl(raw.decode("utf-8"), keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        return False
    return True


class RefuseBrokenText:
    """Form data that is not UTF-8 gets a 400 page instead of being stored altered.

    Django decodes such bytes (a lone surrogate sent as CESU-8, say) to U+FFFD and would keep
    the mangled text; browsers always send UTF-8, so only a broken client hits this.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        raw_query = get_bytes_from_wsgi(request.META, "QUERY_STRING", "")
        is_form = request.method == "POST" and request.content_type == FORM
        if not is_utf8_form_data(raw_query) or (is_form and not is_utf8_form_data(request.body)):
            return render(
                request,
                "400.html",
                {
                    "message": "The form held bytes that are not text (not valid UTF-8), such "
                    "as a lone surrogate; nothing was saved. Go back, retype the text and send "
                    "it again."
                },
                status=400,
            )
        return self.get_response(request)
