"""The MCP server agents talk to: its tools over each agent's page set.

django-mcp-server discovers this module (`<app>.mcp`) and registers `PageTools` on
`quire_mcp`. The server lists and runs the write tools only for agents with edit rights,
turns domain errors into `code: message` tool errors and writes an audit row per call.
"""

import difflib
import inspect
import logging
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, TypeVar, get_type_hints

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError
from django.http import HttpRequest
from django.urls import reverse
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.types import CallToolResult, ToolAnnotations
from mcp.types import Tool as MCPTool
from mcp_server import MCPToolset
from mcp_server.djangomcp import DjangoMCP, django_request_ctx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from typing_extensions import TypedDict

from agents import activity, selectors
from agents.browsing import browse_page
from agents.edits import apply_edits
from agents.long_pages import (
    SOURCE_BUDGET,
    Budget,
    ChangedOut,
    LinesOut,
    SectionOut,
    SectionShownOut,
    changed_lines,
    shown_text,
)
from agents.mcp_schemas import compact_input, compact_output
from agents.models import Agent
from agents.services import agent_page_create, page_read_statement
from config import replicas
from config.cache import counter_hit
from core.audit import Along, audit_record, storable
from core.errors import InvalidArgument, QuireError, RateLimited, TryAgain
from core.json_output import pretty_json
from reviews import selectors as review_selectors
from reviews.actions.propose import version_propose
from reviews.checks import proposal_checks
from wiki.credentials import holds_credential
from wiki.markdown import page_references
from wiki.models import Page, Version, VersionKind
from wiki.scope import Scope
from wiki.search import SearchHit, strip_marks
from wiki.search import search_pages as search_index
from wiki.validators import (
    check_text,
    validate_change_summary,
    validate_markdown,
    validate_query,
    validate_tags,
    validate_title,
)

logger = logging.getLogger(__name__)

READ_TOOLS = ("browse", "search_pages", "get_page", "recent_activity")
WRITE_TOOLS = ("get_page_source", "create_page", "update_page", "edit_page", "append_to_page")
# The two tools ChatGPT's deep research and company knowledge connectors call, listed to an
# agent whose connector_tools flag is on.
CONNECTOR_TOOLS = ("search", "fetch")
SEARCH_LIMIT = 8
GET_PAGE_CHARS = 24_000
GET_PAGE_CHARS_MIN, GET_PAGE_CHARS_MAX = 2_000, 1_000_000
# What get_page keeps of maxChars for the fields that say which part of the page it shows.
PART_FIELDS_CHARS = 300
# The least a page's text gets when its instructions and files take the whole budget.
TEXT_CHARS_MIN = 500
RATE_WINDOW_SECONDS = 60
# A window's counter outlives it, so that a clock a little behind still finds it.
RATE_COUNTER_SECONDS = RATE_WINDOW_SECONDS * 2
# The rate limit's clock (seconds since the epoch); tests fix it so their calls share a window.
rate_clock = time.time

SERVER_INSTRUCTIONS = """\
Quire is your team's wiki. You can read only the pages that people chose for you.
Call browse first: it lists your pages, and each page's useWhen lines say when to use it
(a large set comes 200 pages at a time; search_pages finds a page faster there).
Read the pages marked alwaysInclude with get_page before you answer anything.
Use search_pages to find a page by its words, then get_page to read it.
Coming back to a task, call recent_activity to see what was published since.
When you may edit, every change you submit waits for a person to approve it."""

F = TypeVar("F", bound=Callable[..., Any])


def tool(
    title: str,
    *,
    read_only: bool,
    destructive: bool | None = None,
    idempotent: bool | None = None,
) -> Callable[[F], F]:
    """Declares a tool's human title and hints on its method, so that no tool goes without
    them (directories of remote MCP servers require a title)."""

    def declare(method: F) -> F:
        method.tool_annotations = ToolAnnotations(  # type: ignore[attr-defined]
            title=title,
            readOnlyHint=read_only,
            destructiveHint=destructive,
            idempotentHint=idempotent,
            openWorldHint=False,
        )
        return method

    return declare


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


# --- results ---------------------------------------------------------------------------------


class SetPageOut(TypedDict):
    pageId: str
    title: str
    path: str
    alwaysInclude: bool
    useWhen: list[str]


class BrowseResult(TypedDict):
    pages: list[SetPageOut]
    # Only for sets larger than one answer (200 pages): their size, and where to go on.
    total: NotRequired[int]
    nextCursor: NotRequired[str | None]
    # Only when counting stopped (past 10,000 pages): the set holds at least `total`.
    totalIsLowerBound: NotRequired[bool]


class CopyOut(TypedDict):
    pageId: str
    path: str


class SearchHitOut(TypedDict):
    pageId: str
    title: str
    path: str
    section: str | None
    excerpt: str
    score: float
    alsoAt: NotRequired[list[CopyOut]]


class SearchResult(TypedDict):
    results: list[SearchHitOut]


class FileOut(TypedDict):
    name: str
    text: str


class IncludeOut(TypedDict):
    pageId: str
    title: str
    content: str


class LeftOutOut(TypedDict):
    pageId: str
    title: str


