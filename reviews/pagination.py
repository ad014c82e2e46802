"""REST API pagination (its own module: DRF imports the pagination class while it loads)."""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request


class StrictLimitOffsetPagination(LimitOffsetPagination):
    """`limit` and `offset` as the schema declares them: a value out of range is a 400, not
    silently replaced by the default (which would answer a different question)."""

    max_limit = 200
    max_offset = 10**9

    def _parameter(self, request: Request, name: str, low: int, high: int) -> int | None:
        raw = request.query_params.get(name)
        if raw is None:
            return None
        try:
            value = int(raw)
        except ValueError:
            value = low - 1
        if not low <= value <= high:
            raise exceptions.ValidationError({name: f"Give a whole number from {low} to {high}."})
        return value

    def get_limit(self, request: Request) -> int | None:
        limit = self._parameter(request, self.limit_query_param, 1, self.max_limit)
        return limit if limit is not None else self.default_limit

    def get_offset(self, request: Request) -> int:
        return self._parameter(request, self.offset_query_param, 0, self.max_offset) or 0

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        limits = {
            self.limit_query_param: (1, self.max_limit, "How many results to return."),
            self.offset_query_param: (0, self.max_offset, "How many results to skip."),
        }
        return [
            {
                "name": name,
                "required": False,
                "in": "query",
                "description": description,
                "schema": {"type": "integer", "minimum": low, "maximum": high},
            }
            for name, (low, high, description) in limits.items()
        ]
