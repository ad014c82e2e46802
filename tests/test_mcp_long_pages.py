"""Long pages cost what the change costs: outlines, one section at a time, and edits that
show the lines they changed (search hits name their section: tests/test_search*.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import markdown as python_markdown
import pytest
from mcp.types import TextContent

from bench.one_line_fix import BUDGET_TOKENS, largest_handbook_page, line_to_fix, one_line_fix
from wiki.models import Page, Version
from wiki.outline import headings

from .conftest import HANDBOOK
from .fixtures_mcp import MCP, AgentKey
from .prerequisites import require_corpus

pytestmark = pytest.mark.django_db(transaction=True)

MakePage = Callable[..., Page]

FILLER = "".join(
    f"Line {n} of the notes about the office, kept for the record.\n" for n in range(70)
)


def long_page_text() -> str:
    """About 30,000 characters: a lead, ATX and setext headings, and a fenced block whose
    `#` lines are code, not headings."""
    parts = ["Welcome to the handbook.\n\n"]
    for chapter in range(1, 4):
        parts.append(f"# Chapter {chapter}\n\n{FILLER}\n")
        parts.append(f"## Rules {chapter}\n\n{FILLER}\n")
        parts.append(f"Details {chapter}\n----------\n\n{FILLER}\n")
    parts.append("```\n# not a heading\n```\n\n## Contacts\n\nAsk the office manager.\n")
    return "".join(parts)


def text_of(result: Any) -> str:
    (item,) = result.content
    assert isinstance(item, TextContent)
    return item.text


def test_it_parses_headings_as_python_markdown_renders_them() -> None:
    text = (
        "Intro\n\n# One #\n\nTitle\n=====\n\nSub\n---\ntext\n\n```\n# code\n```\n\n"
        "    # indented code\n\n~~~~\n## code too\n~~~~\n\n#No space\n\n###### Six\n\n"
        "para\nstill para\n---\n"
    )
    found = [(h.text, h.level, h.line) for h in headings(text)]
    assert found == [
        ("One", 1, 3),
        ("Title", 1, 5),
        ("Sub", 2, 8),
        ("No space", 1, 22),
        ("Six", 6, 24),
    ]
    rendered = python_markdown.markdown(text, extensions=["fenced_code"])
    assert re.findall(r"<h([1-6])>", rendered) == [str(level) for _, level, _ in found]


def test_it_returns_a_long_page_as_its_outline_from_both_read_tools(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    body = long_page_text()
    assert len(body) > 24_000
    page = make_page("Handbook", body)
    editor_agent.give(page)
    source = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id)
    assert source["truncated"] is True
    assert source["markdown"] == "Welcome to the handbook.\n\n"
    sections = source["sections"]
    assert [s["heading"] for s in sections[:3]] == ["Chapter 1", "Rules 1", "Details 1"]
    assert sections[0] == {
        "heading": "Chapter 1",
        "level": 1,
        "line": 3,
        "chars": sections[0]["chars"],
    }
    assert [s["level"] for s in sections[:3]] == [1, 2, 2]
    assert sections[-1]["heading"] == "Contacts"
    assert "not a heading" not in [s["heading"] for s in sections]
    lines = body.split("\n")
    for item in sections:
        assert item["heading"] in lines[item["line"] - 1]
    # A chapter holds its subsections: its size runs to the next chapter.
    assert sections[0]["chars"] == body.index("# Chapter 2") - body.index("# Chapter 1")
    packed = mcp.ok(editor_agent, "get_page", pageId=page.public_id)
    assert packed["truncated"] is True and packed["content"] == "Welcome to the handbook.\n\n"
    assert packed["sections"] == sections
    assert len(json.dumps(packed)) < 24_000


def test_it_keeps_only_2000_characters_before_the_first_heading(
    mcp: MCP, make_page: MakePage, reader_agent: AgentKey
) -> None:
    page = make_page("Wall of text", FILLER * 8 + "\n# Finally\n\nEnd.\n")
    reader_agent.give(page)
    packed = mcp.ok(reader_agent, "get_page", pageId=page.public_id)
    assert packed["truncated"] is True
    assert 0 < len(packed["content"]) <= 2_000 and packed["content"].endswith("\n")
    assert packed["sections"] == [
        {"heading": "Finally", "level": 1, "line": 562, "chars": len("# Finally\n\nEnd.\n")}
    ]


def test_it_returns_one_section_alone_with_its_line_range(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    body = long_page_text()
    page = make_page("Handbook", body)
    editor_agent.give(page)
    part = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id, section="Details 2")
    start = body.index("Details 2\n")
    end = body.index("# Chapter 3")
    assert part["markdown"] == body[start:end]
    assert "truncated" not in part and "sections" not in part
    first = body[:start].count("\n") + 1
    assert part["section"] == {
        "heading": "Details 2",
        "level": 2,
        "line": first,
        "lastLine": first + body[start:end].count("\n") - 1,
        "chars": end - start,
    }
    assert part["liveVersion"] == 1
    read = mcp.ok(editor_agent, "get_page", pageId=page.public_id, section="contacts")
    assert read["content"] == "## Contacts\n\nAsk the office manager.\n"
    assert read["section"]["heading"] == "Contacts"
    small = make_page("Short", "# A\n\nx\n\n# B\n\ny\n")
    editor_agent.give(small)
    assert mcp.ok(editor_agent, "get_page", pageId=small.public_id, section="B")["content"] == (
        "# B\n\ny\n"
    )


def test_it_refuses_a_missing_or_ambiguous_section_with_what_to_do(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    page = make_page("Twice", "# Notes\n\nOne.\n\n# Other\n\n# Notes\n\nTwo.\n")
    editor_agent.give(page)
    missing = mcp.error(editor_agent, "get_page_source", pageId=page.public_id, section="Nope")
    assert missing.startswith("invalid_argument: this page has no section headed 'Nope'")
    twice = mcp.error(editor_agent, "get_page", pageId=page.public_id, section="Notes")
    assert twice.startswith("invalid_argument: 2 sections are headed 'Notes' (at lines 1, 7)")
    second = mcp.ok(editor_agent, "get_page", pageId=page.public_id, section="7")
    assert second["content"] == "# Notes\n\nTwo.\n"


def test_it_edits_from_a_sections_text_and_shows_the_changed_lines(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    body = long_page_text()
    page = make_page("Handbook", body)
    editor_agent.give(page)
    part = mcp.ok(editor_agent, "get_page_source", pageId=page.public_id, section="Rules 3")
    # "Line 5 of the notes" occurs in every section: quoted alone it is ambiguous.
    ambiguous = mcp.error(
        editor_agent,
        "edit_page",
        pageId=page.public_id,
        edits=[{"oldText": "Line 5 of the notes", "newText": "Line five of the notes"}],
        changeSummary="Spell it out.",
    )
    assert ambiguous.startswith("invalid_argument: the oldText of the edit occurs 9 times")
    assert Version.objects.filter(page=page).count() == 1
    old = "## Rules 3\n\nLine 0 of the notes"
    assert old in part["markdown"]
    written = mcp.ok(
        editor_agent,
        "edit_page",
        pageId=page.public_id,
        edits=[{"oldText": old, "newText": "## Rules 3\n\nLine zero of the notes"}],
        changeSummary="Spell it out.",
    )
    line = part["section"]["line"] + 2
    assert written["changed"] == [
        {
            "line": line,
            "before": "Line 0 of the notes about the office, kept for the record.",
            "after": "Line zero of the notes about the office, kept for the record.",
        }
    ]
    proposal = Version.objects.get(page=page, number=written["versionNumber"])
    assert proposal.body.split("\n")[line - 1].startswith("Line zero")
    assert proposal.base_version is not None and proposal.base_version.number == 1


def test_a_one_line_fix_to_the_largest_handbook_page_costs_under_3000_tokens(
    mcp: MCP, make_page: MakePage, editor_agent: AgentKey
) -> None:
    require_corpus(HANDBOOK)
    title, body = largest_handbook_page()
    assert len(body) > 40_000
    page = make_page(title, body)
    editor_agent.give(page)

    def call(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        result = mcp.call(editor_agent, tool, **arguments)
        assert not result.isError, text_of(result)
        assert result.structuredContent is not None
        return text_of(result), result.structuredContent

    answers, written = one_line_fix(call, page.public_id, body)
    target = line_to_fix(body)
    wrong = body.split("\n")[target - 1]
    assert json.loads(answers[0])["truncated"] is True
    assert written["changed"] == [{"line": target, "before": wrong, "after": wrong + " (checked)"}]
    proposal = Version.objects.get(page=page, number=written["versionNumber"])
    assert proposal.body == body.replace(wrong, wrong + " (checked)", 1)
    tokens = sum(len(text) for text in answers) / 4
    assert tokens <= BUDGET_TOKENS, tokens
