"""Rendering costs work linear in what a writer types, whatever they type; and a version is
rendered once, not on every view (wiki.markdown_bounds, wiki.markdown._Rendered).

Nothing here times anything: the work is the number of Python lines the renderer runs
(sys.settrace), counted for a text and for the same text twice as long.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

import markdown
import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.conftest import HANDBOOK
from tests.fixtures_web import rest_client
from wiki import markdown as wiki_markdown
from wiki.markdown import render_markdown
from wiki.markdown_bounds import INLINE_MARKS, closers_of
from wiki.models import Page

# What a writer may type over and over: each family once cost time quadratic in its count.
REPEATED = {
    "brackets": "[",
    "image brackets": "![",
    "footnote marks": "[^",
    "double brackets": "[[",
    "empty links": "[](",
    "quoted link titles": "[a](b'",
    "references": "[a][",
    "unclosed tags": "<a ",
    "autolinks": "<http://a",
    "comments": "<!--",
    "stars": "*",
    "underscores": "_",
    "backticks": "`",
    "emphasis runs": "**a*",
    "quotes": "> ",
    "setext headings": "a\n=\n",
    "rules between lines": "a\n***\n",
    "headings": "# h\n",
    "footnote references": "x[^1] ",
    "list items": "1. a\n",
    "table rows": "x|y\n",
    "links": "[a](b)",
    "escapes": "\\",
}


def _lines_run(text: str) -> int:
    """How many lines of Python run while `text` is converted (a fresh converter each time,
    as render_markdown makes)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Callable[..., Any]:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        wiki_markdown._convert(text, {})
    finally:
        sys.settrace(None)
    return count


def _complete(text: str) -> str:
    """A table's rows under a header, footnote references after their footnote."""
    if text.startswith("x|"):
        return "a|b\n-|-\n" + text
    return "[^1]: note\n\n" + text if text.startswith("x[^1]") else text


@pytest.mark.parametrize("name", list(REPEATED))
def test_it_renders_in_work_linear_in_the_text(name: str) -> None:
    unit = REPEATED[name]
    count = 3000 // len(unit)
    once = _lines_run(_complete(unit * count))
    twice = _lines_run(_complete(unit * 2 * count))
    assert twice <= 2.2 * once, (name, once, twice)


# Shapes whose every match made Python-Markdown copy the whole paragraph again (a copy a count
# of Python lines does not see): up to 5.5 s for 200,000 characters of `[a](b)`.
COPIED = {
    **REPEATED,
    "images in text": "![a](b) ",
    "full references": "[a][b] ",
    "inline tags": "<b>",
    "entities": "&amp; ",
    "escaped stars": "\\* ",
    "line breaks": "a  \n",
    "page references": "[[pg_aaaaaaaa]] ",
    "underscore emphasis": "_a_ ",
    "nested emphasis": "*a **b ",
    "code spans": "`a` ",
    "autolinks closed": "<http://a> ",
    "paragraphs of links": "[a](b) " * 300 + "\n\n",
}


def _copied(text: str) -> int:
    """Characters of the texts the inline patterns were handed, each new text counted once
    (Python-Markdown hands the paragraph again, copied, after each match), and of the
    bracket tables."""
    md = wiki_markdown.converter({})
    handed: list[Any] = [0, None]
    for processor in md.inlinePatterns:

        def spy(match: Any, data: str, handle: Any = processor.handleMatch) -> Any:
            if data is not handed[1]:
                handed[0] += len(data)
                handed[1] = data
            return handle(match, data)

        processor.handleMatch = spy
    md.convert(text)
    return int(handed[0]) + sum(table.steps for table in closers_of(md))


