"""The JSON every MCP answer carries as text: pretty-printed (indent 2), fast."""

from __future__ import annotations

import json
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any


def pretty_json(value: Any) -> str:
    """Exactly `json.dumps(value, indent=2, ensure_ascii=False)`, about twice as fast.

    With an indent the json module gives up its C encoder for a pure-Python one, which
    spends tens of milliseconds on a browse result of thousands of pages.
    """
    parts: list[str] = []
    try:
        _pretty(value, parts, "\n")
    except _NotPlainJSON:
        return json.dumps(value, indent=2, ensure_ascii=False)
    return "".join(parts)


class _NotPlainJSON(Exception):
    """A value the fast printer leaves to the json module (non-string keys, other types)."""


def _pretty(value: Any, out: list[str], newline: str) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(json.dumps(value))
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        separator, next_separator = "{" + inner, "," + inner
        for key, item in value.items():
            if not isinstance(key, str):
                raise _NotPlainJSON
            out.append(separator)
            out.append(encode_basestring(key))
            out.append(": ")
            # Strings and flags are most values: written here rather than by a call.
            if type(item) is str:
                out.append(encode_basestring(item))
            elif item is True or item is False:
                out.append("true" if item else "false")
            else:
                _pretty(item, out, inner)
            separator = next_separator
        out.append(newline + "}")
    elif isinstance(value, list | tuple):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        separator, next_separator = "[" + inner, "," + inner
        for item in value:
            out.append(separator)
            if type(item) is str:
                out.append(encode_basestring(item))
            else:
                _pretty(item, out, inner)
            separator = next_separator
        out.append(newline + "]")
    else:
        raise _NotPlainJSON
