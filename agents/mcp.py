"""The MCP server agents talk to: its tools over each agent's page set.

django-mcp-server discovers this module (`<app>.mcp`) and registers `PageTools` on
`quire_mcp`. The server lists and runs the write tools only for agents with edit rights,
turns domain errors into `code: message` tool errors and writes an audit row per call.

The tools themselves are in agents/mcp_read_tools.py and agents/mcp_write_tools.py (on
mcp_toolbase.py), their answers' pieces in mcp_answers.py and types in mcp_outputs.py; the
call's audit row is mcp_audit.py's, its refusals mcp_errors.py's, its rate limit mcp_rate.py's.
"""

import difflib
import inspect
import logging
from typing import Any, get_type_hints

from asgiref.sync import sync_to_async
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import CallToolResult, ToolAnnotations
from mcp.types import Tool as MCPTool
from mcp_server import MCPToolset
from mcp_server.djangomcp import DjangoMCP, django_request_ctx
from pydantic import BaseModel, ValidationError, create_model

from agents import mcp_audit
from agents.mcp_audit import ToolCall, current_call, loggable, refused
from agents.mcp_errors import (
    DATABASE_RETRY_SECONDS,
    DATABASE_UNAVAILABLE,
    INTERNAL_ERROR,
    invalid_arguments,
    saved_anyway,
    text_problem,
    tool_error,
)
from agents.mcp_rate import rate_limited
from agents.mcp_read_tools import ReadTools
from agents.mcp_schemas import compact_input, compact_output
from agents.mcp_write_tools import WriteTools
from agents.models import Agent
from config import replicas
from core.audit import storable
from core.errors import InvalidArgument, QuireError, TryAgain
from core.json_output import pretty_json

logger = logging.getLogger(__name__)

READ_TOOLS = ("browse", "search_pages", "get_page", "recent_activity")
WRITE_TOOLS = ("get_page_source", "create_page", "update_page", "edit_page", "append_to_page")
# The two tools ChatGPT's deep research and company knowledge connectors call, listed to an
# agent whose connector_tools flag is on.
CONNECTOR_TOOLS = ("search", "fetch")

SERVER_INSTRUCTIONS = """\
Quire is your team's wiki. You can read only the pages that people chose for you.
Call browse first: it lists your pages, and each page's useWhen lines say when to use it
(a large set comes 200 pages at a time; search_pages finds a page faster there).
Read the pages marked alwaysInclude with get_page before you answer anything.
Use search_pages to find a page by its words, then get_page to read it.
Coming back to a task, call recent_activity to see what was published since.
When you may edit, every change you submit waits for a person to approve it."""


def is_write_tool(name: str) -> bool:
    """Whether the tool changes anything (get_page_source, listed only to editing agents,
    only reads)."""
    annotations: ToolAnnotations = getattr(PageTools, name).tool_annotations
    return not annotations.readOnlyHint


def editing_tools_text() -> str:
    """What edit rights add to an agent's tools, as its form and screens say it."""
    reads = [name for name in WRITE_TOOLS if not is_write_tool(name)]
    writes = [name for name in WRITE_TOOLS if is_write_tool(name)]
    return (
        f"Adds {', '.join(reads)} (reads a page's markdown) and {len(writes)} write tools "
        f"({', '.join(writes)})."
    )


def tool_names_for(agent: Agent) -> tuple[str, ...]:
    return (
        READ_TOOLS
        + (WRITE_TOOLS if agent.can_edit_pages else ())
        + (CONNECTOR_TOOLS if agent.connector_tools else ())
    )


def request_agent() -> Agent | None:
    """The agent the MCP view authenticated for the request being served."""
    request = django_request_ctx.get(None)
    return getattr(request, "quire_agent", None)