@pytest.mark.parametrize("name", list(COPIED))
def test_it_copies_text_linear_in_the_text(name: str) -> None:
    unit = COPIED[name]
    count = max(1, 24_000 // len(unit))
    once = _copied(_complete(unit * count))
    twice = _copied(_complete(unit * 2 * count))
    assert twice <= 2.2 * once, (name, once, twice)


def test_it_shows_a_block_with_too_many_marks_as_written() -> None:
    marked = "[a](b) <i> " * (INLINE_MARKS // 2 + 1)
    html = render_markdown(f"# Links\n\n{marked}\n\nAfter [a](b).\n")
    assert html.count("<a ") == 1 and '<a href="b"' in html  # only after
    assert "[a](b) &lt;i&gt; [a](b)" in html
    assert ">Links</h1>" in html


SAMPLE = (
    "[a [nested] one](https://x.test/p(1) 'the title') ![pic](/m/p.png \"alt\") "
    '[ref][r] [r] [[not a link] [^1] [t](it\'s) [u](<a b> "t") [v](w "x)" y)\n\n'
    "[r]: /ref\n[^1]: note\n\n| one |\n|-----|\n| 1 |\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n"
    "Head\n===\ntext\n\n***\n\n# One\nline\n> quoted\n\n<b>bold</b> <a b\n\n"
    "[q](b'c (d e) f\n\nAgain[^1], again[^1] and again[^1].\n\na\n***\nb\n***\nc\n"
)


def _handbook() -> list[str]:
    return [path.read_text() for path in sorted(HANDBOOK.rglob("*.md"))]


@pytest.mark.parametrize("unit", ["[a](b)", "![a](b) ", "[a](b 'c') ", "[", "[](", "[a][b] "])
def test_it_builds_each_bracket_table_once_per_paragraph(unit: str) -> None:
    """The characters the tables read, which a regular expression's C loop would hide from
    a count of Python lines: once per paragraph, not once per link (a search for the next
    quote after each link made 200,000 characters of links take 40 seconds)."""

    def steps(text: str) -> int:
        md = wiki_markdown.converter({})
        md.convert(text)
        return sum(table.steps for table in closers_of(md))

    count = 6000 // len(unit)
    assert steps(unit * 2 * count) <= 2.2 * steps(unit * count)


def test_it_keeps_python_markdowns_output() -> None:
    texts = [SAMPLE, *_handbook()]
    assert len(texts) > 100
    for text in texts:
        ours = wiki_markdown.converter({}).convert(text)
        theirs = wiki_markdown.converter({}, linear=False).convert(text)
        assert ours == theirs, text[:200]


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Each text markdown converts (a spy: the conversion still runs)."""
    seen: list[str] = []
    convert = markdown.Markdown.convert

    def spy(self: markdown.Markdown, source: str) -> str:
        seen.append(source)
        return convert(self, source)

    monkeypatch.setattr(markdown.Markdown, "convert", spy)
    yield seen


def test_it_renders_a_live_page_once_for_the_web_and_rest(
    make_page: Callable[..., Page], reader: User, conversions: list[str]
) -> None:
    body = "Rendered once: " + "[" * 300 + "\n\n**kept**\n"
    page = make_page("Once", body)
    conversions.clear()
    web = Client()
    web.force_login(reader)
    api = rest_client(reader)
    for _ in range(3):
        assert "<strong>kept</strong>" in web.get(f"/p/{page.public_id}/").content.decode()
        assert "<strong>kept</strong>" in api.get(f"/api/v1/pages/{page.public_id}/").json()["html"]
    assert sum("Rendered once" in text for text in conversions) <= 2  # the view and REST


def test_it_renders_a_long_live_page_once_for_all_worker_processes(
    make_page: Callable[..., Page],
    reader: User,
    conversions: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 47: each worker process rendered a heavy page again; the shared cache keeps it."""
    body = "Heavy once: " + "[a](b) " * (wiki_markdown.SHARED_RENDER_CHARS // 7) + "\n\n**kept**\n"
    page = make_page("Heavy", body)
    conversions.clear()
    for _worker in range(3):
        # A fresh worker process: nothing rendered in its memory yet.
        monkeypatch.setattr(wiki_markdown, "_rendered", wiki_markdown._Rendered(10_000_000))
        web = Client()
        web.force_login(reader)
        assert "<strong>kept</strong>" in web.get(f"/p/{page.public_id}/").content.decode()
        html = rest_client(reader).get(f"/api/v1/pages/{page.public_id}/").json()["html"]
        assert "<strong>kept</strong>" in html
    assert sum("Heavy once" in text for text in conversions) <= 2  # the view and REST


def test_it_renders_again_for_a_reader_who_sees_other_titles(
    make_page: Callable[..., Page], conversions: list[str]
) -> None:
    target = make_page("Target")
    first = render_markdown(f"See [[{target.public_id}]].")
    Page.objects.filter(pk=target.pk).update(title="Renamed")
    second = render_markdown(f"See [[{target.public_id}]].")
    assert ">Target</a>" in first and ">Renamed</a>" in second


@pytest.mark.parametrize("marker", ["- ", "1. "])
def test_it_renders_lists_nested_past_the_recursion_limit(
    marker: str, client: Client, reader: User
) -> None:
    text = "".join("    " * depth + f"{marker}level {depth}\n" for depth in range(310))
    assert len(text) < 200_000  # a page Quire accepts
    client.force_login(reader)
    answer = client.post("/preview/", {"body": text, "title": "Deep"})
    assert answer.status_code == 200
    html = answer.content.decode()
    assert "level 0" in html and "level 309" in html
