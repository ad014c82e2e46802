"""A long page is found by what its later sections say: PostgreSQL keeps word positions only up
to 16,383 in a tsvector (later words all sat at 16,383), so a phrase past that point could not
match by position (wiki/migrations/0024_search_long_body_positions.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wiki.models import Page
from wiki.search import search_pages

pytestmark = pytest.mark.django_db

# About 25,000 words before the last section (150,000 characters, under the 200,000 a page
# may hold): far past the 16,383rd position.
FILLER = "\n\n".join(
    f"## Part {n}\n\n" + " ".join(["lorem ipsum dolor sit amet"] * 100) for n in range(50)
)
LAST = "## Rollback drill\n\nThe quarterly rollback drill restores yesterday's snapshot.\n"


def test_a_phrase_in_a_late_section_of_a_long_page_is_found(
    make_page: Callable[..., Page],
) -> None:
    body = FILLER + "\n\n" + LAST
    assert len(body.split()) > 25_000
    page = make_page("Operations handbook", body)

    hits = search_pages('"quarterly rollback drill"')

    assert [hit.page_id for hit in hits] == [page.pk]


def test_the_words_of_a_late_section_are_found_with_their_section(
    make_page: Callable[..., Page],
) -> None:
    page = make_page("Operations handbook", FILLER + "\n\n" + LAST)

    hits = search_pages("rollback snapshot")

    assert [hit.page_id for hit in hits] == [page.pk]
