"""Token values: prefixed so that a leaked one is recognisable (and /mcp knows which lookup
to use), random enough to guess never. Only their SHA-256 is stored."""

from __future__ import annotations

import secrets
from typing import Any

ACCESS_TOKEN_PREFIX = "qo_"  # noqa: S105 (a label, not a secret)
REFRESH_TOKEN_PREFIX = "qr_"  # noqa: S105


def new_access_token(request: Any = None) -> str:
    return ACCESS_TOKEN_PREFIX + secrets.token_urlsafe(32)


def new_refresh_token(request: Any = None) -> str:
    return REFRESH_TOKEN_PREFIX + secrets.token_urlsafe(32)


def is_oauth_access_token(token: str) -> bool:
    return token.startswith(ACCESS_TOKEN_PREFIX)
