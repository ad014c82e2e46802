"""The review-volume bench's own logic without Chromium (bench/review_volume.py): the sixty
changes it plans on the 18F handbook are of the kinds it says, as Quire classes them, and its
check finds an approval whose change the reviewer was not shown."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from agents.models import Agent
from bench import review_volume as bench
from content.importer import split_frontmatter
from reviews.actions.decide import version_approve
from reviews.actions.propose import version_propose
from reviews.classify import classify_text
from reviews.shown import diffs_shown_record
from wiki.models import Page

# The classes Quire gives each planned kind (reviews/classify.py).
CLASSED = {
    "wording": ["wording"],
    "addition": ["additions"],
    "removal": ["removal"],
    "number": ["wording", "numbers"],
    "heading": ["wording", "structure"],
    "new_page": ["new_page"],
}


def handbook() -> list[tuple[str, str, str]]:
    rows = []
    for path in sorted(bench.HANDBOOK.rglob("*.md")):
        meta, body = split_frontmatter(path.read_text(encoding="utf-8"))
        rows.append((str(path), str(meta.get("title") or path.stem), body.strip() + "\n"))
    return rows


def applied(tool: str, arguments: dict[str, object], body: str) -> tuple[str | None, str]:
    """The page's text before and after the change, as the tool's proposal makes it."""
    if tool == "create_page":
        return None, str(arguments["markdown"])
    if tool == "append_to_page":
        return body, body.rstrip("\n") + "\n\n" + str(arguments["markdown"]) + "\n"
    edits = arguments["edits"]
    assert isinstance(edits, list) and len(edits) == 1
    return body, body.replace(edits[0]["oldText"], edits[0]["newText"], 1)


def test_it_plans_sixty_changes_of_the_kinds_it_says_on_distinct_pages() -> None:
    pages = handbook()
    planned = bench.plan(pages)
    bodies = {page_id: body for page_id, _, body in pages}

    assert len(planned) == 60
    assert len({p.page_id for p in planned}) == 60
    assert Counter(p.kind for p in planned) == Counter(bench.KINDS)
    assert Counter(p.agent for p in planned) == {n: 10 for n in range(bench.AGENTS)}
    assert Counter(p.kind for p in planned if p.reject) == Counter(bench.REJECTED)
    for p in planned:
        tool, arguments = bench.change_for(p.kind, bodies[p.page_id], p.title, p.agent)
        before, after = applied(tool, arguments, bodies[p.page_id])
        assert classify_text(before, after).classes == CLASSED[p.kind], (p, arguments)


def test_a_page_with_nothing_to_change_that_way_is_passed_over() -> None:
    with pytest.raises(ValueError, match="heading"):
        bench.change_for("heading", "Only a line of text, with no heading at all.\n", "T", 0)


@pytest.mark.django_db
def test_the_check_finds_an_approval_whose_change_was_not_shown(
    make_page: Callable[..., Page], reviewer: User
) -> None:
    agent = Agent.objects.create(name="bench-bot", can_edit_pages=True)
    shown = version_propose(
        actor=agent, page=make_page("Shown", "Open 9 to 5.\n"), body="Open 9 to 6.\n"
    )
    unshown = version_propose(
        actor=agent, page=make_page("Unshown", "Open 9 to 5.\n"), body="Open 8 to 5.\n"
    )
    shown = type(shown).objects.select_related("page__live_version").get(pk=shown.pk)
    diffs_shown_record(viewer=reviewer, versions=[shown], where="page")
    for version in (shown, unshown):
        version_approve(actor=reviewer, version=version)

    assert bench.unshown_approvals(reviewer) == ["Unshown v2"]
