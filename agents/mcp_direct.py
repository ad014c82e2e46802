"""`tools/call` answered in the request's own thread, without the async bridge.

django-mcp-server serves every request by re-encoding the parsed body, starting an event
loop in a new thread, running the SDK's Streamable HTTP transport and session there, and
hopping back to the request thread for each ORM call (rate limit, tool, audit row). For a
stateless `tools/call` that wants a JSON answer none of that is needed: this module checks
the same things, validates the arguments with the same pydantic model the SDK built from
the tool's signature, runs the same `PageTools` method and answers the same JSON-RPC
response. Everything else (initialize, tools/list, notifications, batches, malformed
messages, unsupported protocol versions) goes through the library unchanged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.http import HttpResponse
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic import ValidationError
from rest_framework.request import Request

from agents.mcp import (
    PageTools,
    ToolCall,
    _current_call,
    _invalid_arguments,
    _loggable,
    _rate_limited,
    _record,
    _text_problem,
    pretty_json,
    quire_mcp,
    refused,
    tool_names_for,
    unknown_arguments,
)
from agents.models import Agent
from core.audit import storable
from core.errors import QuireError

logger = logging.getLogger(__name__)

INTERNAL_ERROR = (
    "internal_error: the server could not complete this call; the error was logged. "
    "Try again later."
)


def direct_tool_call(request: Request, agent: Agent) -> HttpResponse | None:
    """The answer to a plain stateless `tools/call`, or None to let the library answer."""
    message = request.data
    if not (
        isinstance(message, dict)
        and message.get("jsonrpc") == "2.0"
        and message.get("method") == "tools/call"
        and isinstance(message.get("id"), str | int)
        and not isinstance(message.get("id"), bool)
        and isinstance(message.get("params"), dict)
        and isinstance(message["params"].get("name"), str)
        and isinstance(message["params"].get("arguments", {}), dict)
    ):
        return None
    accept = request.headers.get("Accept", "")
    if "application/json" not in accept or "text/event-stream" not in accept:
        return None  # the transport's own 406
    version = request.headers.get("Mcp-Protocol-Version")
    if version is not None and version not in SUPPORTED_PROTOCOL_VERSIONS:
        return None  # the transport's own 400
    name: str = message["params"]["name"]
    arguments: dict[str, Any] = message["params"].get("arguments") or {}
    call = ToolCall(agent=agent, tool=name)
    token = _current_call.set(call)
    try:
        result = _run(request, call, name, arguments)
    finally:
        _current_call.reset(token)
    _record(call)
    body = json.dumps(
        {"jsonrpc": "2.0", "id": message["id"], "result": result},
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return HttpResponse(body.encode(), content_type="application/json")


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _run(request: Request, call: ToolCall, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    # The same checks, in the same order, as QuireMCP._call.
    error: QuireError | None = _rate_limited(call.agent)
    if error is None and name not in tool_names_for(call.agent):
        call.outcome = "unknown_tool"
        return _error(f"Unknown tool: {storable(name)}")
    call.extra["arguments"] = _loggable(arguments)
    if error is None:
        error = _text_problem(arguments) or unknown_arguments(name, arguments)
    if error is None:
        tool = quire_mcp._tool_manager.get_tool(name)
        assert tool is not None, f"{name} is listed but not registered"
        try:
            meta = tool.fn_metadata
            parsed = meta.arg_model.model_validate(meta.pre_parse_json(arguments))
            kwargs = parsed.model_dump_one_level()
            kwargs.pop(tool.context_kwarg or "_context", None)
            method = getattr(PageTools(context=None, request=request), name)
            structured = method(**kwargs)
            return {
                "content": [{"type": "text", "text": pretty_json(structured)}],
                "structuredContent": structured,
                "isError": False,
            }
        except QuireError as exc:
            error = exc
        except ValidationError as exc:
            error = _invalid_arguments(exc)
        except Exception:
            logger.exception("MCP tool %s failed", name)
            call.outcome = "error"
            return _error(INTERNAL_ERROR)
    refused(call, error, arguments)
    return _error(f"{error.code}: {error.message}")