class PackedPage(TypedDict):
    pageId: str
    title: str
    path: str
    tags: list[str]
    versionNumber: int
    updated: str
    instructions: str
    content: str
    files: list[FileOut]
    includes: list[IncludeOut]
    unavailable: list[str]
    notIncluded: list[LeftOutOut]
    # Present when notIncluded is not empty: what to do about those pages.
    hint: NotRequired[str]
    # A long page comes as its outline (content: the text before its first heading).
    truncated: NotRequired[bool]
    sections: NotRequired[list[SectionOut]]
    # The section asked for, with its line range in the page.
    section: NotRequired[SectionShownOut]
    # The lines shown, when only some are (a range, or a long section's first lines).
    lines: NotRequired[LinesOut]


class PublishedOut(TypedDict):
    pageId: str
    title: str
    path: str
    versionNumber: int
    publishedAt: str
    changeSummary: str


class OwnDecisionOut(TypedDict):
    pageId: str
    title: str
    versionNumber: int
    status: str
    comment: str
    decidedAt: str


class ActivityResult(TypedDict):
    since: str
    published: list[PublishedOut]
    # Editing agents only: the decisions on their own proposals.
    decisions: NotRequired[list[OwnDecisionOut]]
    nextCursor: str | None


class ReviewCommentOut(TypedDict):
    author: str
    kind: str
    comment: str
    line: int | None
    lineText: str | None
    onVersion: int
    createdAt: str


class ReviewOut(TypedDict):
    """The workflow step a proposal waits on (DESIGN, "Review workflows")."""

    workflow: str
    status: str
    step: int
    steps: int
    stepName: str
    group: str
    approvals: int
    required: int
    approvedBy: list[str]
    revision: int
    comments: list[ReviewCommentOut]


class PendingOut(TypedDict):
    versionNumber: int
    author: str
    createdAt: str
    changeSummary: str
    review: NotRequired[ReviewOut | None]


class RefusedHunkOut(TypedDict):
    hunk: int
    line: int
    replaced: str
    proposed: str
    reason: str
    step: int


class DecisionOut(TypedDict):
    versionNumber: int
    status: str
    comment: str
    decidedAt: str
    # An approval of part of it: the changed blocks reviewers refused, and why.
    refusedHunks: NotRequired[list[RefusedHunkOut]]


class DraftOut(TypedDict):
    versionNumber: int
    baseVersion: int | None


class PageSource(TypedDict):
    pageId: str
    title: str
    markdown: str
    tags: list[str]
    status: Literal["live", "in_review", "rejected", "withdrawn"]
    parentId: str | None
    path: str
    liveVersion: int | None
    # markdown is this waiting proposal of the agent's own (null: the live text).
    draft: DraftOut | None
    inReview: bool
    pending: list[PendingOut]
    lastDecision: DecisionOut | None
    # A long page comes as its outline (markdown: the text before its first heading).
    truncated: NotRequired[bool]
    sections: NotRequired[list[SectionOut]]
    # The section asked for, with its line range in the page.
    section: NotRequired[SectionShownOut]
    # The lines shown, when only some are (a range, or a long section's first lines).
    lines: NotRequired[LinesOut]


class CheckOut(TypedDict):
    kind: str
    message: str
    line: int | None


class WriteResult(TypedDict):
    pageId: str
    title: str
    versionNumber: int
    status: Literal["in_review"]
    message: str
    # What the reviewer will be shown to look at (reviews.checks): fix it first if you can.
    checks: NotRequired[list[CheckOut]]
    # edit_page: the lines its edits changed, to check them without reading the page again.
    changed: NotRequired[list[ChangedOut]]
    # create_page: a page of the same title already beside it, and what to do about it.
    warning: NotRequired[str]


class ConnectorHitOut(TypedDict):
    id: str
    title: str
    url: str


class ConnectorSearchResult(TypedDict):
    results: list[ConnectorHitOut]


class ConnectorDocument(TypedDict):
    id: str
    title: str
    text: str
    url: str
    metadata: dict[str, Any]


class EditIn(TypedDict):
    __pydantic_config__ = ConfigDict(extra="forbid")  # type: ignore[misc]

    oldText: str
    newText: str


SectionName = Annotated[
    str | None,
    Field(
        description="A heading from sections (its line number when two read the same), "
        "or lines like '120-160'.",
        min_length=1,
        max_length=300,
    ),
]
PageId = Annotated[str, Field(description="From browse or search_pages.")]
BaseVersion = Annotated[
    int | None,
    Field(
        description="The liveVersion your text starts from (default: the one you read).",
        ge=1,
    ),
]
ChangeSummary = Annotated[str, Field(description="For the reviewer: what and why, in a sentence.")]


# --- one call ------------------------------------------------------------------------------


@dataclass
class ToolCall:
    """What one tool call touched, for its audit row."""

    agent: Agent
    tool: str
    started: float = field(default_factory=time.monotonic)
    page: Page | None = None
    page_ids: list[str] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    outcome: str = "ok"
    # The live version a read tool showed: the base of the agent's next replace proposal.
    read_live: int | None = None
    # An editing agent's record of that read (agents.services.page_read_statement).
    read_record: Along | None = None
    # A write tool's answer once its version has committed: whatever fails after that (the
    # audit row, a hook after commit, building the full answer), the agent is told it was
    # saved, never "try again" (it would propose twice).
    written: dict[str, Any] | None = None

    def touched(
        self,
        page: Page | None = None,
        *,
        page_ids: list[str] | None = None,
        versions: list[int] | None = None,
    ) -> None:
        if page is not None and self.page is None:
            self.page = page
        self.page_ids.extend(page_ids or ([page.public_id] if page is not None else []))
        self.versions.extend(versions or [])


_current_call: ContextVar[ToolCall] = ContextVar("quire_tool_call")


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


