"""What every MCP tool method shares: its declaration (title and hints) and its notes for the
call's audit row."""

from collections.abc import Callable
from typing import Any, TypeVar

from mcp.types import ToolAnnotations

from agents.mcp_answers import write_result
from agents.mcp_audit import current_call
from agents.models import Agent
from agents.services import page_read_statement
from wiki.models import Page, Version

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


class ToolBase:
    """The tools' shared helpers; `PageTools` (agents/mcp.py) is the toolset."""

    request: Any

    def _agent(self) -> Agent:
        agent: Agent | None = getattr(self.request, "quire_agent", None)
        assert agent is not None, "the MCP view authenticates every request"
        return agent

    def _read(self, agent: Agent, page_id: int, version_number: int) -> None:
        """Record the live version the agent read: the base of its next replace. Not for
        the admin's preview of what the agent sees (a GET, which never writes): those reads
        were the admin's, and would let the agent's later blind update_page through."""
        call = current_call.get(None)
        if call is not None and not getattr(self.request, "quire_preview", False):
            # Written with the call's audit row, in its one commit (`record_call`).
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
        call = current_call.get(None)
        if call is not None:
            call.touched(page, page_ids=page_ids, versions=versions)
            call.read_live = read_live if read_live is not None else call.read_live

    def _written(self, version: Version) -> None:
        call = current_call.get(None)
        if call is not None:
            call.written = dict(write_result(version, None))

    def _note(self, **extra: Any) -> None:
        call = current_call.get(None)
        if call is not None:
            call.extra.update(extra)
