"""The `/mcp` endpoint: django-mcp-server's view behind Quire's checks.

Before the library sees a request it must be a POST (GET gets 405: the server is
stateless and has no event stream), come from no browser origin or an allowed one (403
otherwise, against DNS rebinding), carry a valid agent bearer token (401 otherwise) and
hold JSON nested no deeper than core.json_input.MAX_DEPTH and name a method MCP has (a
JSON-RPC error otherwise, never a 500). Each refusal after the token is known is audited.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from mcp.types import ClientRequest
from mcp_server.views import MCPServerStreamableHttpView
from pydantic import BaseModel, ValidationError
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request

from agents import selectors
from agents.mcp import call_tool_for, quire_mcp
from agents.mcp_audit import audit_text
from agents.mcp_rate import RATE_COUNTER_SECONDS, rate_counter
from agents.models import Agent
from agents.services import agent_mark_used
from connect import mcp_auth
from core.audit import audit_record, storable
from core.json_input import BoundedJSONParser, TooDeep

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
# Every request method of the MCP version the SDK speaks; the SDK answers any other with
# "Invalid request parameters" (-32602), where JSON-RPC says -32601.
METHOD_REQUESTS: dict[str, type[BaseModel]] = {
    method: request_type
    for request_type in typing.get_args(ClientRequest.model_fields["root"].annotation)
    for method in typing.get_args(request_type.model_fields["method"].annotation)
}
KNOWN_METHODS = frozenset(METHOD_REQUESTS)
_DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise_origin(origin: str) -> str:
    """`scheme://host[:port]` in lower case, with the scheme's default port left out."""
    parts = urlsplit(origin.strip())
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    try:
        port = parts.port
    except ValueError:
        return ""
    if not scheme or not host:
        return ""
    if ":" in host:
        host = f"[{host}]"
    if port is None or port == _DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


def origin_allowed(request: HttpRequest) -> bool:
    """Requests without an Origin (any non-browser client) pass; browsers must be allowed."""
    origin = request.headers.get("Origin")
    if origin is None:
        return True
    allowed = {
        normalise_origin(settings.QUIRE_BASE_URL),
        normalise_origin(f"{request.scheme}://{request.get_host()}"),
        *(normalise_origin(o) for o in settings.QUIRE_MCP_ALLOWED_ORIGINS),
    }
    allowed.discard("")
    return normalise_origin(origin) in allowed


def bearer_token(request: HttpRequest) -> str:
    scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def authenticate_agent(request: HttpRequest) -> Agent | None:
    """The agent the request's bearer token belongs to: where a request becomes an agent.

    The token is an agent's static token, or an OAuth access token bound to one agent."""
    found = find_agent(request)
    return None if found is None else selectors.confirm_agent(found)[0]


def find_agent(request: HttpRequest) -> selectors.FoundAgent | None:
    """`authenticate_agent`, except that a copy this process kept of a static token's agent
    comes without the shared generation's word: `selectors.confirm_agent` it before acting
    for the agent (a tool call confirms it and counts itself in one Redis round trip)."""
    token = bearer_token(request)
    if mcp_auth.is_oauth_access_token(token):
        agent = mcp_auth.agent_for_access_token(request, token)
        return None if agent is None else selectors.FoundAgent(agent, "", None)
    return selectors.agent_by_token_kept(token)


def _invalid_token(request: HttpRequest) -> JsonResponse:
    return _unauthorized(
        request,
        "This token is not valid: it may have expired, been rotated or revoked, or its "
        "connection was ended. Connect again, or ask an admin for the agent's current token.",
        invalid_token=True,
    )


def _unauthorized(request: HttpRequest, message: str, *, invalid_token: bool) -> JsonResponse:
    response = JsonResponse({"error": message}, status=401)
    # Where an OAuth client starts: the protected-resource metadata (RFC 9728).
    response["WWW-Authenticate"] = mcp_auth.bearer_challenge(request, invalid_token=invalid_token)
    return response


def _json_rpc_error(code: int, message: str, status: int, request_id: Any = None) -> JsonResponse:
    return JsonResponse(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}},
        status=status,
    )


def _refused(
    agent: Agent, code: int, message: str, status: int, request_id: Any = None
) -> JsonResponse:
    """A JSON-RPC error for a request the tools never see, kept in the agent's audit trail."""
    audit_record(
        action="mcp.request",
        actor=agent,
        outcome={
            PARSE_ERROR: "parse_error",
            METHOD_NOT_FOUND: "method_not_found",
            INVALID_PARAMS: "invalid_params",
        }.get(code, "invalid_request"),
        data={
            # It may quote what the caller sent (an unknown method's name, a version).
            "error": audit_text(message),
            "jsonRpcCode": code,
            **({"client": agent.oauth_client} if agent.oauth_client is not None else {}),
        },
    )
    return _json_rpc_error(code, message, status, request_id)