def _error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


# The keys of the objects inside a tool's arguments, to suggest one for a key misspelt there.
_NESTED_KEYS: dict[str, tuple[str, ...]] = {"edits": tuple(EditIn.__annotations__)}


def _invalid_arguments(exc: ValidationError) -> InvalidArgument:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        message = error["msg"]
        if error["type"] == "extra_forbidden" and len(error["loc"]) > 1:
            known = _NESTED_KEYS.get(str(error["loc"][0]), ())
            close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1, cutoff=0.5)
            message = "this key is not taken here" + (
                f" (did you mean {close[0]}?)" if close else ""
            )
            if known:
                message += f"; each item takes {', '.join(known)}"
        problems.append(f"{where}: {message}")
    return InvalidArgument(
        "the arguments do not fit this tool (" + "; ".join(problems) + "). "
        "Check the tool's input schema and call it again."
    )


def rate_counter(agent: Agent) -> str:
    """The counter of the agent's calls in the current one-minute window."""
    return f"quire:mcp-calls:{agent.pk}:{int(rate_clock() // RATE_WINDOW_SECONDS)}"


def _rate_limited(agent: Agent, counted: int | None = None) -> RateLimited | None:
    """Count this call in the agent's fixed one-minute window (unless `counted`: its count,
    already made with the token's check); past the limit, refuse it."""
    limit = settings.QUIRE_AGENT_RATE_LIMIT
    count = (
        counted
        if counted is not None
        else counter_hit(rate_counter(agent), timeout=RATE_COUNTER_SECONDS)
    )
    if count <= limit:
        return None
    wait = RATE_WINDOW_SECONDS - int(rate_clock()) % RATE_WINDOW_SECONDS
    return RateLimited(
        f"you made more than {limit} calls this minute. Wait {wait} seconds and try again."
    )


def _record(call: ToolCall) -> None:
    data: dict[str, Any] = {"pageIds": call.page_ids, "versions": call.versions, **call.extra}
    if call.agent.oauth_client is not None:
        data["client"] = call.agent.oauth_client
    if "error" in data:
        # Errors quote what the agent sent (an unknown argument's name, a line it matched).
        data["error"] = _kept_text(data["error"], cut=False)
    audit_record(
        along=call.read_record,
        # An unknown tool's name is whatever the caller sent: keep it within the column.
        action=f"mcp.{_kept_text(call.tool, cut=False)[:50]}",
        actor=call.agent,
        page=call.page,
        version_number=call.read_live
        if call.read_live is not None
        else (call.versions[0] if len(call.versions) == 1 else None),
        outcome=call.outcome,
        duration_ms=int((time.monotonic() - call.started) * 1000),
        data=data,
    )


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
            return CallToolResult.model_validate(_error(f"Unknown tool: {storable(name)}"))
        result = await sync_to_async(call_tool_for)(request, agent, name, arguments)
        return CallToolResult.model_validate(result)


def protocol_server(tools: QuireMCP, *, name: str, instructions: str) -> Server[Any, Any]:
    """The SDK's low-level server, serving tools/list and tools/call from `tools` only."""
    server: Server[Any, Any] = Server(name, version=QUIRE_VERSION, instructions=instructions)
    server.list_tools()(tools.list_tools)
    # The arguments are checked by call_tool_for against each tool's own model.
    server.call_tool(validate_input=False)(tools.call_tool)
    return server


DATABASE_RETRY_SECONDS = 5
DATABASE_UNAVAILABLE = (
    "the database was unavailable for a moment (restarting or busy) and nothing was stored; "
    f"call again in {DATABASE_RETRY_SECONDS} seconds."
)
INTERNAL_ERROR = (
    "internal_error: the server could not complete this call; the error was logged. "
    "Try again later."
)


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
    token = _current_call.set(call)
    try:
        result = _call(request, call, name, arguments, counted)
    finally:
        _current_call.reset(token)
    try:
        _record(call)
    except Exception:
        if call.written is None:
            raise  # a read, or nothing written: a 503 "try again" is true
        # The version is saved (and its own audit row with it): the call's row is lost.
        logger.exception("The audit row of %s could not be written after it saved", name)
    return result


def _saved_anyway(written: dict[str, Any]) -> dict[str, Any]:
    """A write's answer when something failed after its version committed."""
    answer = {
        **written,
        "warning": "Your proposal was saved, but the server failed afterwards while "
        "answering; do not send it again. Call get_page_source to see it.",
    }
    return {
        "content": [{"type": "text", "text": pretty_json(answer)}],
        "structuredContent": answer,
        "isError": False,
    }


def _call(
    request: HttpRequest,
    call: ToolCall,
    name: str,
    arguments: dict[str, Any],
    counted: int | None,
) -> dict[str, Any]:
    # Every call counts, an unknown tool's too: guessing names costs the same as calling.
    error: QuireError | None = _rate_limited(call.agent, counted)
    if error is None and name not in tool_names_for(call.agent):
        # Exactly what the library says for a tool it does not have.
        call.outcome = "unknown_tool"
        return _error(f"Unknown tool: {storable(name)}")
    call.extra["arguments"] = _loggable(arguments)
    if error is None:
        error = _text_problem(arguments) or unknown_arguments(name, arguments)
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
            error = _invalid_arguments(exc)
        except (OperationalError, InterfaceError) as exc:
            # A known fault (a restart, a failover, a cut connection): one line, no traceback.
            if call.written is not None:
                logger.warning("MCP tool %s: the database failed after it saved: %s", name, exc)
                return _saved_anyway(call.written)
            logger.warning(
                "MCP tool %s: the database is unavailable, nothing stored: %s", name, exc
            )
            error = TryAgain(DATABASE_UNAVAILABLE, retry_after=DATABASE_RETRY_SECONDS)
        except Exception:
            logger.exception("MCP tool %s failed", name)
            if call.written is not None:
                return _saved_anyway(call.written)
            call.outcome = "error"
            return _error(INTERNAL_ERROR)
    refused(call, error, arguments)
    return _error(f"{error.code}: {error.message}")


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


