"""Markdown rendering: the extensions Quire turns on and its `[[pg_...]]` page references."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wiki.markdown import file_references, page_references, render_markdown
from wiki.models import Page


def test_it_renders_tables_with_alignment() -> None:
    html = render_markdown("| name | size |\n|:-----|-----:|\n| a | 1 |\n")
    assert "<table>" in html
    assert '<th align="left" dir="auto">name</th>' in html
    assert '<td align="right" dir="auto">1</td>' in html


def test_it_renders_task_lists_as_ticked_and_unticked_boxes() -> None:
    html = render_markdown("- [ ] write the **runbook**\n- [x] page on-call\n- plain item\n")
    assert '<ul class="task-list">' in html
    assert (
        '<li class="task" dir="auto"><span class="task-box">\u2610</span> write the <strong>'
        "runbook" in html
    )
    assert (
        '<li class="task" dir="auto"><span class="task-box task-done">\u2611</span> page on-call'
        "</li>" in html
    )
    assert '<li dir="auto">plain item</li>' in html and "[ ]" not in html
    # Loose lists too; an ordered list, code and a bracket later in the line stay as written.
    loose = render_markdown("- [ ] one\n\n- [X] two\n")
    assert '<p dir="auto"><span class="task-box task-done">\u2611</span> two</p>' in loose
    assert "[ ] first" in render_markdown("1. [ ] first\n")
    assert "a [ ] b" in render_markdown("- a [ ] b\n")
    # No form field gets through, whatever a writer puts in raw HTML.
    assert "<input" not in render_markdown('<input type="text"> <input type="checkbox">\n')


def test_it_renders_fenced_code_with_a_language_class() -> None:
    html = render_markdown("```python\nx = 1 < 2\n```\n")
    assert '<pre><code class="language-python">x = 1 &lt; 2\n</code></pre>' in html


def test_it_renders_footnotes() -> None:
    html = render_markdown("A claim.[^src]\n\n[^src]: The source.\n")
    assert '<sup id="fnref:src"><a class="footnote-ref" href="#fn:src"' in html
    assert '<li dir="auto" id="fn:src">' in html
    assert "The source." in html


def test_it_gives_headings_ids_and_a_table_of_contents() -> None:
    html = render_markdown("[TOC]\n\n# Getting started\n\n## Install it\n")
    assert '<h1 dir="auto" id="getting-started">Getting started</h1>' in html
    assert '<h2 dir="auto" id="install-it">Install it</h2>' in html
    assert '<div class="toc">' in html and 'href="#install-it"' in html


def test_it_keeps_sane_lists_apart() -> None:
    html = render_markdown("1. one\n2. two\n\n* a\n* b\n")
    assert "<ol>" in html and "<ul>" in html


def test_it_resolves_page_references_to_titles_in_one_query(
    make_page: Callable[..., Page], django_assert_num_queries: Any
) -> None:
    slack = make_page("Slack <channels>")
    email = make_page("Email")
    text = f"See [[{slack.public_id}]], [[{email.public_id}]] and [[{slack.public_id}]] again."
    with django_assert_num_queries(1):
        html = render_markdown(text)
    assert (
        f'<a class="page-link" href="/p/{slack.public_id}/" rel="noopener noreferrer nofollow">'
        "Slack &lt;channels&gt;</a>"
    ) in html
    assert f'<a class="page-link" href="/p/{email.public_id}/"' in html


def test_it_marks_references_to_unknown_pages_as_broken(
    make_page: Callable[..., Page], django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(1):
        html = render_markdown("Gone: [[pg_zzzzzzzz]].")
    assert '<span class="broken-link" title="No such page">pg_zzzzzzzz</span>' in html
    assert "<a" not in html


def test_it_marks_references_to_archived_pages_as_broken(
    make_page: Callable[..., Page], editor: Any
) -> None:
    from wiki import services

    page = make_page("Old policy")
    services.page_archive(actor=editor, page=page)
    html = render_markdown(f"[[{page.public_id}]]")
    assert 'class="broken-link"' in html and "Old policy" not in html


def test_it_asks_the_database_nothing_without_references(
    db: Any, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0):
        render_markdown("Plain *text* with [a link](https://example.com).")


def test_it_leaves_references_in_code_literal(make_page: Callable[..., Page]) -> None:
    page = make_page("Target")
    html = render_markdown(f"`[[{page.public_id}]]`")
    assert f"<code>[[{page.public_id}]]</code>" in html


def test_it_renders_file_references_as_spans() -> None:
    html = render_markdown("Read [[file:price list.pdf]] first.")
    assert '<span class="file-ref">price list.pdf</span>' in html


def test_it_lists_page_and_file_references_in_order_once() -> None:
    text = "[[pg_bbbbbbbb]] [[pg_aaaaaaaa]] [[pg_bbbbbbbb]] [[pg_short]] "
    text += "[[file:a.pdf]] [[file:b.csv]]"
    assert page_references(text) == ["pg_bbbbbbbb", "pg_aaaaaaaa"]
    assert file_references(text) == ["a.pdf", "b.csv"]


def test_it_drops_classes_that_quire_does_not_produce() -> None:
    html = render_markdown('<span class="btn btn-primary">Approve</span>')
    assert html == '<p dir="auto"><span>Approve</span></p>'


def test_it_drops_a_first_heading_that_repeats_the_title_only() -> None:
    from wiki.markdown import without_leading_title

    assert without_leading_title("# Refunds\n\nFive days.\n", "refunds") == "\nFive days.\n"
    assert without_leading_title("# Returns\n\nFive days.\n", "Refunds").startswith("# Returns")
    assert without_leading_title("Intro\n# Refunds\n", "Refunds").startswith("Intro")
