"""JSON request bodies with a bound on nesting, for every door that reads JSON (REST and MCP).

Python's parser gives up with a RecursionError (a 500) somewhere near 1,000 levels, and deep
values cost every later step that walks them; no request Quire takes needs more than a few.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

MAX_DEPTH = 64


class TooDeep(ParseError):
    default_detail = (
        f"the JSON body nests arrays and objects more than {MAX_DEPTH} levels deep; send a "
        "flatter document (lists of strings, objects of plain values)."
    )
    default_code = "too_deep"


def nesting_depth(value: Any, *, limit: int = MAX_DEPTH) -> int:
    """How many arrays and objects deep `value` goes, counted without recursion and only up to
    one past `limit`."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            break
        pending.extend((child, depth) for child in children)
    return deepest


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing values nested deeper than MAX_DEPTH with a ParseError."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise TooDeep() from None
        if nesting_depth(data) > MAX_DEPTH:
            raise TooDeep()
        return data
