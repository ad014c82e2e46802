"""The MCP tools' refusals and faults as the agent reads them: what to do next, never a trace."""

import difflib
import logging
from typing import Any

from pydantic import ValidationError

from agents.mcp_outputs import EditIn
from core.errors import InvalidArgument
from core.json_output import pretty_json
from wiki.validators import (
    check_text,
)

logger = logging.getLogger(__name__)

DATABASE_RETRY_SECONDS = 5
DATABASE_UNAVAILABLE = (
    "the database was unavailable for a moment (restarting or busy) and nothing was stored; "
    f"call again in {DATABASE_RETRY_SECONDS} seconds."
)
INTERNAL_ERROR = (
    "internal_error: the server could not complete this call; the error was logged. "
    "Try again later."
)


def tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


# The keys of the objects inside a tool's arguments, to suggest one for a key misspelt there.
_NESTED_KEYS: dict[str, tuple[str, ...]] = {"edits": tuple(EditIn.__annotations__)}


def invalid_arguments(exc: ValidationError) -> InvalidArgument:
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


def saved_anyway(written: dict[str, Any]) -> dict[str, Any]:
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


def text_problem(arguments: dict[str, Any]) -> InvalidArgument | None:
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
