"""Domain errors shared by every entry point (web, REST, MCP, commands).

Each carries a machine code (the MCP error codes) and a sentence for a person or agent
that says what went wrong and what to do next.
"""

from typing import Any


class QuireError(Exception):
    code = "invalid_argument"
    http_status = 400

    def __init__(self, message: str, *, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail or {}

    def __str__(self) -> str:
        return self.message


class InvalidArgument(QuireError):
    code = "invalid_argument"
    http_status = 400

    def __init__(
        self, message: str, *, field: str = "", detail: dict[str, Any] | None = None
    ) -> None:
        super().__init__(message, detail=detail)
        self.field = field


class NotFound(QuireError):
    code = "not_found"
    http_status = 404


class Forbidden(QuireError):
    code = "forbidden"
    http_status = 403


class Conflict(QuireError):
    code = "conflict"
    http_status = 409


class RateLimited(QuireError):
    code = "rate_limited"
    http_status = 429


class TryAgain(QuireError):
    """Too busy or too slow this time, and worth retrying: REST 503 with Retry-After, MCP
    `rate_limited` (the agent's next step is the same: wait, then call again)."""

    code = "rate_limited"
    http_status = 503

    def __init__(self, message: str, *, retry_after: int = 5) -> None:
        super().__init__(message)
        self.retry_after = retry_after
