"""Error pages for people: a 405 from a browser gets the same chrome as every other screen."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string


class FriendlyErrorPages:
    """Replace the empty body Django sends with a 405 by a page that says what to do.

    The REST API and the MCP endpoint keep their own machine-readable errors.
    """

    MACHINE_PREFIXES = ("/api/", "/mcp")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 405
            and not response.content
            and not request.path.startswith(self.MACHINE_PREFIXES)
        ):
            allowed = response.get("Allow", "")
            response.content = render_to_string(
                "405.html",
                {"method": request.method, "allowed": allowed, "path": request.path},
                request=request,
            ).encode()
            response["Content-Type"] = "text/html; charset=utf-8"
        return response
