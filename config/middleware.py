"""Answers for requests Quire cannot serve, given before they reach a view or instead of a 500.

A NUL in the query string or JSON nested past QUIRE_JSON_MAX_DEPTH is refused with 400; a
database that is down or restarting is 503 with Retry-After. The REST API and /mcp answer
in JSON (the API's error shape, JSON-RPC for MCP), the web UI in plain text.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable

from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

from config import replicas

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(body: bytes) -> int:
    """How deeply arrays and objects nest in `body` (brackets inside strings do not count)."""
    brackets = _JSON_STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        if byte in b"[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _speaks_json(request: HttpRequest) -> bool:
    return request.path.startswith(("/api/", "/mcp"))


def _refusal(request: HttpRequest, code: str, message: str, status: int) -> HttpResponse:
    if request.path.startswith("/mcp"):
        # JSON-RPC: invalid request (-32600), or a server error (-32000) for 503.
        rpc_code = -32600 if status < 500 else -32000
        return JsonResponse(
            {"jsonrpc": "2.0", "id": None, "error": {"code": rpc_code, "message": message}},
            status=status,
        )
    if _speaks_json(request):
        return JsonResponse({"error": {"code": code, "message": message}}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


class RequestGuardMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = self._refuse(request)
        return refusal if refusal is not None else self.get_response(request)

    def _refuse(self, request: HttpRequest) -> HttpResponse | None:
        if "\x00" in request.META.get("QUERY_STRING", "") or any(
            "\x00" in key or any("\x00" in value for value in values)
            for key, values in request.GET.lists()
        ):
            return _refusal(
                request,
                "invalid_argument",
                "The query string holds a NUL character (%00). Remove it and send the request "
                "again.",
                400,
            )
        if (
            request.method in ("POST", "PUT", "PATCH")
            and _speaks_json(request)
            # /mcp checks depth itself, after the token, so that the agent's audit keeps it.
            and not request.path.startswith("/mcp")
            and "json" in (request.content_type or "")
            and int(request.META.get("CONTENT_LENGTH") or 0) <= settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        ):
            limit = settings.QUIRE_JSON_MAX_DEPTH
            if json_depth(request.body) > limit:
                return _refusal(
                    request,
                    "invalid_argument",
                    f"The JSON body nests arrays and objects more than {limit} levels deep. "
                    "Send a flatter document.",
                    400,
                )
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        # A restart, failover or lock timeout: worth retrying, not a bug in the request.
        logger.warning(
            "Database unavailable for %s %s: %s", request.method, request.path, exception
        )
        response = _refusal(
            request,
            "unavailable",
            "The database is unavailable for a moment (restarting or busy). Try again in "
            f"{RETRY_AFTER_SECONDS} seconds.",
            503,
        )
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class ReplicaReadsMiddleware:
    """A web or REST request that only reads reads from a replica (config/replicas.py), unless
    its browser or credential wrote within `replicas.pin_seconds()`; one that writes pins them.
    /mcp decides per tool call (agents.mcp)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith("/mcp"):
            return self.get_response(request)
        if request.method not in _SAFE_METHODS:
            response = self.get_response(request)
            self._pin(request, response)
            return response
        alias = None if self._pinned(request) else replicas.usable_replica()
        if alias is None:
            return self.get_response(request)
        # Who asks is read on the primary: a session signed out or a person deactivated
        # there stops at once, however far behind the replica is.
        getattr(request.user, "pk", None)
        with replicas.reads_from(alias):
            response = self.get_response(request)
        if getattr(request, "quire_replica_failed", False):
            response = self.get_response(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> None:
        alias = replicas.reading_alias()
        if (
            alias is not None
            and isinstance(exception, OperationalError | InterfaceError)
            and replicas.replica_failed(alias, exception)
        ):
            request.quire_replica_failed = True  # type: ignore[attr-defined]

    def _pinned(self, request: HttpRequest) -> bool:
        authorization = request.headers.get("Authorization")
        if authorization:
            return replicas.pinned(replicas.credential_pin(authorization))
        try:
            return float(request.COOKIES.get(replicas.PIN_COOKIE, "0")) > time.time()
        except ValueError:
            return False

    def _pin(self, request: HttpRequest, response: HttpResponse) -> None:
        authorization = request.headers.get("Authorization")
        if authorization:
            replicas.pin(replicas.credential_pin(authorization))
            return
        seconds = replicas.pin_seconds()
        response.set_cookie(
            replicas.PIN_COOKIE,
            f"{time.time() + seconds:.3f}",
            max_age=math.ceil(seconds),
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )


class ServerTimingMiddleware:
    """With QUIRE_SERVER_TIMING on (the benches), each response says what the request cost
    this worker: `Server-Timing: cpu;dur=<ms>, app;dur=<ms>`, the CPU time of the thread
    that served it (time.thread_time: what a shared machine's load does not stretch, unlike
    wall time) and the wall time, both from the first middleware to the last. The database's
    own CPU (another process) is not in it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        cpu, wall = time.thread_time(), time.perf_counter()
        response = self.get_response(request)
        cpu_ms = (time.thread_time() - cpu) * 1000
        wall_ms = (time.perf_counter() - wall) * 1000
        response["Server-Timing"] = f"cpu;dur={cpu_ms:.3f}, app;dur={wall_ms:.3f}"
        return response