def refused(call: ToolCall, error: QuireError, arguments: dict[str, Any]) -> None:
    """Record a refused call for its audit row."""
    call.outcome = error.code
    call.extra["error"] = error.message
    if "credentials" in error.detail:
        # The audit keeps the call, never the credential it was refused for.
        call.extra["arguments"] = {
            key: "(withheld: refused for holding a credential)"
            if isinstance(value, str | list | dict) and key != "pageId"
            else value
            for key, value in arguments.items()
        }


def _text_problem(arguments: dict[str, Any]) -> InvalidArgument | None:
    """The text rule on every string the agent sent, names included, whichever tool reads it:
    an id or an argument no tool knows must not reach the database either."""
    pending: list[tuple[str, Any]] = list(reversed(arguments.items()))
    try:
        while pending:
            where, value = pending.pop()
            check_text(where, field="arguments", name="an argument name")
            if isinstance(value, str):
                check_text(value, field=where)
            elif isinstance(value, dict):
                pending.extend(reversed([(f"{where}.{k}", v) for k, v in value.items()]))
            elif isinstance(value, list):
                pending.extend(reversed([(f"{where}[{i}]", v) for i, v in enumerate(value)]))
    except InvalidArgument as error:
        return error
    return None


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


def _loggable(arguments: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments for the audit log: no text that the credential check has not
    passed, and long texts cut short.

    Every text is checked here, whatever the call's outcome: one refused for another reason
    (a page not found, a text too long, an unknown argument, a zero-width character) never
    reached the tool's own check, and the audit must not keep what it would have refused.
    NUL and lone surrogates (refused by the tools, but still logged) cannot be stored in a
    PostgreSQL JSON column: they are replaced, so that the refusal itself gets its audit row.
    """
    return _storable(arguments)


AUDIT_TEXT_KEPT = 200
# The audit keeps a text's first 200 characters; a credential that reaches into them starts
# there and ends within a few thousand (a 4,096-bit RSA key's PEM is about 3,300).
_AUDIT_TEXT_CHECKED = AUDIT_TEXT_KEPT + 4000
WITHHELD = "(withheld: holds what looks like a credential)"


def _kept_text(value: str, *, cut: bool = True) -> str:
    if holds_credential(value[:_AUDIT_TEXT_CHECKED]):
        return WITHHELD
    if cut and len(value) > AUDIT_TEXT_KEPT:
        value = value[:AUDIT_TEXT_KEPT] + f"... ({len(value)} characters)"
    return value.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")


def audit_text(value: str) -> str:
    """A text for an audit row, whole, unless it holds what looks like a credential."""
    return _kept_text(value, cut=False)


def _storable(value: Any) -> Any:
    if isinstance(value, str):
        return _kept_text(value)
    if isinstance(value, list):
        return [_storable(item) for item in value]
    if isinstance(value, dict):
        kept = {}
        for number, (key, item) in enumerate(value.items(), 1):
            name = _kept_text(str(key))
            kept[name if name != WITHHELD else f"{WITHHELD} {number}"] = _storable(item)
        return kept
    return value


quire_mcp = QuireMCP(name="quire", instructions=SERVER_INSTRUCTIONS, stateless=True)


# --- the tools -------------------------------------------------------------------------------


def _review_out(version: Version) -> ReviewOut | None:
    summary = review_selectors.review_summary(version)
    if summary is None:
        return None
    summary.pop("path", None)
    summary.pop("asked", None)  # the REST answer's; not part of the MCP contract
    return summary  # type: ignore[return-value]


def _search_hit(hit: SearchHit, scope: Scope) -> SearchHitOut:
    found: SearchHitOut = {
        "pageId": hit.public_id,
        "title": hit.title,
        "path": scope.shown(hit.path, hit.hidden_prefix),
        "section": hit.section,
        "excerpt": strip_marks(hit.excerpt),
        "score": round(float(hit.score), 4),
    }
    if hit.copies:
        found["alsoAt"] = [
            {"pageId": copy.public_id, "path": scope.shown(copy.path, copy.hidden_prefix)}
            for copy in hit.copies
        ]
    return found


def _decision_out(decided: Version) -> DecisionOut:
    """The last decision on the agent's proposal, with the blocks refused when only part of
    it was approved (the refused text is the agent's to propose again)."""
    out: DecisionOut = {
        "versionNumber": decided.number,
        "status": decided.status,
        "comment": decided.decision_comment,
        "decidedAt": _iso(decided.decided_at),
    }
    refused = review_selectors.refused_hunks(decided) if decided.edited_by_reviewer else []
    if refused:
        out["refusedHunks"] = [
            {
                "hunk": hunk.number,
                "line": hunk.line,
                "replaced": hunk.replaced,
                "proposed": hunk.proposed,
                "reason": hunk.reason,
                "step": hunk.step + 1,
            }
            for hunk in refused
        ]
    return out


def _iso(moment: Any) -> str:
    return moment.isoformat() if moment is not None else ""


def _write_result(version: Version, withdrawn: int | None, *, carried: bool = False) -> WriteResult:
    message = f"Submitted as v{version.number} and waiting for a human to approve it."
    if withdrawn is not None and withdrawn != version.number and carried:
        message += (
            f" It carries your earlier proposal v{withdrawn} first, then this addition; "
            f"v{withdrawn} was withdrawn in its favour."
        )
    elif withdrawn is not None and withdrawn != version.number:
        message += f" It replaces your earlier proposal v{withdrawn}, which was withdrawn."
    return {
        "pageId": version.page.public_id,
        "title": version.title,
        "versionNumber": version.number,
        "status": "in_review",
        "message": message,
    }


def _received_live(live: Version | None, draft: Version | None) -> int | None:
    """The live version whose text get_page_source gives: its own replace draft carries its
    own base (the agent is shown the draft, built on that base, never the live text
    published since); an append draft is shown on top of the live text."""
    if draft is not None and draft.kind == VersionKind.REPLACE:
        return draft.base_version.number if draft.base_version is not None else None
    return live.number if live is not None else None


def _checked(result: WriteResult, version: Version, agent: Agent) -> WriteResult:
    """The write result with what a reviewer will be asked to look at, naming only pages
    the agent may see."""
    findings = proposal_checks(version, reader=lambda: selectors.agent_scope(agent))
    if findings:
        result["checks"] = [
            {"kind": found.kind, "message": found.message, "line": found.line} for found in findings
        ]
        result["message"] += (
            f" The reviewer will be shown {len(findings)} thing"
            f"{'' if len(findings) == 1 else 's'} to check (see checks); if one is a mistake, "
            "propose again with it fixed."
        )
    return result


def _source_status(
    live: Version | None, draft: Version | None, shown: Version
) -> Literal["live", "in_review", "rejected", "withdrawn"]:
    if live is not None:
        return "live"
    if draft is not None or shown.status == "in_review":
        return "in_review"
    return "withdrawn" if shown.status == "withdrawn" else "rejected"


def pack_includes(
    answer: dict[str, Any], referenced: list[tuple[str, Version]], *, max_chars: int
) -> None:
    """Fill `includes` in reference order while the answer's pretty JSON stays under
    `max_chars`; list the referenced pages that did not fit in `notIncluded`."""
    size = len(pretty_json(answer))
    for ref, version in referenced:
        item = {"pageId": ref, "title": version.title, "content": version.body}
        # Indented two levels deeper inside the answer, plus its separator.
        text = pretty_json(item)
        cost = len(text) + 4 * text.count("\n") + 6
        if size + cost < max_chars:
            answer["includes"].append(item)
            size += cost
        else:
            left_out = {"pageId": ref, "title": version.title}
            answer["notIncluded"].append(left_out)
            size += len(pretty_json(left_out)) + 30
    if answer["notIncluded"]:
        answer["hint"] = (
            f"{len(answer['notIncluded'])} referenced page(s) did not fit in {max_chars:,} "
            "characters: call get_page with each pageId in notIncluded to read them."
        )


def _blind_replace(page_id: str, *, body: Any, title: Any, tags: Any) -> InvalidArgument:
    """The refusal of a whole-page replace from an agent that never read the page; what is
    wrong with the text itself is said first, as the service would."""
    if body is not None:
        validate_markdown(body)
    if title is not None:
        validate_title(title)
    if tags is not None:
        validate_tags(tags)
    return InvalidArgument(
        f"you never read page {page_id}, so this whole-page replacement would overwrite text "
        "you have not seen. Read it with get_page_source first, or pass baseVersion (the "
        "liveVersion your text starts from). Nothing was stored."
    )


def page_url(public_id: str) -> str:
    """The page's address in the web UI: by id, so it names no page outside the set."""
    return settings.QUIRE_BASE_URL.rstrip("/") + reverse("wiki:page", args=[public_id])


def _connector_text(packed: PackedPage) -> str:
    """get_page's content for a connector, which reads text only: a long page's outline
    becomes its lead and the ids of its sections."""
    text = packed["content"]
    sections = packed.get("sections") or []
    if sections:
        listed = "\n".join(
            f"- {item['heading']}: {packed['pageId']}#{item['line']}" for item in sections
        )
        text += f"\n\n(The rest of this page is in sections; fetch one by its id:)\n{listed}\n"
    elif packed.get("lines", {}).get("next"):
        text += f"\n\n(Continued: fetch {packed['pageId']}#{packed['lines']['next']})\n"
    return text


def _appended(live_body: str, appended: str) -> str:
    live_body, appended = live_body.rstrip("\n"), appended.strip("\n")
    return f"{live_body}\n\n{appended}\n" if live_body else f"{appended}\n"


class PageTools(MCPToolset):
    """Quire's tools. Every public method is a tool; its docstring is what the agent reads."""

    mcp_server = quire_mcp

    def _agent(self) -> Agent:
        agent: Agent | None = getattr(self.request, "quire_agent", None)
        assert agent is not None, "the MCP view authenticates every request"
        return agent

    def _read(self, agent: Agent, page_id: int, version_number: int) -> None:
        """Record the live version the agent read: the base of its next replace. Not for
        the admin's preview of what the agent sees (a GET, which never writes): those reads
        were the admin's, and would let the agent's later blind update_page through."""
        call = _current_call.get(None)
        if call is not None and not getattr(self.request, "quire_preview", False):
            # Written with the call's audit row, in its one commit (`_record`).
            call.read_record = page_read_statement(
                agent=agent, page_id=page_id, version_number=version_number
            )

    def _touched(
        self,
        page: Page | None = None,
        *,
        page_ids: list[str] | None = None,
        versions: list[int] | None = None,
        read_live: int | None = None,
    ) -> None:
        call = _current_call.get(None)
        if call is not None:
            call.touched(page, page_ids=page_ids, versions=versions)
            call.read_live = read_live if read_live is not None else call.read_live

    def _written(self, version: Version) -> None:
        call = _current_call.get(None)
        if call is not None:
            call.written = dict(_write_result(version, None))

    def _note(self, **extra: Any) -> None:
        call = _current_call.get(None)
        if call is not None:
            call.extra.update(extra)

    @tool("Browse your pages", read_only=True)
    def browse(
        self,
        cursor: Annotated[
            str | None,
            Field(description="nextCursor of your previous browse."),
        ] = None,
        under: Annotated[
            str | None,
            Field(description="Only pages under this pageId or path, e.g. 'tools/slack'."),
        ] = None,
    ) -> BrowseResult:
        """List your pages, in curated order, each with useWhen: when to use it.
        Call this first, then get_page the ones marked alwaysInclude. Over 200 pages come 200
        at a time with total and nextCursor: browse(cursor=nextCursor) for more,
        browse(under=...) for a subtree, or search_pages for one page.
        """
        shown = browse_page(self._agent(), cursor=cursor, under=under)
        # A compact audit row: how much was shown and where, not every page id.
        self._note(
            returned=len(shown.entries),
            total=shown.total,
            first=shown.entries[0]["pageId"] if shown.entries else None,
            last=shown.entries[-1]["pageId"] if shown.entries else None,
        )
        return shown.answer()  # type: ignore[return-value]

    @tool("Search your pages", read_only=True)
    def search_pages(
        self,
        query: Annotated[
            str,
            Field(description="Words or a question, up to 2,000 characters."),
        ],
        under: Annotated[
            str | None,
            Field(description="Only pages under this pageId or path, e.g. 'tools/slack'."),
        ] = None,
    ) -> SearchResult:
        """Find the pages in your set that answer a question, by meaning and by words. Ask as
        you would ask a colleague; "quoted words" must appear together, -word excludes, OR
        accepts either side. At most 8 pages, best first, each with the section that matched
        and an excerpt: read it with get_page(pageId, section=...). A page copied into other
        folders comes once, alsoAt naming the copies.
        """
        query = validate_query(query)
        # The set goes into the search query as its entries' ids and tree ranges.
        scope = selectors.agent_scope(self._agent(), under=under)
        hits = search_index(query, scope=scope, limit=SEARCH_LIMIT, fold_copies=True)
        self._touched(page_ids=[hit.public_id for hit in hits])
        return {"results": [_search_hit(hit, scope) for hit in hits]}

    @tool("Read a page", read_only=True)
    def get_page(
        self,
        pageId: PageId,
        maxChars: Annotated[
            int | None,
            Field(
                description=f"The answer's size (default {GET_PAGE_CHARS:,}); instructions "
                "and files come whole.",
                ge=GET_PAGE_CHARS_MIN,
                le=GET_PAGE_CHARS_MAX,
            ),
        ] = None,
        section: SectionName = None,
    ) -> PackedPage:
        """Read a page: its content, its instructions (follow them), its files' text and the
        pages its instructions reference while they fit (the rest in notIncluded: get_page each
        when you need it). A page over maxChars comes as its outline (truncated: true, sections:
        each heading with its line and size): call again with section=<heading> (search_pages
        names the one that matched) or a line range like '120-160' to read that part.
        """
        agent = self._agent()
        page = selectors.readable_page_for_agent(agent, pageId)
        files = [{"name": name, "text": text} for name, text in selectors.page_files(page)]
        references = [ref for ref in page_references(page.instructions) if ref != page.public_id]
        readable = selectors.pages_for_agent(agent, references)
        max_chars = maxChars or GET_PAGE_CHARS
        answer: dict[str, Any] = {
            "pageId": page.public_id,
            "title": page.title,
            "path": selectors.agent_path(page),
            "tags": list(page.tags),
            "versionNumber": page.version_number,
            "updated": _iso(page.published_at),
            "instructions": page.instructions,
            "content": "",
            "files": files,
            "includes": [],
            "unavailable": [ref for ref in references if ref not in readable],
            "notIncluded": [],
        }
        # The page's text takes what the rest of the answer leaves of maxChars.
        room = max(max_chars - len(pretty_json(answer)) - PART_FIELDS_CHARS, TEXT_CHARS_MIN)
        shown = shown_text(page.body, section, Budget(room, room))
        answer["content"] = shown.text
        answer.update(shown.fields)
        referenced = [
            (ref, version)
            for ref in references
            if ref in readable and (version := readable[ref].live_version) is not None
        ]
        pack_includes(answer, referenced, max_chars=max_chars)
        self._read(agent, page.pk, page.version_number)
        self._touched(
            # For the audit row's page: the id is all it needs.
            Page.from_db(DEFAULT_DB_ALIAS, ["id", "public_id"], [page.pk, page.public_id]),
            page_ids=[page.public_id, *(item["pageId"] for item in answer["includes"])],
            versions=[page.version_number],
            read_live=page.version_number,
        )
        return answer  # type: ignore[return-value]

    @tool("What changed recently", read_only=True)
    def recent_activity(
        self,
        since: Annotated[
            str | None,
            Field(
                description="An ISO 8601 time (UTC without an offset); default 7 days ago.",
                max_length=60,
            ),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="nextCursor of your previous call."),
        ] = None,
        limit: Annotated[
            int | None,
            Field(
                description="Default 50; nextCursor gives the rest.",
                ge=1,
                le=activity.PAGE_SIZE,
            ),
        ] = None,
    ) -> ActivityResult:
        """What changed in your pages since a time: versions published, newest first, and the
        decisions on your own proposals with the reviewer's comment (changes requested: revise
        with get_page_source and update_page). Call it when you come back to a task.
        """
        agent = self._agent()
        found = activity.recent_activity(
            agent, since=since, cursor=cursor, limit=limit or activity.DEFAULT_LIMIT
        )
        self._note(returned=len(found.published), since=found.since.isoformat())
        result: dict[str, Any] = {
            "since": found.since.isoformat(),
            "published": found.published,
        }
        if found.decisions is not None:
            result["decisions"] = found.decisions
        result["nextCursor"] = found.next_cursor
        return result  # type: ignore[return-value]

    @tool("Read a page's markdown source", read_only=True)
    def get_page_source(self, pageId: PageId, section: SectionName = None) -> PageSource:
        """Read a page's markdown before update_page, edit_page or append_to_page. If your
        proposal waits, markdown is that draft (draft names it); lastDecision is the last
        decision on yours (rejected new page: fix it, send update_page; refusedHunks: propose
        again). Over 10,000 characters: an outline; a section over 6,000: its outline or first
        lines (section=lines.next reads on).
        """
        agent = self._agent()
        page = selectors.page_source_for_agent(agent, pageId)
        live = page.live_version
        draft = selectors.own_pending_proposal(agent, page, with_review=True)
        decided = selectors.own_last_decision(agent, page)
        asked = review_selectors.changes_request(draft) if draft is not None else None
        # A page the agent created that never went live and has nothing waiting: its last
        # proposal (rejected, with the reason in lastDecision) is the text to revise.
        shown = draft or live or decided or selectors.own_newest_version(agent, page)
        if shown is None:
            raise selectors.no_such_page(page.public_id)
        if draft is not None and draft.kind == VersionKind.APPEND:
            markdown = _appended(live.body if live else "", draft.proposed_body)
        else:
            markdown = shown.body
        part = shown_text(markdown, section, SOURCE_BUDGET)
        parent = selectors.parent_in_set(page)
        received = _received_live(live, draft)
        if received is not None:
            self._read(agent, page.pk, received)
        self._touched(
            page, versions=[v.number for v in (live, draft) if v is not None], read_live=received
        )
        return {
            "pageId": page.public_id,
            "title": shown.title,
            "markdown": part.text,
            "tags": list(shown.tags),
            "status": _source_status(live, draft, shown),
            "parentId": parent.public_id if parent is not None else None,
            "path": selectors.agent_path(page),
            "liveVersion": live.number if live is not None else None,
            "draft": {"versionNumber": draft.number, "baseVersion": received}
            if draft is not None
            else None,
            "inReview": draft is not None,
            "pending": [
                {
                    "versionNumber": draft.number,
                    "author": draft.author_name,
                    "createdAt": _iso(draft.created_at),
                    "changeSummary": draft.change_summary,
                    "review": _review_out(draft),
                }
            ]
            if draft is not None
            else [],
            "lastDecision": {
                "versionNumber": draft.number,
                "status": "changes_requested",
                "comment": asked.body,
                "decidedAt": _iso(asked.created_at),
            }
            if draft is not None and asked is not None
            else _decision_out(decided)
            if decided is not None
            else None,
            **part.fields,  # type: ignore[typeddict-item]
        }

    @tool("Propose a new page", read_only=False, destructive=False, idempotent=False)
    def create_page(
        self,
        title: Annotated[str, Field(description="1 to 200 characters.")],
        markdown: str,
        parentId: Annotated[str | None, Field(description="A pageId of your set.")] = None,
        tags: Annotated[list[str] | None, Field(description="Up to 20.")] = None,
        changeSummary: Annotated[str | None, Field(description="Why this page.")] = None,
    ) -> WriteResult:
        """Propose a new page, invisible until a person approves it. Only when no page in
        your set covers the topic (search_pages first). With parentId it goes under that page;
        without, it is a top-level page added to your set.
        """
        agent = self._agent()
        parent = selectors.page_for_agent(agent, parentId) if parentId else None
        twin = selectors.sibling_titled_for_agent(agent, parent, title)
        version = agent_page_create(
            agent=agent,
            title=title,
            markdown=markdown,
            parent=parent,
            tags=tags,
            change_summary=changeSummary or "",
        )
        self._written(version)
        self._touched(version.page, versions=[version.number])
        result = _checked(_write_result(version, None), version, agent)
        if twin is not None:
            # Not refused: a person reviews the new page anyway, and may want both.
            result["warning"] = (
                f"A page titled {twin.title!r} ({twin.public_id}, {selectors.agent_path(twin)}) "
                "is already in your set at the same place. If you meant to change it, call "
                "get_page_source and update_page on it instead; the reviewer sees both and may "
                "reject this new page."
            )
        return result

    # Nothing is lost: the proposal waits for review and every version is kept.
    @tool("Propose a new version of a page", read_only=False, destructive=False, idempotent=True)
    def update_page(
        self,
        pageId: PageId,
        changeSummary: ChangeSummary,
        markdown: Annotated[str | None, Field(description="The whole new body.")] = None,
        title: str | None = None,
        tags: Annotated[list[str] | None, Field(description="The complete new list.")] = None,
        baseVersion: BaseVersion = None,
    ) -> WriteResult:
        """Propose a page's whole new text (not a patch): call get_page_source first, send
        the complete markdown with its liveVersion as baseVersion (or only a new title or tags).
        It waits for approval and withdraws your earlier waiting proposal; if the page changed
        since, a reviewer merges the two.
        """
        return self._propose(
            pageId,
            kind=VersionKind.REPLACE,
            change_summary=changeSummary,
            body=markdown,
            title=title,
            tags=tags,
            base_version=baseVersion,
            read_first=True,
        )

    @tool("Propose small edits to a page", read_only=False, destructive=False, idempotent=False)
    def edit_page(
        self,
        pageId: PageId,
        edits: Annotated[
            list[EditIn],
            Field(description="Applied in order; newText may be empty.", min_length=1),
        ],
        changeSummary: ChangeSummary,
        baseVersion: BaseVersion = None,
    ) -> WriteResult:
        """Propose small changes: each edit replaces one exact oldText, copied from
        get_page_source and occurring once in the page; edits apply in order. Like update_page
        it waits for approval; changed lists the lines changed. An oldText found 0 or several
        times stores nothing; the error shows where.
        """
        agent = self._agent()
        validate_change_summary(changeSummary, required=True)
        page = selectors.page_source_for_agent(agent, pageId)
        draft = selectors.own_pending_proposal(agent, page)
        live = page.live_version
        if draft is not None and draft.kind == VersionKind.APPEND:
            source = _appended(live.body if live else "", draft.proposed_body)
        else:
            source = (draft or live).body  # type: ignore[union-attr]
        edited = apply_edits(source, edits)
        # The result is an ordinary replace proposal: the same base, stale and review rules.
        written = self._propose(
            pageId,
            kind=VersionKind.REPLACE,
            change_summary=changeSummary,
            body=edited,
            base_version=baseVersion,
        )
        written["changed"] = changed_lines(source, edited)
        return written

    @tool("Propose an addition to a page", read_only=False, destructive=False, idempotent=False)
    def append_to_page(
        self,
        pageId: PageId,
        markdown: str,
        changeSummary: ChangeSummary,
    ) -> WriteResult:
        """Propose adding markdown at the end of a page, keeping all that is there; better
        than update_page when you only add: it never conflicts. If your earlier proposal on the
        page waits, the new one carries it first.
        """
        return self._propose(
            pageId, kind=VersionKind.APPEND, change_summary=changeSummary, body=markdown
        )

    @tool("Search (ChatGPT connectors)", read_only=True)
    def search(
        self, query: Annotated[str, Field(description="Words or a question.")]
    ) -> ConnectorSearchResult:
        """Search your team's wiki pages, as search_pages does, for ChatGPT's deep research
        and company knowledge: at most 8 pages, best first; pass a result's id to fetch."""
        found = self.search_pages(query)
        return {
            "results": [
                {"id": hit["pageId"], "title": hit["title"], "url": page_url(hit["pageId"])}
                for hit in found["results"]
            ]
        }

    @tool("Fetch a page (ChatGPT connectors)", read_only=True)
    def fetch(
        self,
        id: Annotated[str, Field(description="An id from search, or one a fetched text names.")],
    ) -> ConnectorDocument:
        """Fetch a wiki page by an id from search, as get_page reads it: its text, title and
        address. A long page's text ends with its sections' ids: fetch one to read it."""
        page_id, _, section = id.partition("#")
        packed = self.get_page(page_id, section=section or None)
        return {
            "id": id,
            "title": packed["title"],
            "text": _connector_text(packed),
            "url": page_url(packed["pageId"]),
            "metadata": {
                key: packed[key]  # type: ignore[literal-required]
                for key in ("path", "versionNumber", "updated", "tags", "instructions")
                if packed[key]  # type: ignore[literal-required]
            },
        }

    def _propose(
        self,
        page_id: str,
        *,
        kind: str,
        change_summary: str,
        body: str | None,
        title: str | None = None,
        tags: list[str] | None = None,
        base_version: int | None = None,
        read_first: bool = False,
    ) -> WriteResult:
        agent = self._agent()
        change_summary = validate_change_summary(change_summary, required=True)
        page = selectors.page_source_for_agent(agent, page_id)
        earlier = selectors.own_pending_proposal(agent, page)
        own_draft = earlier is not None and earlier.kind == VersionKind.REPLACE
        if kind == VersionKind.REPLACE and base_version is None and not own_draft:
            # What the agent saw last, not what is live now: a person may have published
            # since, and the proposal must not silently undo that.
            base_version = selectors.last_read_live_version(agent, page)
            if base_version is None and read_first and page.live_version_id is not None:
                raise _blind_replace(page_id, body=body, title=title, tags=tags)
        version = version_propose(
            actor=agent,
            page=page,
            kind=kind,
            body=body,
            title=title,
            tags=tags,
            change_summary=change_summary,
            base_number=base_version,
        )
        self._written(version)
        self._touched(page, versions=[version.number])
        result = _write_result(
            version,
            earlier.number if earlier is not None else None,
            carried=kind == VersionKind.APPEND,
        )
        return _checked(result, version, agent)


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
