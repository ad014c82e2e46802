"""Full-text search over live versions (placeholder interface; see issue 2 item 4)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wiki.models import Page


@dataclass(frozen=True)
class SearchHit:
    page_id: int
    public_id: str
    title: str
    path: str
    excerpt: str  # plain text, with the matched terms wrapped in [[[ and ]]]
    score: float


def index_page(page: Page) -> None:
    """Bring the index row of `page` in line with its live version (or drop it)."""


def remove_page(page: Page) -> None:
    """Drop `page` from the index (archived, or no live version)."""


def search_pages(
    query: str, *, page_ids: Iterable[int] | None = None, limit: int = 20
) -> list[SearchHit]:
    return []
