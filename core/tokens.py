"""How every secret Quire hands out (agent tokens, REST keys) is kept: by its SHA-256 only, so
a copy of the database holds no usable key."""

from __future__ import annotations

import hashlib


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()
