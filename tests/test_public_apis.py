"""Quire uses its libraries through their public APIs (issue 50): a scan of first-party code
for the private names it once used, and the pin of the one written exception
(docs/decisions.md, "Libraries only through their public APIs")."""

from __future__ import annotations

import inspect
import re

from oauth2_provider.cimd import SafeMetadataFetcher

from tests.conftest import PROJECT_ROOT

PRIVATE = re.compile(
    r"\._cache\.get_client|\._servers\b|\._serializer\b|_csp_update|_read_document"
    r"|_prefetched_objects_cache|\.as_sql\(\)|_get_connection_pool|\._client\("
)
# file -> the private names it may use, and why (docs/decisions.md).
ALLOWED = {
    "connect/client_documents.py": {"_read_document"},  # the one exception, pinned below
}
APPS = ("agents", "config", "connect", "content", "core", "inbox", "people", "reviews", "wiki")


def test_it_uses_no_private_name_of_a_library_but_the_written_exceptions() -> None:
    found: dict[str, set[str]] = {}
    for app in APPS:
        for path in (PROJECT_ROOT / app).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            names = set(PRIVATE.findall(path.read_text()))
            if names:
                found[path.relative_to(PROJECT_ROOT).as_posix()] = names
    for file, names in found.items():
        assert names <= ALLOWED.get(file, set()), f"{file} uses {names - ALLOWED.get(file, set())}"


def test_the_fetcher_still_hands_the_response_to_read_document() -> None:
    """The exception: Quire bounds the body's reads by overriding `_read_document`; a library
    that stops calling it (or changes its arguments) would silently lose the deadline."""
    fetch = inspect.getsource(SafeMetadataFetcher.fetch)
    assert "return self._read_document(response)" in fetch
    assert list(inspect.signature(SafeMetadataFetcher._read_document).parameters) == [
        "self",
        "response",
    ]
