"""One MCP call's record: what it touched, and its audit row with no credential in it."""

import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from agents.models import Agent
from core.audit import Along, audit_record
from core.errors import QuireError
from wiki.credentials import holds_credential
from wiki.models import Page


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


current_call: ContextVar[ToolCall] = ContextVar("quire_tool_call")


def record_call(call: ToolCall) -> None:
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


def loggable(arguments: dict[str, Any]) -> dict[str, Any]:
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
