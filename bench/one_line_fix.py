"""Tokens of a one-line fix: what an agent reads to correct one line of a long page.

    python bench/one_line_fix.py

Builds a throwaway SQLite database with the largest page of the 18F handbook
(../shared/corpus, or QUIRE_CORPUS), and plays the agent through /mcp: get_page_source (the
outline), get_page_source with the outermost section that holds the line and on (that
section's outline, its next lines) until the line is shown, edit_page. Tokens are the
characters of every answer the agent receives, divided by 4. tests/test_mcp_long_pages.py
plays the same steps (`one_line_fix`) through the official MCP client and holds the budget.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = Path(os.environ.get("QUIRE_CORPUS", ROOT.parent / "shared" / "corpus"))
HANDBOOK = CORPUS / "18f-handbook" / "pages"
BUDGET_TOKENS = 3_000

# A tool call as the agent makes it: (tool, arguments) -> (the answer's text, its JSON).
Call = Callable[[str, dict[str, Any]], tuple[str, dict[str, Any]]]


def largest_handbook_page() -> tuple[str, str]:
    """The title and body of the handbook page with the longest body (frontmatter apart)."""
    from content.importer import split_frontmatter

    posts = [
        split_frontmatter(path.read_text(encoding="utf-8"))
        for path in sorted(HANDBOOK.rglob("*.md"))
    ]
    meta, body = max(posts, key=lambda post: len(post[1].strip()))
    return str(meta.get("title") or "Largest page"), body.strip() + "\n"


def line_to_fix(body: str) -> int:
    """A line past the middle of the page, long and found once: the one a reader reported."""
    lines = body.split("\n")
    return 1 + next(
        n
        for n in range(len(lines) // 2, len(lines))
        if len(lines[n]) > 40 and body.count(lines[n]) == 1
    )


def outermost_holding(sections: list[dict[str, Any]], line: int) -> dict[str, Any]:
    """The outermost listed section that holds `line`: what an agent reads first."""
    above = [s for s in sections if s["line"] <= line]
    top = min(s["level"] for s in above)
    return [s for s in above if s["level"] == top][-1]


def shows(answer: dict[str, Any], line: int) -> bool:
    """Whether a get_page_source answer's markdown holds the page's line `line`."""
    if answer.get("truncated") and "lines" not in answer:
        return False
    part = answer.get("lines") or answer.get("section")
    return part is None or part["line"] <= line <= part["lastLine"]


def one_line_fix(
    call: Call, page_id: str, body: str, target: int | None = None
) -> tuple[list[str], dict[str, Any]]:
    """The agent's steps: the outline, the outermost section holding the line, and on (that
    section's outline, its next lines) until the line is shown, then edit_page; returns every
    answer's text and the edit's result."""
    target = target or line_to_fix(body)
    wrong = body.split("\n")[target - 1]
    answers: list[str] = []
    text, answer = call("get_page_source", {"pageId": page_id})
    answers.append(text)
    while not shows(answer, target):
        part = answer["lines"]["next"] if "lines" in answer else None
        section = part or str(outermost_holding(answer["sections"], target)["line"])
        text, answer = call("get_page_source", {"pageId": page_id, "section": section})
        answers.append(text)
    assert wrong in answer["markdown"]
    text, written = call(
        "edit_page",
        {
            "pageId": page_id,
            "edits": [{"oldText": wrong, "newText": wrong + " (checked)"}],
            "changeSummary": "Mark the line as checked.",
        },
    )
    answers.append(text)
    return answers, written


def main() -> None:
    folder = tempfile.mkdtemp(prefix="quire-one-line-fix-")
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/quire.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver")
    os.environ["REDIS_URL"] = ""
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client

    from agents import services as agent_services
    from core.actors import SystemActor
    from reviews.actions.create import page_create
    from wiki.roles import EDITORS

    call_command("migrate", verbosity=0)
    editor = User.objects.create_user("editor")
    editor.groups.add(Group.objects.get_or_create(name=EDITORS)[0])
    title, body = largest_handbook_page()
    page = page_create(actor=editor, title=title, body=body, publish=True).page
    actor = SystemActor("bench")
    agent, token = agent_services.agent_create(actor=actor, name="fixer", can_edit_pages=True)
    agent_services.page_set_add(actor=actor, agent=agent, page=page, use_when=["Use it."])
    client = Client(
        HTTP_AUTHORIZATION=f"Bearer {token}", HTTP_ACCEPT="application/json, text/event-stream"
    )

    def call(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        message = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        response = client.post("/mcp", json.dumps(message), content_type="application/json")
        result = response.json()["result"]
        assert not result["isError"], result
        return result["content"][0]["text"], result["structuredContent"]

    answers, _ = one_line_fix(call, page.public_id, body)
    steps = ["get_page_source (outline)"]
    steps += ["get_page_source (section)"] * (len(answers) - 2) + ["edit_page"]
    print(f"Page: {title!r}, {len(body):,} characters ({len(body) / 4:,.0f} tokens whole)")
    for step, text in zip(steps, answers, strict=True):
        print(f"  {step}: {len(text):,} characters, {len(text) / 4:,.0f} tokens")
    total = sum(len(text) for text in answers) / 4
    print(f"Tokens of a one-line fix: {total:,.0f} (budget {BUDGET_TOKENS:,})")


if __name__ == "__main__":
    main()