def unknown_method(data: Any) -> str | None:
    """The method of a JSON-RPC request (it has an id) that MCP does not have, if any."""
    if not isinstance(data, dict) or "id" not in data:
        return None
    method = data.get("method")
    if isinstance(method, str) and method not in KNOWN_METHODS:
        return method
    return None


class _AnyAccept(DefaultContentNegotiation):
    """The MCP transport checks Accept itself; DRF must not answer 406 first."""

    def select_renderer(
        self,
        request: Request,
        renderers: Iterable[BaseRenderer],
        format_suffix: str | None = None,
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


class QuireMCPView(MCPServerStreamableHttpView):
    mcp_server = quire_mcp
    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    parser_classes = [BoundedJSONParser]
    renderer_classes = [JSONRenderer]
    content_negotiation_class = _AnyAccept

    @property
    def allowed_methods(self) -> list[str]:
        return ["POST"]

    def _not_allowed(self) -> HttpResponse:
        response = JsonResponse(
            {"error": "This MCP endpoint is stateless and takes only POST requests."},
            status=405,
        )
        response["Allow"] = "POST"
        return response

    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._not_allowed()

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        return self._not_allowed()

    def post(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        if not origin_allowed(request):
            return JsonResponse(
                {
                    "error": "Requests from this origin are not allowed. Add it to "
                    "QUIRE_MCP_ALLOWED_ORIGINS if it is yours."
                },
                status=403,
            )
        if not bearer_token(request):
            return _unauthorized(
                request,
                "Send the agent's token as 'Authorization: Bearer <token>', or connect with "
                "OAuth. An admin can create an agent with 'python manage.py create_agent'.",
                invalid_token=False,
            )
        found = find_agent(request)
        if found is None:
            return _invalid_token(request)
        refusal = _refusal(request)
        tool_call = refusal is None and is_tool_call(request)
        # Before anything is done for the agent or audited under its name, its token is
        # confirmed; a tool call is counted against the rate limit in the same round trip.
        counted: int | None = None
        if tool_call:
            agent, counted = selectors.confirm_agent(
                found, counter=rate_counter(found.agent), timeout=RATE_COUNTER_SECONDS
            )
        else:
            agent, _ = selectors.confirm_agent(found)
        if agent is None:
            return _invalid_token(request)
        if refusal is not None:
            return _refused(agent, *refusal)
        agent_mark_used(agent)
        request.quire_agent = agent  # type: ignore[attr-defined]
        if tool_call:
            return tool_call_response(request, agent, counted)
        return self.mcp_server.handle_django_request(request)


Refusal = tuple[int, str, int, Any]


def _refusal(request: Request) -> Refusal | None:
    """Why the request's body is refused before MCP sees it (code, message, HTTP status,
    the id to answer with), or None."""
    if int(request.META.get("CONTENT_LENGTH") or 0) > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return (
            INVALID_REQUEST,
            f"The request is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes.",
            413,
            None,
        )
    try:
        data = request.data  # parse now, so that a bad body gets a JSON-RPC error
    except TooDeep as exc:
        return INVALID_REQUEST, f"Invalid request: {exc.detail}", 400, None
    except ParseError as exc:
        return PARSE_ERROR, f"Parse error: {exc.detail}", 400, None
    except UnsupportedMediaType:
        return INVALID_REQUEST, "Send the JSON-RPC message as application/json.", 415, None
    return _message_refusal(request, data)


def _message_refusal(request: Request, data: Any) -> Refusal | None:
    """Why the parsed message is refused: not one request object, not accepting JSON, a
    null id, a protocol version or method MCP lacks, params that do not fit the method."""
    request_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(request_id, str) and storable(request_id) != request_id:
        # The answer must echo the id, and no JSON encoder can write a lone surrogate.
        return (
            INVALID_REQUEST,
            "Invalid request: the id holds a NUL or a lone surrogate; use a number or plain text.",
            400,
            None,
        )
    shape = _shape_problem(data)
    if shape is not None:
        return INVALID_REQUEST, shape, 400, request_id if _is_request_id(request_id) else None
    data = typing.cast(dict[str, Any], data)
    if not _accepts_json(request):
        # The transport's own 406 would answer with the id "server-error".
        return (
            INVALID_REQUEST,
            "Not acceptable: send 'Accept: application/json, text/event-stream'; this server "
            "answers in JSON.",
            406,
            request_id if _is_request_id(request_id) else None,
        )
    if "id" in data and not _is_request_id(request_id):
        # The library takes a request with a null id for a notification (202, no answer):
        # the caller would wait for an answer that never comes.
        return (
            INVALID_REQUEST,
            "Invalid request: the id must be a string or an integer, never null; a "
            "notification is sent without an id.",
            400,
            None,
        )
    version = request.headers.get("Mcp-Protocol-Version")
    if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        return (
            INVALID_REQUEST,
            f"Invalid request: MCP-Protocol-Version {storable(version)!r} is not supported; "
            f"this server speaks {', '.join(SUPPORTED_PROTOCOL_VERSIONS)}.",
            400,
            request_id,
        )
    method = unknown_method(data)
    if method is not None:
        return (
            METHOD_NOT_FOUND,
            f"Method not found: {storable(method)!r}. This server speaks MCP: call "
            "initialize, tools/list or tools/call.",
            200,
            request_id if isinstance(request_id, str | int) else None,
        )
    problems = params_problems(data)
    return None if problems is None else (INVALID_PARAMS, problems, 200, request_id)


def _shape_problem(data: Any) -> str | None:
    """What keeps the body from being one JSON-RPC 2.0 request object, said precisely."""
    if isinstance(data, list):
        return "Invalid request: batches are not supported; send one JSON-RPC request object."
    if not isinstance(data, dict):
        return "Invalid request: send one JSON-RPC 2.0 request object, not a bare value."
    if data.get("jsonrpc") != "2.0":
        return 'Invalid request: the request object needs "jsonrpc": "2.0".'
    if not isinstance(data.get("params", {}), dict | list | None):
        return "Invalid request: params must be an object."
    if "method" not in data:
        return (
            'Invalid request: the request object needs a method, such as "tools/list" or '
            '"tools/call".'
        )
    return None


def _accepts_json(request: Request) -> bool:
    """The transport's rule: some Accept item is application/json."""
    accepted = (item.strip() for item in request.headers.get("Accept", "").split(","))
    return any(item.startswith("application/json") for item in accepted)


# What each params member a request may get wrong must be, as the caller should read it.
_PARAM_SHOULD_BE = {
    "params": "an object",
    "params.name": "a tool's name (a string) from tools/list",
    "params.arguments": "an object of the tool's arguments, as its inputSchema says",
}


def params_problems(data: dict[str, Any]) -> str | None:
    """What is wrong with a request's params, by the SDK's own model of the method's request
    (the SDK would answer only "Invalid request parameters"); nothing for a notification."""
    method = data["method"]
    request_type = METHOD_REQUESTS.get(method) if isinstance(method, str) else None
    if request_type is None or "id" not in data:
        return None
    message = {"method": method}
    if data.get("params") is not None:
        message["params"] = data["params"]
    try:
        request_type.model_validate(message)
    except ValidationError as exc:
        return f"Invalid params for {method}: {'; '.join(_described(exc))}."
    return None


def _described(exc: ValidationError) -> list[str]:
    problems: dict[str, str] = {}
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        if where.startswith("params.") and where.count(".") > 1 and "params.arguments" in where:
            where = "params.arguments"
        should = _PARAM_SHOULD_BE.get(where)
        problems.setdefault(where, f"{where}: {should}" if should else f"{where}: {error['msg']}")
    return list(problems.values())


def _is_request_id(value: Any) -> bool:
    """What MCP allows as a request's id: a string or an integer (JSON-RPC's null is not)."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def is_tool_call(request: Request) -> bool:
    """A stateless `tools/call` the view answers in the request's own thread.

    The library would re-encode the body, start an event loop in a new thread and hop back
    for every ORM call; a `tools/call` needs none of that. Everything else (initialize,
    tools/list, notifications, a wrong Accept or protocol version, odd shapes) goes to the
    library, which sends any tool call it gets to the same `call_tool_for`.
    """
    message = request.data
    accept = request.headers.get("Accept", "")
    version = request.headers.get("Mcp-Protocol-Version")
    return (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and message.get("method") == "tools/call"
        and isinstance(message.get("id"), str | int)
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("params"), dict)
        and isinstance(message["params"].get("name"), str)
        and isinstance(message["params"].get("arguments", {}), dict)
        # Otherwise the transport's own 406 and 400.
        and "application/json" in accept
        and "text/event-stream" in accept
        and (version is None or version in SUPPORTED_PROTOCOL_VERSIONS)
    )


def tool_call_response(request: Request, agent: Agent, counted: int | None) -> HttpResponse:
    """The JSON-RPC response to a `tools/call` (see `is_tool_call`), as the library words it;
    `counted`: the call's count in its rate-limit window, when already counted."""
    message = typing.cast(dict[str, Any], request.data)
    params = message["params"]
    result = call_tool_for(
        request, agent, params["name"], params.get("arguments") or {}, counted=counted
    )
    body = json.dumps(
        {"jsonrpc": "2.0", "id": message["id"], "result": result},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return HttpResponse(body.encode(), content_type="application/json")