class _HideExpectedToolErrors(logging.Filter):
    """django-mcp-server logs every exception a tool raises with its traceback; a domain
    error is an answer to the agent, not a fault, so it stays out of the error log."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not isinstance(exc, QuireError)


logging.getLogger("mcp_server.djangomcp").addFilter(_HideExpectedToolErrors())


QUIRE_VERSION = "0.1.0"


class QuireMCP(DjangoMCP):
    """django-mcp-server's server with per-agent tool lists; tool calls go to `call_tool_for`.

    The library keeps one tool list for every caller, so listing filters it by the agent's
    rights here, and a `tools/call` that reaches the library (the view answers the usual
    ones itself) goes through the same `call_tool_for` as every other, never straight to a
    tool. The protocol itself is spoken by a low-level server of the SDK's public API
    (`protocol_server`) that has only these two handlers: so initialize reports Quire's
    name and version and advertises the tools capability alone, and resources/* and
    prompts/* are "method not found" (the library's own server, which FastMCP gives a
    handler for each, is not used).
    """

    def __init__(self, *, name: str, instructions: str, stateless: bool) -> None:
        super().__init__(name=name, instructions=instructions, stateless=stateless)
        self.protocol = protocol_server(self, name=name, instructions=instructions)

    @property
    def session_manager(self) -> StreamableHTTPSessionManager:
        """A fresh manager per request (one `run()` each), as the library's own is."""
        return StreamableHTTPSessionManager(app=self.protocol, json_response=True, stateless=True)

    def register_mcptoolset(self, toolset: MCPToolset) -> Any:
        tools = super().register_mcptoolset(toolset)
        for registered in tools:
            annotations = getattr(getattr(toolset, registered.name), "tool_annotations", None)
            registered.description = inspect.cleandoc(registered.description)
            registered.parameters = compact_input(registered.parameters)
            output = registered.fn_metadata.output_schema
            if output is not None:
                compacted = compact_output(output)
                output.clear()
                output.update(compacted)
            if annotations is not None:
                registered.annotations = annotations
                registered.title = annotations.title
        return tools

    async def list_tools(self) -> list[MCPTool]:
        agent = request_agent()
        allowed = tool_names_for(agent) if agent is not None else ()
        tools = [tool for tool in await super().list_tools() if tool.name in allowed]
        return sorted(tools, key=lambda tool: allowed.index(tool.name))

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        request = django_request_ctx.get(None)
        agent = request_agent()
        if request is None or agent is None:
            return CallToolResult.model_validate(tool_error(f"Unknown tool: {storable(name)}"))
        result = await sync_to_async(call_tool_for)(request, agent, name, arguments)
        return CallToolResult.model_validate(result)


def protocol_server(tools: QuireMCP, *, name: str, instructions: str) -> Server[Any, Any]:
    """The SDK's low-level server, serving tools/list and tools/call from `tools` only."""
    server: Server[Any, Any] = Server(name, version=QUIRE_VERSION, instructions=instructions)
    server.list_tools()(tools.list_tools)
    # The arguments are checked by call_tool_for against each tool's own model.
    server.call_tool(validate_input=False)(tools.call_tool)
    return server


def call_tool_for(
    request: HttpRequest,
    agent: Agent,
    name: str,
    arguments: dict[str, Any],
    *,
    counted: int | None = None,
) -> dict[str, Any]:
    """Run one tool call for `agent` and write its audit row: the only way to a tool.

    `counted` is the call's count in the agent's rate-limit window when the caller counted
    it already (with the token's check); otherwise it is counted here.
    Returns the `CallToolResult` as JSON: the result, or a tool error (`code: message`).
    """
    call = ToolCall(agent=agent, tool=name)
    token = current_call.set(call)
    try:
        result = _call(request, call, name, arguments, counted)
    finally:
        current_call.reset(token)
    try:
        # Looked up on its module at each call, so that a test can make it fail.
        mcp_audit.record_call(call)
    except Exception:
        if call.written is None:
            raise  # a read, or nothing written: a 503 "try again" is true
        # The version is saved (and its own audit row with it): the call's row is lost.
        logger.exception("The audit row of %s could not be written after it saved", name)
    return result


def _call(
    request: HttpRequest,
    call: ToolCall,
    name: str,
    arguments: dict[str, Any],
    counted: int | None,
) -> dict[str, Any]:
    # Every call counts, an unknown tool's too: guessing names costs the same as calling.
    error: QuireError | None = rate_limited(call.agent, counted)
    if error is None and name not in tool_names_for(call.agent):
        # Exactly what the library says for a tool it does not have.
        call.outcome = "unknown_tool"
        return tool_error(f"Unknown tool: {storable(name)}")
    call.extra["arguments"] = loggable(arguments)
    if error is None:
        error = text_problem(arguments) or unknown_arguments(name, arguments)
    if error is None:
        try:
            model = TOOL_ARGUMENTS[name]
            parsed = model.model_validate(arguments)
            structured = _run_tool(request, call, name, parsed)
            return {
                "content": [{"type": "text", "text": pretty_json(structured)}],
                "structuredContent": structured,
                "isError": False,
            }
        except QuireError as exc:
            error = exc
        except ValidationError as exc:
            error = invalid_arguments(exc)
        except (OperationalError, InterfaceError) as exc:
            # A known fault (a restart, a failover, a cut connection): one line, no traceback.
            if call.written is not None:
                logger.warning("MCP tool %s: the database failed after it saved: %s", name, exc)
                return saved_anyway(call.written)
            logger.warning(
                "MCP tool %s: the database is unavailable, nothing stored: %s", name, exc
            )
            error = TryAgain(DATABASE_UNAVAILABLE, retry_after=DATABASE_RETRY_SECONDS)
        except Exception:
            logger.exception("MCP tool %s failed", name)
            if call.written is not None:
                return saved_anyway(call.written)
            call.outcome = "error"
            return tool_error(INTERNAL_ERROR)
    refused(call, error, arguments)
    return tool_error(f"{error.code}: {error.message}")


def _run_tool(request: HttpRequest, call: ToolCall, name: str, parsed: BaseModel) -> Any:
    """The tool's answer. A read tool reads from a replica unless the agent wrote within
    `replicas.pin_seconds()` (config/replicas.py); its writes, and a write tool's, go to
    the primary, and a write tool pins the agent to the primary."""
    tool = getattr(PageTools(request=request), name)
    arguments = {field: getattr(parsed, field) for field in type(parsed).model_fields}
    if not replicas.configured():
        return tool(**arguments)
    pin = replicas.agent_pin(call.agent.pk)
    if is_write_tool(name):
        try:
            return tool(**arguments)
        finally:
            replicas.pin(pin)

    def read() -> Any:
        # Run again on the primary if the replica fails under it: the first run's notes go.
        call.page, call.page_ids, call.versions, call.read_record = None, [], [], None
        return tool(**arguments)

    return replicas.run_reading(read, pin=pin)


def unknown_arguments(name: str, arguments: dict[str, Any]) -> InvalidArgument | None:
    """Refuse arguments the tool does not take: a misspelt one would otherwise be dropped
    without a word (a `baseVersoin` lost, and the proposal based on something else)."""
    known = tuple(TOOL_ARGUMENTS[name].model_fields)
    unknown = [key for key in arguments if key not in known]
    if not unknown:
        return None
    guesses = [
        f"{key} (did you mean {close[0]}?)"
        if (close := difflib.get_close_matches(key, known, n=1))
        else key
        for key in unknown
    ]
    return InvalidArgument(
        f"{name} does not take {', '.join(guesses)}. It takes {', '.join(known)}. "
        "Nothing was done: call it again without the unknown argument(s)."
    )


quire_mcp = QuireMCP(name="quire", instructions=SERVER_INSTRUCTIONS, stateless=True)


class PageTools(ReadTools, WriteTools, MCPToolset):
    """Quire's tools. Every public method is a tool; its docstring is what the agent reads."""

    mcp_server = quire_mcp


def _arguments_model(name: str) -> type[BaseModel]:
    """The pydantic model of a tool's arguments, from its method's signature (as the library
    builds the input schema it lists from the same signature)."""
    method = getattr(PageTools, name)
    hints = get_type_hints(method, include_extras=True)
    fields: dict[str, Any] = {
        parameter.name: (
            hints[parameter.name],
            ... if parameter.default is inspect.Parameter.empty else parameter.default,
        )
        for parameter in list(inspect.signature(method).parameters.values())[1:]
    }
    return create_model(f"{name}_arguments", **fields)


TOOL_ARGUMENTS = {
    name: _arguments_model(name) for name in READ_TOOLS + WRITE_TOOLS + CONNECTOR_TOOLS
}
