"""Skip a test whose outside dependency is missing, except where CI says it is required.

Locally a test that needs Chromium, a Celery worker with Redis, PostgreSQL (the `postgres`
marker) or the shared corpora (../shared/corpus, or QUIRE_CORPUS) is skipped with a reason. CI
exports QUIRE_REQUIRE_BROWSER=1 and QUIRE_REQUIRE_CORPUS=1, and QUIRE_REQUIRE_CELERY=1 and
QUIRE_REQUIRE_POSTGRES=1 in its PostgreSQL run; then the same test fails instead, so a broken
CI machine (or a clone with no corpus beside it) can never turn into a quietly green run.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest

BROWSER = "BROWSER"
CELERY = "CELERY"
POSTGRES = "POSTGRES"
PGVECTOR = "PGVECTOR"
CORPUS = "CORPUS"


def required(what: str) -> bool:
    return os.environ.get(f"QUIRE_REQUIRE_{what}", "").strip().lower() in {"1", "true", "yes"}


def require(what: str, available: bool, reason: str) -> None:
    """Skip (or, when QUIRE_REQUIRE_<WHAT> is set, fail) unless `available`."""
    if available:
        return
    if required(what):
        pytest.fail(f"{reason} (QUIRE_REQUIRE_{what}=1, so this is a failure, not a skip)")
    pytest.skip(reason)


def require_corpus(path: Path) -> None:
    """Skip (or, with QUIRE_REQUIRE_CORPUS=1, fail) unless the shared corpus `path` is there."""
    require(
        CORPUS,
        path.exists(),
        f"the shared corpus is not at {path} "
        "(QUIRE_CORPUS names the folder that holds 18f-handbook/ and tldr-pages.tar.gz)",
    )


def reachable(url: str, *, timeout: float = 1.0) -> bool:
    """Whether something accepts TCP connections at the host and port of `url`."""
    parsed = urlparse(url)
    if not parsed.hostname:
        return False
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 6379), timeout=timeout):
            return True
    except OSError:
        return False
