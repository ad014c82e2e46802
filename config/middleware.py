"""A database that is down or restarting is 503 with Retry-After, never an HTML 500.

The REST API answers in its JSON error shape, /mcp in JSON-RPC, the web UI in plain text.
(NUL characters and over-deep JSON are refused by the doors themselves.)
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
UNAVAILABLE = (
    "The database is unavailable for a moment (restarting or busy). Try again in "
    f"{RETRY_AFTER_SECONDS} seconds."
)


def _unavailable(request: HttpRequest) -> HttpResponse:
    response: HttpResponse
    if request.path.startswith("/mcp"):
        response = JsonResponse(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": UNAVAILABLE}},
            status=503,
        )
    elif request.path.startswith("/api/"):
        response = JsonResponse(
            {"error": {"code": "unavailable", "message": UNAVAILABLE}}, status=503
        )
    else:
        response = HttpResponse(UNAVAILABLE, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        # A restart, failover or lock timeout: worth retrying, not a bug in the request.
        logger.warning(
            "Database unavailable for %s %s: %s", request.method, request.path, exception
        )
        return _unavailable(request)
