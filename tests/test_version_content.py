"""A version made from another (a move, a revert) carries all of what it says: the list of a
Version's content fields is written once, `Version.CONTENT_FIELDS` (issue 50 point 5), and the
merge's staleness reads the same list."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from reviews import merge
from reviews.actions.revert import page_revert
from tests.conftest import live
from wiki import services as wiki_services
from wiki.models import Page, Version

pytestmark = pytest.mark.django_db


def _content(version: Version) -> dict[str, object]:
    return {name: getattr(version, name) for name in Version.CONTENT_FIELDS}


def test_a_move_and_a_revert_carry_every_content_field(
    make_page: Callable[..., Page], editor: User
) -> None:
    folder = make_page("Folder")
    page = make_page("Leave", "Ask first.\n", tags=["hr", "leave"], instructions="Keep it short.")
    first = live(page)

    moved = wiki_services.page_move(actor=editor, page=page, parent=folder)
    assert _content(moved) == {**_content(first), "parent_id": folder.pk}
    assert moved.proposed_body == first.body

    page.refresh_from_db()
    reverted = page_revert(actor=editor, page=page, to_version=first)
    # A revert puts the page back where that version had it, too.
    assert _content(reverted) == _content(first)
    assert reverted.proposed_body == first.body


def test_staleness_reads_the_one_list() -> None:
    assert merge.CONTENT_FIELDS is Version.CONTENT_FIELDS
    assert set(Version.CONTENT_FIELDS) == {"title", "body", "tags", "parent_id", "instructions"}
