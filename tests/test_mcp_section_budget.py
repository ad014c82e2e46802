"""A one-line fix within budget on any page (issue 49, point 6): a section over the budget
comes as its own outline or its first lines, so fixing one line of a long handbook page costs
at most 12,000 characters of answers; get_page's maxChars limits the whole answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from bench.one_line_fix import largest_handbook_page, one_line_fix
from wiki.models import Page, Version

from .fixtures_mcp import MCP, AgentKey
from .prerequisites import require_corpus
from .test_mcp_long_pages import HANDBOOK, text_of

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]
FIX_BUDGET = 12_000


def test_a_one_line_fix_inside_a_section_over_the_budget_costs_at_most_12000_characters(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    require_corpus(HANDBOOK)
    title, body = largest_handbook_page()
    page = make_page(title, body)
    editor_agent.give(page)
    # A line in the page's largest top-level section (17,697 characters of the travel FAQ).
    outline = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    largest = max(
        (s for s in outline["sections"] if s["level"] == outline["sections"][0]["level"]),
        key=lambda s: s["chars"],
    )
    assert largest["chars"] > FIX_BUDGET
    lines = body.split("\n")
    line = next(
        n
        for n in range(largest["line"] + 40, len(lines))
        if len(lines[n - 1]) > 40 and body.count(lines[n - 1]) == 1
    )

    def call(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result = mcp.call(editor_agent, tool, **arguments)
        assert not result.isError, text_of(result)
        return text_of(result), json.loads(text_of(result))

    answers, written = one_line_fix(call, page.public_id, body, line)

    assert len(answers) == 4  # the outline, the section's outline, its subsection, the edit
    assert sum(len(text) for text in answers) <= FIX_BUDGET, [len(a) for a in answers]
    wrong = lines[line - 1]
    proposal = Version.objects.get(page=page, number=written["versionNumber"])
    assert proposal.body == body.replace(wrong, wrong + " (checked)", 1)


def test_a_long_section_without_headings_comes_in_lines_that_read_on(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    require_corpus(HANDBOOK)
    _, body = largest_handbook_page()
    # The whole FAQ as one section: its headings turned into bold lines.
    wall = re.sub(r"^#+ (.*)$", r"**\1**", body, flags=re.M)
    page = make_page("Travel, all in one", f"Read first.\n\n# Everything\n\n{wall}")
    editor_agent.give(page)

    first = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id, section="Everything")

    assert first["section"]["heading"] == "Everything" and first["truncated"] is True
    assert first["lines"]["line"] == 3
    last = first["section"]["lastLine"]
    assert first["lines"]["next"] == f"{first['lines']['lastLine'] + 1}-{last}"
    assert len(json.dumps(first, indent=2, ensure_ascii=False)) <= 7_000
    read = first["markdown"]
    answer = first
    while "next" in answer["lines"]:
        answer = mcp.ok(
            editor_agent, "get_page_source", pageId=page.public_id, section=answer["lines"]["next"]
        )
        assert len(json.dumps(answer, indent=2, ensure_ascii=False)) <= 7_000
        read += answer["markdown"]
    assert read == page.live_version.body.split("\n", 2)[2]  # type: ignore[union-attr]


def test_a_line_range_outside_the_page_is_refused_with_its_length(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Short", "One.\nTwo.\nThree.\n")
    editor_agent.give(page)
    error = mcp.error(editor_agent, "get_page", pageId=page.public_id, section="9-12")
    assert error.startswith("invalid_argument: lines 9-12 are not in this page, which has 4")
    assert mcp.ok(editor_agent, "get_page", pageId=page.public_id, section="2-3")["content"] == (
        "Two.\nThree.\n"
    )


@pytest.mark.parametrize("max_chars", [3_000, 8_000])
def test_max_chars_limits_the_whole_answer_of_get_page(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey, max_chars: int
) -> None:
    require_corpus(HANDBOOK)
    _, body = largest_handbook_page()
    page = make_page("Travel FAQ", body[:10_000])
    reader_agent.give(page)

    result = mcp.call(reader_agent, "get_page", pageId=page.public_id, maxChars=max_chars)

    assert len(text_of(result)) <= max_chars  # 10,3xx before: it limited only includes
    packed = json.loads(text_of(result))
    assert packed["truncated"] is True and packed["sections"]
    whole = mcp.ok(reader_agent, "get_page", pageId=page.public_id)
    assert whole["content"] == body[:10_000] and "truncated" not in whole
